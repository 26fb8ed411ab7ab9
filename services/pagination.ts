import { z } from 'zod';
import { invalid } from '../domain/errors';

/**
 * Opaque keyset cursors: base64url JSON of the sort key of the last row served. Lists order by
 * (created_at, id) or another unique key, so a cursor resumes exactly after that row.
 */
export function encodeCursor(key: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor<T extends z.ZodType>(cursor: string | undefined, shape: T): z.output<T> | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = shape.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  throw invalid('Invalid cursor');
}

/**
 * The common cursor of lists ordered by creation: the last row's created_at (as Postgres prints it,
 * microseconds kept) and id. Checked here so a forged cursor is a 400, never a failed cast in SQL.
 */
export const CreatedCursor = z.object({
  t: z.string().regex(/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)$/),
  id: z.uuid(),
});

/** `{data, pagination: {limit, next_cursor, total, offset}}`, the cursor-based list shape of every cursor list. */
export function cursorPage<T>(rows: T[], limit: number, total: number, nextKey: (last: T) => Record<string, string | number>) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return {
    data,
    pagination: { limit, next_cursor: hasMore ? encodeCursor(nextKey(data[data.length - 1]!)) : null, total, offset: 0 },
  };
}
