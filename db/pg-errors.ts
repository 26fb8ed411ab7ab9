/** Postgres SQLSTATE codes the service reacts to, by name (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const PG = {
  UNIQUE_VIOLATION: '23505',
  FOREIGN_KEY_VIOLATION: '23503',
  CHECK_VIOLATION: '23514',
  NOT_NULL_VIOLATION: '23502',
  EXCLUSION_VIOLATION: '23P01',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  LOCK_NOT_AVAILABLE: '55P03',
  QUERY_CANCELED: '57014',
  IDLE_IN_TRANSACTION_SESSION_TIMEOUT: '25P03',
  UNDEFINED_TABLE: '42P01',
  UNTRANSLATABLE_CHARACTER: '22P05',
} as const;

export type PgCode = (typeof PG)[keyof typeof PG];

/** True when `error` is a Postgres error with this SQLSTATE. */
export const isPgError = (error: unknown, code: PgCode): boolean => (error as { code?: string } | null)?.code === code;
