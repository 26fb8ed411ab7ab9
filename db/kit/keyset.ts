/**
 * The db kit's keyset pages (docs/decisions/platform.md, "The db kit"): every list the API pages goes
 * through here, from the SQL (`keysetRows`, `keysetPage`, `keysetAfter`) to the page body a service
 * returns (`cursorPage`, `nextPage`), with the cursor formats below. Cursors already issued keep working:
 * the formats are the ones the API has always documented.
 */
import type postgres from 'postgres';
import { invalid } from '../../domain/errors';
import type { Db } from '../client';

/**
 * Keyset cursors: the sort key of the last row served, in a format a pattern states exactly, so that
 * every string matching it decodes to a key (a position in the list) and the document can say which
 * cursors are accepted. Lists order by (created_at, id) or another unique key, so a cursor the
 * server issued resumes exactly after that row; any other well-formed one starts after its position.
 */
export interface CursorCodec<K extends Record<string, string | number>> {
  /** The key's fields, as the rows hand them to `cursorPage`. */
  readonly fields: readonly string[];
  /** Anchored; every match decodes. */
  readonly pattern: RegExp;
  /** What a cursor holds, for the document. */
  readonly description: string;
  encode(key: K): string;
  decode(cursor: string): K;
}

/** A timestamp as Postgres prints it (`created_at::text`) or ISO 8601, with its offset. */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}(?::?\d{2})?)$/;

function toMicros(text: string): bigint {
  const m = TIMESTAMP.exec(text);
  if (!m) throw new Error(`not a timestamp: ${text}`);
  const [, date, time, fraction = '', zone] = m as unknown as [string, string, string, string | undefined, string];
  const digits = zone.slice(1).replace(':', ''); // "+05" → "05", "+05:30" → "0530"
  const offset = zone === 'Z' ? 'Z' : `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
  const ms = Date.parse(`${date}T${time}${offset}`);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${text}`);
  return BigInt(ms) * 1000n + BigInt(fraction.padEnd(6, '0'));
}

/** Microseconds since 1970 as an ISO 8601 UTC timestamp with all six fractional digits (Postgres's precision). */
function fromMicros(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 19)}.${(micros % 1_000_000n).toString().padStart(6, '0')}Z`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * Lists ordered by creation: `<microseconds since 1970>.<id>` of the last row (16 digits reach the year
 * 2286), e.g. `1795681350757123.01a1fca5-a371-745b-b7ee-e3c82b739e7d`. Decodes to `t` as ISO 8601 UTC.
 */
export const CreatedCursor: CursorCodec<{ t: string; id: string }> = {
  fields: ['t', 'id'],
  pattern: new RegExp(`^\\d{1,16}\\.${UUID}$`),
  description: 'microseconds since 1970 and the id of the last row served, e.g. 1795681350757123.01a1fca5-a371-745b-b7ee-e3c82b739e7d',
  encode: ({ t, id }) => `${toMicros(t)}.${id.toLowerCase()}`,
  decode: (cursor) => {
    const dot = cursor.indexOf('.');
    return { t: fromMicros(BigInt(cursor.slice(0, dot))), id: cursor.slice(dot + 1) };
  },
};

/** Lists ordered by a positive integer (agent versions): its decimal digits. */
export const VersionCursor: CursorCodec<{ v: number }> = {
  fields: ['v'],
  pattern: /^[1-9]\d{0,8}$/,
  description: 'the number of the last version served',
  encode: ({ v }) => String(v),
  decode: (cursor) => ({ v: Number(cursor) }),
};

/** Lists ordered by a text key: its UTF-8 bytes in base64url (without padding). */
function textCursor<F extends string>(field: F, what: string): CursorCodec<Record<F, string>> {
  return {
    fields: [field],
    pattern: /^[A-Za-z0-9_-]+$/,
    description: `${what} of the last row served, UTF-8 in base64url`,
    encode: (key) => Buffer.from(key[field], 'utf8').toString('base64url'),
    // Any base64url decodes; bytes that are not UTF-8 become U+FFFD, and U+0000 (which Postgres text
    // cannot hold, nor any stored key) is dropped: a position among the keys either way.
    decode: (cursor) => ({ [field]: Buffer.from(cursor, 'base64url').toString('utf8').replaceAll('\u0000', '') }) as Record<F, string>,
  };
}

/** Lists ordered by a name (phone numbers, custom data tables). */
export const NameCursor = textCursor('n', 'the name (or number)');
/** Custom data rows, ordered by their key. */
export const KeyCursor = textCursor('k', 'the key');

const CODECS: CursorCodec<never>[] = [CreatedCursor, VersionCursor, NameCursor, KeyCursor] as unknown as CursorCodec<never>[];

/** The cursor of a key, in the format of the codec with the key's fields. */
export function encodeCursor(key: Record<string, string | number>): string {
  const fields = Object.keys(key).sort().join();
  const codec = CODECS.find((c) => [...c.fields].sort().join() === fields);
  if (!codec) throw new Error(`no cursor format for the fields ${fields}`);
  return codec.encode(key as never);
}

/**
 * The key of a cursor (undefined for none or an empty one). The routes' query schemas hold cursors to
 * the codec's pattern (422 otherwise); a caller that did not is answered 400 Invalid cursor here.
 */
export function decodeCursor<K extends Record<string, string | number>>(cursor: string | undefined, codec: CursorCodec<K>): K | undefined {
  if (!cursor) return undefined;
  if (!codec.pattern.test(cursor)) throw invalid('Invalid cursor');
  return codec.decode(cursor);
}

/** The position of a row in a list ordered by creation (or another timestamp), then id. */
export interface CreatedKey {
  t: string;
  id: string;
}

/** A list's keyset order: a timestamp column and the id that breaks its ties, both descending or both ascending. */
export interface KeysetOrder {
  /** The timestamp column, qualified when the query joins (`c.created_at`); `created_at` when absent. */
  at?: string;
  /** The tie-breaking id column, qualified like `at`; `id` when absent. */
  id?: string;
  /** Newest first (the default) or oldest first. */
  order?: 'desc' | 'asc';
}

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** `AND (created_at, id) < (t, id)` (newest first) or `>` (oldest first): the rows after the cursor's position; empty for the first page. */
export function keysetAfter(db: Db, after: CreatedKey | undefined, order: KeysetOrder = {}): Fragment {
  if (!after) return db``;
  const at = db(order.at ?? 'created_at');
  const id = db(order.id ?? 'id');
  // `::text` first: a parameter Postgres types as timestamptz goes through postgres.js's Date serializer,
  // which keeps milliseconds only, and the cursor's microseconds are what resume exactly after its row.
  return order.order === 'asc'
    ? db`AND (${at}, ${id}) > (${after.t}::text::timestamptz, ${after.id}::uuid)`
    : db`AND (${at}, ${id}) < (${after.t}::text::timestamptz, ${after.id}::uuid)`;
}

/** A keyset list: what to select from where, its order, and the page asked for. */
export interface KeysetQuery extends KeysetOrder {
  /** The columns, e.g. db`*`; `cursor_t` (the timestamp as text, microseconds kept) is added. */
  select: Fragment;
  /** The table, with its joins. */
  from: Fragment;
  /** The list's filters (without the cursor). */
  where: Fragment;
  limit: number;
  after?: CreatedKey;
}

/**
 * One page of rows after the cursor's position, in the keyset order, and one more when another page
 * follows (`cursorPage` and `nextPage` drop it); each row carries `cursor_t`, the key of its cursor.
 */
export function keysetRows<R>(db: Db, q: KeysetQuery) {
  const at = db(q.at ?? 'created_at');
  const id = db(q.id ?? 'id');
  const order = q.order === 'asc' ? db`ORDER BY ${at}, ${id}` : db`ORDER BY ${at} DESC, ${id} DESC`;
  return db<(R & { cursor_t: string })[]>`
    SELECT ${q.select}, ${at}::text AS cursor_t FROM ${q.from} WHERE ${q.where} ${keysetAfter(db, q.after, q)}
    ${order} LIMIT ${q.limit + 1}`;
}

/** The number of rows a list's filters match, whatever the page. */
export async function countRows(db: Db, from: Fragment, where: Fragment): Promise<number> {
  const [row] = await db<{ total: number }[]>`SELECT count(*)::int AS total FROM ${from} WHERE ${where}`;
  return row!.total;
}

/** `keysetRows` and the total its filters match (`countRows`): what `cursorPage` makes a page of. */
export async function keysetPage<R>(db: Db, q: KeysetQuery): Promise<{ rows: (R & { cursor_t: string })[]; total: number }> {
  const rows = await keysetRows<R>(db, q);
  return { rows, total: await countRows(db, q.from, q.where) };
}

/** The page of rows fetched one past `limit`, and the cursor after its last row (null when it is the last page). */
export function nextPage<T>(rows: T[], limit: number, nextKey: (last: T) => Record<string, string | number>) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, next_cursor: hasMore ? encodeCursor(nextKey(data[data.length - 1]!)) : null };
}

/**
 * `{data, pagination: {limit, next_cursor, total, offset}}`, the cursor-based list shape of every cursor
 * list, from the rows fetched one past `limit`; `view` (when given) renders each row served.
 */
export function cursorPage<T>(
  rows: T[],
  limit: number,
  total: number,
  nextKey: (last: T) => Record<string, string | number>,
): {
  data: T[];
  pagination: { limit: number; next_cursor: string | null; total: number; offset: number };
};
export function cursorPage<T, V>(
  rows: T[],
  limit: number,
  total: number,
  nextKey: (last: T) => Record<string, string | number>,
  view: (row: T) => V,
): { data: V[]; pagination: { limit: number; next_cursor: string | null; total: number; offset: number } };
export function cursorPage<T, V>(
  rows: T[],
  limit: number,
  total: number,
  nextKey: (last: T) => Record<string, string | number>,
  view?: (row: T) => V,
) {
  const { data, next_cursor } = nextPage(rows, limit, nextKey);
  return { data: view ? data.map(view) : data, pagination: { limit, next_cursor, total, offset: 0 } };
}
