import postgres from 'postgres';
import { NAME_PATTERN, type PropertyDeclaration, type PropertyType } from '../domain/custom-data';
import { invalid } from '../domain/errors';
import type { Db } from './client';
import { copyIn } from './copy-in';

type Json = Parameters<Db['json']>[0];

export interface TableRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  key_properties: string[];
  properties: PropertyDeclaration[];
  view_schema: string;
  view_name: string;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface TableCounts {
  live_rows: number;
  tombstoned_rows: number;
}

export interface DataRow {
  key: string;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  tombstoned_at: Date | null;
}

export async function listTables(
  db: Db,
  orgId: string,
  page: { limit: number; after?: string },
): Promise<{ rows: TableRow[]; total: number }> {
  const after = page.after ? db`AND name > ${page.after}` : db``;
  const rows = await db<TableRow[]>`
    SELECT * FROM custom_data_tables WHERE org_id = ${orgId} ${after} ORDER BY name LIMIT ${page.limit + 1}`;
  const [count] = await db<{ total: number }[]>`SELECT count(*)::int AS total FROM custom_data_tables WHERE org_id = ${orgId}`;
  return { rows, total: count!.total };
}

export async function getTable(db: Db, orgId: string, name: string, options: { lock?: boolean } = {}): Promise<TableRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE` : db``;
  const [row]: [TableRow?] = await db`SELECT * FROM custom_data_tables WHERE org_id = ${orgId} AND name = ${name} ${lock}`;
  return row;
}

export async function countRows(db: Db, orgId: string, tableId: string): Promise<TableCounts> {
  const [row] = await db<TableCounts[]>`
    SELECT count(*) FILTER (WHERE tombstoned_at IS NULL)::int AS live_rows, count(*) FILTER (WHERE tombstoned_at IS NOT NULL)::int AS tombstoned_rows
    FROM custom_data_rows WHERE org_id = ${orgId} AND table_id = ${tableId}`;
  return row!;
}

export async function hasRows(db: Db, orgId: string, tableId: string): Promise<boolean> {
  const [row] = await db<
    { found: boolean }[]
  >`SELECT EXISTS (SELECT 1 FROM custom_data_rows WHERE org_id = ${orgId} AND table_id = ${tableId}) AS found`;
  return row!.found;
}

export interface TableFields {
  description: string;
  key_properties: string[];
  properties: PropertyDeclaration[];
}

export async function upsertTable(
  db: Db,
  orgId: string,
  id: string,
  name: string,
  fields: TableFields,
  view: { schema: string; name: string },
  actor: string,
): Promise<TableRow> {
  const [row]: [TableRow?] = await db`
    INSERT INTO custom_data_tables (id, org_id, name, description, key_properties, properties, view_schema, view_name, created_by, modified_by)
    VALUES (${id}, ${orgId}, ${name}, ${fields.description}, ${fields.key_properties}, ${db.json(fields.properties as unknown as Json)},
      ${view.schema}, ${view.name}, ${actor}, ${actor})
    ON CONFLICT (org_id, name) DO UPDATE SET description = EXCLUDED.description, key_properties = EXCLUDED.key_properties,
      properties = EXCLUDED.properties, modified_by = EXCLUDED.modified_by, updated_at = now()
    RETURNING *`;
  return row!;
}

export async function deleteTable(db: Db, orgId: string, name: string): Promise<TableRow | undefined> {
  const [row]: [TableRow?] = await db`DELETE FROM custom_data_tables WHERE org_id = ${orgId} AND name = ${name} RETURNING *`;
  return row;
}

export async function listRows(
  db: Db,
  orgId: string,
  tableId: string,
  filter: { state: 'live' | 'tombstoned' | 'all'; limit: number; after?: string },
): Promise<{ rows: DataRow[]; total: number }> {
  const state =
    filter.state === 'live' ? db`AND tombstoned_at IS NULL` : filter.state === 'tombstoned' ? db`AND tombstoned_at IS NOT NULL` : db``;
  const after = filter.after !== undefined ? db`AND key COLLATE "C" > ${filter.after}` : db``;
  const rows = await db<DataRow[]>`
    SELECT key, data, created_at, updated_at, tombstoned_at FROM custom_data_rows
    WHERE org_id = ${orgId} AND table_id = ${tableId} ${state} ${after} ORDER BY key COLLATE "C" LIMIT ${filter.limit + 1}`;
  const [count] = await db<{ total: number }[]>`
    SELECT count(*)::int AS total FROM custom_data_rows WHERE org_id = ${orgId} AND table_id = ${tableId} ${state}`;
  return { rows, total: count!.total };
}

// --- The typed view ---------------------------------------------------------------------------------

const ident = (name: string): string => {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a safe identifier: ${name}`);
  return `"${name}"`;
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uuidLiteral = (id: string): string => {
  if (!UUID.test(id)) throw new Error(`not a uuid: ${id}`);
  return `'${id}'::uuid`;
};
const TIMESTAMP_SQL = `'^\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}(:?\\d{2})?)$'`;

/** A column expression that reads a property as its declared type, and null when the stored value is not of it. */
function columnOf(property: string, type: PropertyType): string {
  const v = `data -> '${property}'`;
  const t = `data ->> '${property}'`;
  switch (type) {
    case 'string':
      return `CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${t} END`;
    case 'number':
      return `CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${t})::numeric END`;
    case 'integer':
      return `CASE WHEN jsonb_typeof(${v}) = 'number' AND ${t} ~ '^-?[0-9]{1,18}$' THEN (${t})::bigint END`;
    case 'boolean':
      return `CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${t})::boolean END`;
    case 'timestamp':
      return `CASE WHEN jsonb_typeof(${v}) = 'string' AND ${t} ~ ${TIMESTAMP_SQL} AND pg_input_is_valid(${t}, 'timestamptz') THEN (${t})::timestamptz END`;
    case 'json':
      return v;
  }
}

/**
 * (Re)creates the view of a table's live rows with one typed column per declared property, plus
 * _created_at and _updated_at. DDL takes no parameters, so it is composed here from names checked
 * against NAME_PATTERN and our own uuids only. security_invoker: the reader's row-level security applies.
 */
export async function replaceView(db: Db, orgId: string, table: TableRow): Promise<void> {
  for (const p of table.properties) if (!NAME_PATTERN.test(p.name)) throw new Error(`not a property name: ${p.name}`);
  const schema = ident(table.view_schema);
  const view = `${schema}.${ident(table.view_name)}`;
  const columns = table.properties.map((p) => `${columnOf(p.name, p.type)} AS ${ident(p.name)}`);
  columns.push('created_at AS _created_at', 'updated_at AS _updated_at');
  // Two first tables of one organization must not race to create its schema.
  await db`SELECT pg_advisory_xact_lock(hashtextextended(${table.view_schema}, 0))`;
  await db.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await db.unsafe(`DROP VIEW IF EXISTS ${view}`);
  await db.unsafe(
    `CREATE VIEW ${view} WITH (security_invoker = true) AS SELECT ${columns.join(', ')} FROM public.custom_data_rows ` +
      `WHERE table_id = ${uuidLiteral(table.id)} AND org_id = ${uuidLiteral(orgId)} AND tombstoned_at IS NULL`,
  );
}

export async function dropView(db: Db, _orgId: string, table: Pick<TableRow, 'view_schema' | 'view_name'>): Promise<void> {
  await db.unsafe(`DROP VIEW IF EXISTS ${ident(table.view_schema)}.${ident(table.view_name)}`);
}

// --- Snapshot writes --------------------------------------------------------------------------------

/** COPY text format: JSON never holds raw tabs or newlines, so doubling backslashes is the only escape. */
const copyField = (text: string) => text.replace(/\\/g, '\\\\');

/**
 * Stages rows in a temporary table with COPY (inside the caller's transaction, dropped at its end).
 * `rows` yields [key, JSON text of the row]. A row Postgres refuses (SQLSTATE class 22: a character
 * jsonb cannot hold) is a 400 naming no row, and the caller's transaction rolls back: nothing is written.
 */
export async function stageRows(db: Db, _orgId: string, rows: Iterable<[string, string]>): Promise<void> {
  await db`CREATE TEMP TABLE custom_data_stage (ord bigint GENERATED ALWAYS AS IDENTITY, key text NOT NULL, data jsonb NOT NULL) ON COMMIT DROP`;
  try {
    await copyIn(db`COPY custom_data_stage (key, data) FROM STDIN`, copyLines(rows));
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.code.startsWith('22'))
      throw invalid('A value cannot be stored (e.g. the character \\u0000 or a lone UTF-16 surrogate); nothing was written');
    throw error;
  }
  await db`ANALYZE custom_data_stage`;
}

function* copyLines(rows: Iterable<[string, string]>): Generator<string> {
  for (const [key, json] of rows) yield `${copyField(key)}\t${copyField(json)}\n`;
}

export async function countLive(db: Db, orgId: string, tableId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM custom_data_rows WHERE org_id = ${orgId} AND table_id = ${tableId} AND tombstoned_at IS NULL`;
  return row!.n;
}

/** Staged rows merged per statement: each statement stays far inside DATABASE_STATEMENT_TIMEOUT_MS on a busy machine. */
const MERGE_CHUNK_ROWS = 10_000;

/**
 * Merges the `staged` staged rows: changed or tombstoned rows of staged keys are rewritten (and revived),
 * new keys inserted, identical live rows left alone, MERGE_CHUNK_ROWS staged rows per statement. Plain
 * UPDATE and INSERT (no ON CONFLICT): the caller holds the table's row, so no other write of this table
 * runs meanwhile. Returns how many rows were written.
 */
export async function mergeStaged(db: Db, orgId: string, tableId: string, staged: number): Promise<number> {
  let written = 0;
  for (let from = 0; from < staged; from += MERGE_CHUNK_ROWS) {
    const to = from + MERGE_CHUNK_ROWS;
    const updated = await db`
      UPDATE custom_data_rows r SET data = s.data, tombstoned_at = NULL, updated_at = now()
      FROM custom_data_stage s
      WHERE s.ord > ${from} AND s.ord <= ${to}
        AND r.table_id = ${tableId} AND r.org_id = ${orgId} AND r.key = s.key
        AND (r.tombstoned_at IS NOT NULL OR r.data <> s.data)`;
    const inserted = await db`
      INSERT INTO custom_data_rows (table_id, key, org_id, data)
      SELECT ${tableId}::uuid, s.key, ${orgId}::uuid, s.data FROM custom_data_stage s
      WHERE s.ord > ${from} AND s.ord <= ${to}
        AND NOT EXISTS (SELECT 1 FROM custom_data_rows r WHERE r.table_id = ${tableId} AND r.key = s.key)`;
    written += updated.count + inserted.count;
  }
  return written;
}

/** Tombstones the table's live rows whose key the staged snapshot lacks; returns how many. */
export async function tombstoneAbsent(db: Db, orgId: string, tableId: string): Promise<number> {
  const result = await db`
    UPDATE custom_data_rows r SET tombstoned_at = now(), updated_at = now()
    WHERE r.org_id = ${orgId} AND r.table_id = ${tableId} AND r.tombstoned_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM custom_data_stage s WHERE s.key = r.key)`;
  return result.count;
}
