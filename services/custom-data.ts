import * as tables from '../db/custom-data';
import type { TableRow } from '../db/custom-data';
import { conflict, invalid, notFound, unprocessable } from '../domain/errors';
import {
  KEY_TYPES,
  emptiesByAccident,
  prepareRows,
  viewSchemaOf,
  warningsOf,
  type PropertyDeclaration,
  type WriteReport,
} from '../domain/custom-data';
import { newId } from '../platform/core/ids';
import type { ServiceDeps } from './deps';
import { KeyCursor, NameCursor, cursorPage, decodeCursor } from './pagination';

// Custom data tables: declarations, their typed views, and snapshot writes (replace detects absence and
// tombstones; upsert writes only what it is given). Writes of one table serialize on its row.

const tableNotFound = () => notFound('Table not found');
type Row = Record<string, unknown>;

const viewOf = (row: Pick<TableRow, 'view_schema' | 'view_name'>) => `${row.view_schema}.${row.view_name}`;

export function tableView(row: TableRow, counts: tables.TableCounts) {
  return {
    name: row.name,
    description: row.description,
    key: row.key_properties,
    properties: row.properties,
    view: viewOf(row),
    live_rows: counts.live_rows,
    tombstoned_rows: counts.tombstoned_rows,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
  };
}

export interface TableDeclaration {
  key: string[];
  properties: PropertyDeclaration[];
  description?: string;
}

/** Creates or redeclares a table; its view is rebuilt in the same transaction. A key change needs an empty table. */
export async function declareTable(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, name: string, input: TableDeclaration) {
  const types = new Map(input.properties.map((p) => [p.name, p.type]));
  if (types.size !== input.properties.length) throw invalid('properties: each name may be declared once');
  for (const k of input.key) {
    const type = types.get(k);
    if (!type) throw invalid(`key: ${k} is not a declared property`);
    if (!KEY_TYPES.includes(type)) throw invalid(`key: ${k} is of type ${type}; key properties are ${KEY_TYPES.join(', ')}`);
  }
  if (new Set(input.key).size !== input.key.length) throw invalid('key: each property may appear once');
  return deps.sql.begin(async (tx) => {
    const before = await tables.getTable(tx, orgId, name, { lock: true });
    if (before && before.key_properties.join(',') !== input.key.join(',') && (await tables.hasRows(tx, orgId, before.id)))
      throw conflict('The table has rows; its key cannot change (delete the table, or declare a new one)');
    const row = await tables.upsertTable(
      tx,
      orgId,
      newId(),
      name,
      { description: input.description ?? before?.description ?? '', key_properties: input.key, properties: input.properties },
      { schema: viewSchemaOf(orgId), name },
      actor,
    );
    await tables.replaceView(tx, orgId, row);
    return tableView(row, await tables.countRows(tx, orgId, row.id));
  });
}

export async function listTables(deps: Pick<ServiceDeps, 'sql'>, orgId: string, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, NameCursor)?.n;
  const { rows, total } = await tables.listTables(deps.sql, orgId, { limit: query.limit, after });
  const views = await Promise.all(rows.map(async (row) => tableView(row, await tables.countRows(deps.sql, orgId, row.id))));
  return cursorPage(views, query.limit, total, (last) => ({ n: last.name }));
}

export async function getTable(deps: Pick<ServiceDeps, 'sql'>, orgId: string, name: string) {
  const row = await tables.getTable(deps.sql, orgId, name);
  if (!row) throw tableNotFound();
  return tableView(row, await tables.countRows(deps.sql, orgId, row.id));
}

export async function deleteTable(deps: Pick<ServiceDeps, 'sql'>, orgId: string, name: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const row = await tables.deleteTable(tx, orgId, name);
    if (!row) throw tableNotFound();
    await tables.dropView(tx, orgId, row);
  });
}

export async function listRows(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  name: string,
  query: { state: 'live' | 'tombstoned' | 'all'; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, KeyCursor)?.k;
  const table = await tables.getTable(deps.sql, orgId, name);
  if (!table) throw tableNotFound();
  const { rows, total } = await tables.listRows(deps.sql, orgId, table.id, { state: query.state, limit: query.limit, after });
  return cursorPage(
    rows,
    query.limit,
    total,
    (last) => ({ k: last.key }),
    (r) => ({
      key: Object.fromEntries(table.key_properties.map((k, i) => [k, (JSON.parse(r.key) as unknown[])[i]])),
      data: r.data,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
      tombstoned_at: r.tombstoned_at?.toISOString() ?? null,
    }),
  );
}

/**
 * Writes a snapshot (`replace`: the complete state; absent keys are tombstoned) or a partial batch
 * (`upsert`). Set-based: the rows are staged with COPY and merged in SQL in one transaction holding the
 * table's row, so two writes of one table serialize and each report is exact; a failure changes nothing.
 */
export async function writeRows(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  name: string,
  rows: Row[],
  mode: 'replace' | 'upsert',
): Promise<WriteReport> {
  const max = deps.config.CUSTOM_DATA_REPLACE_MAX_ROWS;
  if (rows.length > max)
    throw unprocessable([{ loc: ['body', 'rows'], msg: `At most ${max} rows per ${mode}; this one has ${rows.length}` }]);
  return deps.sql.begin(async (tx) => {
    const table = await tables.getTable(tx, orgId, name, { lock: true });
    if (!table) throw tableNotFound();
    const prepared = prepareRows(rows, table.key_properties, table.properties);
    if (mode === 'replace' && emptiesByAccident(prepared)) throw unkeyedReplace(prepared.received, table.key_properties);
    const lines = [...staged(prepared.rows)]; // every row checked before the COPY starts
    const liveBefore = await tables.countLive(tx, orgId, table.id);
    await tables.stageRows(tx, orgId, lines);
    const written = await tables.mergeStaged(tx, orgId, table.id, lines.length);
    const tombstoned = mode === 'replace' ? await tables.tombstoneAbsent(tx, orgId, table.id) : 0;
    const liveAfter = await tables.countLive(tx, orgId, table.id);
    return {
      table: table.name,
      received: prepared.received,
      written,
      unchanged: prepared.rows.size - written,
      tombstoned,
      live_before: liveBefore,
      live_after: liveAfter,
      warnings: warningsOf(prepared, table.key_properties),
      type_mismatches: prepared.typeMismatches,
      undeclared_properties: prepared.undeclared,
      view: viewOf(table),
    };
  });
}

/** A replace whose rows were sent but none can be keyed would tombstone every live row: 422, nothing applied. */
const unkeyedReplace = (received: number, key: string[]) =>
  unprocessable([
    {
      loc: ['body', 'rows'],
      msg: `Value error, none of the ${received} row(s) holds every key property (${key.join(', ')}); replacing the table by them would tombstone every live row, so nothing was applied (send rows: [] to empty the table)`,
    },
  ]);

// jsonb cannot hold the character U+0000; such a row is refused before anything is written.
const nulRefused = () => invalid('A value holds the character \\u0000, which Postgres cannot store; nothing was written');
const NUL_ESCAPE = /(^|[^\\])(\\\\)*\\u0000/;

/** [key, JSON text] of each row to stage. */
function* staged(rows: Map<string, Row>): Generator<[string, string]> {
  for (const [key, row] of rows) {
    const json = JSON.stringify(row);
    if (json.includes('\\u0000') && NUL_ESCAPE.test(json)) throw nulRefused();
    yield [key, json];
  }
}
