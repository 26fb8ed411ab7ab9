import postgres from 'postgres';
import { PoolMonitor, registerPoolMonitor } from '../platform/core/postgres-pool';
import { guardQueries } from './query-guard';
import { postgresSocketFactory } from '../platform/core/postgres-watchdog';
import { dateTimeTypes } from './kit/timestamps';

export type Sql = postgres.Sql;
/** A pool or a transaction: what query functions accept, so they compose inside `sql.begin`. */
export type Db = postgres.Sql | postgres.TransactionSql;
export type Queryable = Db;

/** How long the pool waits on Postgres, in milliseconds (platform/core/config.ts has the same defaults). */
export interface DatabaseTimeouts {
  connectMs: number;
  /** Server side: a statement running longer is canceled (SQLSTATE 57014). */
  statementMs: number;
  /** Server side: a transaction whose client stays silent this long is ended with its session. */
  idleInTransactionMs: number;
  /** Client side: a connection whose server owes an answer and sends nothing this long is closed. */
  responseMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 5000,
  statementMs: 10_000,
  idleInTransactionMs: 15_000,
  responseMs: 12_000,
};

/** The DATABASE_* timeouts of a config. */
export const databaseTimeouts = (config: {
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number;
  DATABASE_RESPONSE_TIMEOUT_MS: number;
}): DatabaseTimeouts => ({
  connectMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  statementMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  idleInTransactionMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  responseMs: config.DATABASE_RESPONSE_TIMEOUT_MS,
});

/**
 * The one postgres.js pool of a process. Rows keep the database's snake_case names, as the API does.
 * Every wait is bounded: connecting, each statement, a transaction left idle, and a server that stops
 * answering. A connection that failed is dropped and replaced on next use, with a reconnect backoff
 * capped at one second so the pool serves again as soon as the server is back. Queries go through
 * `guardQueries` (db/query-guard.ts): none is sent for a request past its deadline, or for a transaction
 * whose connection closed under it.
 */
export function createSql(url: string, max = 10, timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS): Sql {
  // The monitor sees how each connection is used: a request past its deadline loses the connections it
  // holds (api/middleware/deadlines.ts), and `/health` warns while every connection stays busy.
  const monitor = new PoolMonitor(max);
  // `socket` is a documented option of postgres.js that its type declarations leave out.
  const socket = postgresSocketFactory(timeouts.responseMs, undefined, monitor);
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    // Dates and timestamps are read exactly whatever their year, and always renderable (db/kit/timestamps.ts).
    types: dateTimeTypes,
    connect_timeout: timeouts.connectMs / 1000,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    ...({ socket } as object),
    connection: {
      application_name: 'voice-crm',
      statement_timeout: timeouts.statementMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    },
  });
  const guarded = guardQueries(sql);
  registerPoolMonitor(guarded, monitor);
  return guarded;
}

/** A LIKE/ILIKE pattern matching the term anywhere, with `%`, `_` and `\` in it taken literally. */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
