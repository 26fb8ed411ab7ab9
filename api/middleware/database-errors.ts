import postgres from 'postgres';
import { PG } from '../../db/pg-errors';
import { DATABASE_RESPONSE_TIMEOUT, DATABASE_UNREACHABLE } from '../../platform/postgres-watchdog';
import type { ValidationIssue } from '../errors';

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
  DATABASE_UNREACHABLE, // refused at once after a failed attempt (platform/postgres-watchdog.ts)
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
 * integer or date out of range, a malformed cursor value). It is the caller's input, so a 422.
 */
export function invalidValueIssue(error: unknown, method: string): ValidationIssue | undefined {
  if (!(error instanceof postgres.PostgresError) || !error.code.startsWith('22')) return undefined;
  return {
    type: 'value_error',
    loc: [method === 'GET' || method === 'DELETE' ? 'query' : 'body'],
    msg: `Value not accepted: ${error.message}`,
    input: null,
    ctx: { sqlstate: error.code },
  };
}
