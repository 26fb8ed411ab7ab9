import * as db from '../../db/analytics-assistant';
import { wrapStatement } from '../../domain/analytics-assistant';
import { invalid, upstream } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import { checkSql, refusal } from './guard';
import { allowlistOf, isCustomView, readableSchema } from './schema';

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
}

type Deps = Pick<ServiceDeps, 'sql' | 'config'>;

/** POST /analytics-assistant/query: the guard, then the reader role; a refusal or a database error is a 400. */
export async function runQuery(deps: Deps, orgId: string, sql: string): Promise<QueryResult> {
  const outcome = await attemptQuery(deps, orgId, sql);
  if (!outcome.ok) throw outcome.error;
  return outcome.result;
}

export type Attempt = { ok: true; result: QueryResult } | { ok: false; error: ReturnType<typeof invalid> };

/**
 * One attempt, as the assistant loop also makes it: a refusal or an error the statement caused comes
 * back as a value (the model may try again); a failing database throws.
 */
export async function attemptQuery(deps: Deps, orgId: string, sql: string): Promise<Attempt> {
  const relations = await readableSchema(deps, orgId);
  const checked = await checkSql(sql, allowlistOf(relations));
  if (!checked.ok) return { ok: false, error: refusal(checked) };
  const custom = checked.relations.filter(isCustomView).map((q) => {
    const [schema, name] = q.split('.') as [string, string];
    return { schema, name };
  });
  if (custom.length > 0) await db.grantCustomViews(deps.sql, custom);
  try {
    return { ok: true, result: await runStatement(deps, orgId, checked.statement) };
  } catch (error) {
    const refused = statementError(error, deps.config.ANALYTICS_STATEMENT_TIMEOUT_MS);
    if (refused) return { ok: false, error: refused };
    throw error;
  }
}

/**
 * Runs an already checked statement as analytics_reader, wrapped in LIMIT (one row more than the cap, to
 * know it was cut) and cut again at ANALYTICS_MAX_RESULT_BYTES. Exported for the tests that switch the guard off.
 */
export async function runStatement(deps: Deps, orgId: string, statement: string): Promise<QueryResult> {
  const { config } = deps;
  const token = await db.orgToken(deps.sql, orgId);
  const wrapped = wrapStatement(statement, config.ANALYTICS_MAX_ROWS + 1);
  const limits = { statementTimeoutMs: config.ANALYTICS_STATEMENT_TIMEOUT_MS, lockTimeoutMs: config.ANALYTICS_LOCK_TIMEOUT_MS };
  const raw = await withReader(deps, (reader) => db.runAsReader(reader, orgId, token, wrapped, limits));
  const names = await db.typeNamesOf(
    deps.sql,
    raw.columns.map((c) => c.type),
  );
  let truncated = raw.rows.length > config.ANALYTICS_MAX_ROWS;
  const rows: unknown[][] = [];
  let bytes = 0;
  for (const row of raw.rows.slice(0, config.ANALYTICS_MAX_ROWS)) {
    const values = row.map(jsonValue);
    bytes += Buffer.byteLength(JSON.stringify(values));
    if (bytes > config.ANALYTICS_MAX_RESULT_BYTES) {
      truncated = true;
      break;
    }
    rows.push(values);
  }
  return {
    columns: raw.columns.map((c) => ({ name: c.name, type: names.get(c.type) ?? `oid ${c.type}` })),
    rows,
    row_count: rows.length,
    truncated,
  };
}

/** Runs with the reader pool; without ANALYTICS_DATABASE_URL a refused login sets the derived password once (first start). */
async function withReader<T>(deps: Deps, run: (reader: ReturnType<typeof db.readerPool>) => Promise<T>): Promise<T> {
  const reader = db.readerPool(deps.config);
  try {
    return await run(reader);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '28P01' && (await db.setDerivedReaderPassword(deps.sql, deps.config))) return retryAfterRefusedLogin(() => run(reader));
    if (code === '28P01' || code === '28000' || code === 'ECONNREFUSED' || code === 'CONNECT_TIMEOUT') {
      throw upstream('The analytics database role could not connect (see ANALYTICS_DATABASE_URL)');
    }
    throw error;
  }
}

/** The pool fails new attempts at once for a second after a failed one (platform/core/postgres-watchdog.ts): wait that out. */
async function retryAfterRefusedLogin<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== 'DATABASE_UNREACHABLE' || attempt >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** JSON for a column value: dates as ISO 8601, bytes as Postgres hex, big integers as text. */
function jsonValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonValue);
  return value;
}

// SQLSTATE classes a statement itself causes: data exceptions, syntax and access, unsupported features,
// read-only or resource limits of the transaction, a canceled statement.
const STATEMENT_CLASSES = new Set(['0A', '21', '22', '25', '2F', '42', '53', '54', '55']);

function statementError(error: unknown, timeoutMs: number) {
  const { code, message } = error as { code?: string; message?: string };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  if (code === '57014') return invalid(`The statement ran past its ${timeoutMs} ms limit and was canceled`);
  if (!STATEMENT_CLASSES.has(code.slice(0, 2))) return undefined;
  return invalid(`The database refused the statement: ${message} (SQLSTATE ${code})`);
}
