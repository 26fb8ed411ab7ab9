import { z } from 'zod';

// The cursor helpers live with the services that page (services/pagination.ts); this is the shape the
// API documents.
export { CreatedCursor, cursorPage, decodeCursor, encodeCursor } from '../services/pagination';

export const CursorPagination = z.object({
  limit: z.number().int(),
  next_cursor: z.string().nullable(),
  total: z.number().int(),
  offset: z.number().int(),
});
