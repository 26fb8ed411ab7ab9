import { z } from 'zod';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, Uuid } from './common';

const Reason = z.enum(['bounce', 'soft_bounce', 'unsubscribe', 'complaint', 'manual']);

export const Suppression = z
  .object({
    id: Uuid,
    email: z.string(),
    reason: Reason.describe(
      'bounce (a hard bounce), soft_bounce (repeated temporary failures; the note says how many and the last status), unsubscribe, complaint, or manual (added by a person)',
    ),
    note: z.string().nullable(),
    created_by: z.string().describe('user:<id>, or system:outreach for entries the sender added'),
    created_at: Timestamp,
  })
  .openapi('OutreachSuppression');

export const SuppressionList = z.object({ data: z.array(Suppression), pagination: CursorPagination }).openapi('OutreachSuppressionList');

export const SuppressionListQuery = z.object({
  search: z.string().max(320).optional().describe('part of the address, case-insensitive'),
  reason: Reason.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorQuery(CreatedCursor),
});

export const AddSuppressionBody = z
  .strictObject({
    email: z.email().max(320),
    reason: Reason.optional().describe('default manual'),
    note: z.string().max(500).optional(),
  })
  .openapi('OutreachSuppressionCreate');

export const SuppressionParams = z.object({ suppression_id: Uuid });
