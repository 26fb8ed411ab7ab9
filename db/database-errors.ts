import postgres from 'postgres';
import { PG } from './pg-errors';
import { DATABASE_RESPONSE_TIMEOUT, DATABASE_UNREACHABLE } from '../platform/core/postgres-watchdog';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  DATABASE_RESPONSE_TIMEOUT, // the watchdog closed a connection whose server stopped answering
  DATABASE_UNREACHABLE, // refused at once after a failed attempt (platform/core/postgres-watchdog.ts)
]);

/** The server's own limits: statement_timeout and idle_in_transaction_session_timeout. */
const TIMEOUT_CODES = new Set<string>([PG.QUERY_CANCELED, PG.IDLE_IN_TRANSACTION_SESSION_TIMEOUT]);

/**
 * The database could not be reached, refused the connection or did not answer within its bounds: the
 * spec's 502 for an upstream failure.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (CONNECTION_CODES.has(code)) return true;
  // SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown), 53300 (too many connections).
  return (
    error instanceof postgres.PostgresError &&
    (code.startsWith('08') || code.startsWith('57P') || code === '53300' || TIMEOUT_CODES.has(code))
  );
}

/**
 * A value the schema let through but Postgres cannot hold (SQLSTATE class 22: a NUL character, an
 * integer or date out of range, a malformed cursor value): the caller's input, so the API answers 422.
 */
export function invalidValue(error: unknown): { sqlstate: string; message: string } | undefined {
  if (!(error instanceof postgres.PostgresError) || !error.code.startsWith('22')) return undefined;
  return { sqlstate: error.code, message: error.message };
}
