import crypto from 'node:crypto';
import type postgres from 'postgres';
import { DEFAULT_SCHEMA } from '../domain/analytics-assistant';
import { type Config, requireDatabaseUrl } from '../platform/core/config';
import { type Db, type Sql, createSql, databaseTimeouts } from './client';

/** The login role of the Analytics Assistant (db/migrations/0033_analytics_assistant.sql). */
export const READER_ROLE = 'analytics_reader';

type ReaderConfig = Pick<
  Config,
  | 'DATABASE_URL'
  | 'ANALYTICS_DATABASE_URL'
  | 'ANALYTICS_POOL_MAX'
  | 'ANALYTICS_STATEMENT_TIMEOUT_MS'
  | 'DATABASE_CONNECT_TIMEOUT_MS'
  | 'DATABASE_STATEMENT_TIMEOUT_MS'
  | 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS'
  | 'DATABASE_RESPONSE_TIMEOUT_MS'
>;

/** Without ANALYTICS_DATABASE_URL: the service's own server and database, as analytics_reader with a password derived from the owner's. */
export function derivedReaderPassword(ownerPassword: string): string {
  return crypto
    .createHmac('sha256', ownerPassword || 'no-password')
    .update(READER_ROLE)
    .digest('hex');
}

export function readerUrl(config: Pick<Config, 'DATABASE_URL' | 'ANALYTICS_DATABASE_URL'>): string {
  if (config.ANALYTICS_DATABASE_URL) return config.ANALYTICS_DATABASE_URL;
  const url = new URL(requireDatabaseUrl(config));
  url.password = derivedReaderPassword(decodeURIComponent(url.password));
  url.username = READER_ROLE;
  return url.toString();
}

/**
 * Gives analytics_reader the derived password (embedded Postgres, tests). Only without
 * ANALYTICS_DATABASE_URL: in production the operator creates the role's password (README).
 */
export async function setDerivedReaderPassword(
  owner: Db,
  config: Pick<Config, 'DATABASE_URL' | 'ANALYTICS_DATABASE_URL'>,
): Promise<boolean> {
  if (config.ANALYTICS_DATABASE_URL) return false;
  const password = derivedReaderPassword(decodeURIComponent(new URL(requireDatabaseUrl(config)).password));
  // DDL takes no parameters; the password is hex by construction.
  if (!/^[0-9a-f]{64}$/.test(password)) throw new Error('unexpected password shape');
  await owner.unsafe(`ALTER ROLE ${READER_ROLE} PASSWORD '${password}'`);
  return true;
}

const pools = new Map<string, Sql>();

/** One pool per process and reader URL; its connections see only what analytics_reader may. */
export function readerPool(config: ReaderConfig): Sql {
  const url = readerUrl(config);
  let pool = pools.get(url);
  if (!pool) {
    const timeouts = databaseTimeouts(config);
    // The statement limit is set per transaction; the watchdog must outwait it.
    const responseMs = Math.max(timeouts.responseMs, config.ANALYTICS_STATEMENT_TIMEOUT_MS + 2000);
    pool = createSql(url, config.ANALYTICS_POOL_MAX, { ...timeouts, responseMs });
    pools.set(url, pool);
  }
  return pool;
}

/** Closes the reader pools (tests, shutdown). */
export async function closeReaderPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((pool) => pool.end({ timeout: 1 })));
}

// --- The signed organization ---------------------------------------------------------------------------

const tokens = new Map<string, string>();

/** The transaction-local proof of the organization (analytics_private.org_token), read with the owner's role. */
export async function orgToken(owner: Db, orgId: string): Promise<string> {
  const known = tokens.get(orgId);
  if (known) return known;
  const [row]: [{ token: string }?] = await owner`SELECT analytics_private.org_token(${orgId}::uuid) AS token`;
  if (tokens.size > 10_000) tokens.clear();
  tokens.set(orgId, row!.token);
  return row!.token;
}

// --- The catalog of readable relations -----------------------------------------------------------------

export interface ColumnRow {
  schema: string;
  relation: string;
  relation_description: string | null;
  column: string;
  type: string;
  description: string | null;
}

/** The analytics views' columns, with their comments, in declaration order. */
export async function analyticsColumns(db: Db): Promise<ColumnRow[]> {
  return db<ColumnRow[]>`
    SELECT n.nspname AS schema, c.relname AS relation, obj_description(c.oid, 'pg_class') AS relation_description,
           a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, col_description(c.oid, a.attnum) AS description
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = ${DEFAULT_SCHEMA} AND c.relkind = 'v'
    ORDER BY c.relname, a.attnum`;
}

export interface CustomViewRow {
  name: string;
  description: string;
  view_schema: string;
  view_name: string;
  properties: { name: string; type: string; description?: string }[];
  columns: { name: string; type: string }[] | null;
}

/** The organization's custom-data tables with the columns of their typed views. */
export async function customViews(db: Db, orgId: string): Promise<CustomViewRow[]> {
  return db<CustomViewRow[]>`
    SELECT t.name, t.description, t.view_schema, t.view_name, t.properties,
      (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod)) ORDER BY a.attnum)
         FROM pg_attribute a
         WHERE a.attrelid = to_regclass(quote_ident(t.view_schema) || '.' || quote_ident(t.view_name)) AND a.attnum > 0 AND NOT a.attisdropped) AS columns
    FROM custom_data_tables t WHERE t.org_id = ${orgId} ORDER BY t.name`;
}

const IDENT = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Lets analytics_reader read these custom-data views of the organization. A view is re-created by each
 * schema change of its table (losing its grants), so the grant is checked before every query naming it.
 */
export async function grantCustomViews(owner: Db, views: { schema: string; name: string }[]): Promise<void> {
  for (const view of views) {
    if (!IDENT.test(view.schema) || !IDENT.test(view.name)) throw new Error(`not a safe identifier: ${view.schema}.${view.name}`);
    const qualified = `"${view.schema}"."${view.name}"`;
    const [granted]: [{ ok: boolean }?] = await owner`
      SELECT has_schema_privilege(${READER_ROLE}, ${view.schema}, 'USAGE') AND has_table_privilege(${READER_ROLE}, ${qualified}, 'SELECT') AS ok`;
    if (granted?.ok) continue;
    await owner.unsafe(`GRANT USAGE ON SCHEMA "${view.schema}" TO ${READER_ROLE}; GRANT SELECT ON ${qualified} TO ${READER_ROLE}`);
  }
}

// --- Running a statement as the reader ------------------------------------------------------------------

export interface ReaderLimits {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

export interface RawResult {
  columns: { name: string; type: number }[];
  rows: unknown[][];
}

/**
 * Runs one statement in a READ ONLY transaction of the reader pool, with the statement and lock
 * limits, the search path and the organization (its id and its signed token) set for this transaction
 * only. Whatever the statement is, the role's grants and row-level security decide what it sees.
 */
export async function runAsReader(reader: Sql, orgId: string, token: string, statement: string, limits: ReaderLimits): Promise<RawResult> {
  return reader.begin('read only', async (tx) => {
    await tx`
      SELECT set_config('statement_timeout', ${String(limits.statementTimeoutMs)}, true),
             set_config('lock_timeout', ${String(limits.lockTimeoutMs)}, true),
             set_config('idle_in_transaction_session_timeout', ${String(limits.statementTimeoutMs + 5000)}, true),
             set_config('search_path', ${`${DEFAULT_SCHEMA}, pg_catalog`}, true),
             set_config('app.org_id', ${orgId}, true),
             set_config('analytics.org_token', ${token}, true)`;
    // Unprepared: each question's text is new, a per-connection statement cache would only grow.
    const result = (await tx.unsafe(statement, [], { prepare: false }).values()) as unknown as postgres.RowList<unknown[][]>;
    const columns = (result.columns ?? []).map((c) => ({ name: c.name, type: c.type }));
    return { columns, rows: [...result] };
  }) as Promise<RawResult>;
}

const typeNames = new Map<number, string>();

/** Type names of result column OIDs (format_type), cached per process. */
export async function typeNamesOf(db: Db, oids: number[]): Promise<Map<number, string>> {
  const missing = [...new Set(oids)].filter((oid) => !typeNames.has(oid));
  if (missing.length > 0) {
    const rows = await db<
      { oid: number; name: string }[]
    >`SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_type WHERE oid = ANY(${missing}::oid[])`;
    for (const row of rows) typeNames.set(row.oid, row.name);
  }
  return typeNames;
}
