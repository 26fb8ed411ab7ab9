import { z } from 'zod';
import type { CursorCodec } from '../services/pagination';

// The cursor codecs live with the services that page (services/pagination.ts); this is the shape the
// API documents.
export { CreatedCursor, KeyCursor, NameCursor, VersionCursor, cursorPage, decodeCursor, encodeCursor } from '../services/pagination';

export const CursorPagination = z.object({
  limit: z.number().int(),
  next_cursor: z.string().nullable(),
  total: z.number().int(),
  offset: z.number().int(),
});

/**
 * A list's `cursor` query parameter: the codec's pattern (or empty: the first page) and a length bound,
 * both stated in the document. Every value of the pattern decodes, so no well-formed cursor is refused; a
 * value outside it is 400 Invalid cursor (decodeCursor), like the other values a handler checks.
 */
export function cursorQuery(codec: Pick<CursorCodec<never>, 'pattern' | 'description'>, maxLength = 500) {
  const pattern = `^(?:${codec.pattern.source.slice(1, -1)})?$`;
  return z
    .string()
    .max(maxLength)
    .optional()
    .openapi({ pattern, description: `next_cursor of the previous page (${codec.description}); empty or absent: the first page` });
}
