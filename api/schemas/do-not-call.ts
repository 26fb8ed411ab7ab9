import { z } from 'zod';
import { CursorPagination, NameCursor, cursorQuery } from '../pagination';
import { Timestamp, Uuid } from './common';
import { phoneNumberField } from './phone-numbers';

const Limit = z.coerce.number().int().min(1).max(200).default(50).openapi({ description: 'Page size, default 50, at most 200' });

export const DoNotCallListQuery = z.object({ limit: Limit, cursor: cursorQuery(NameCursor) });

export const DoNotCallCreateBody = z
  .object({
    number: phoneNumberField('The number campaigns must never dial'),
    reason: z.string().trim().min(1).max(500).nullable().optional().openapi({ description: 'Why, for the people who read the list' }),
  })
  .strict()
  .openapi('DoNotCallCreate');

export const DoNotCallParams = z.object({
  number: phoneNumberField('A listed number'),
});

export const DoNotCallEntry = z
  .object({
    number: z.string().openapi({ description: 'E.164' }),
    organization_id: Uuid,
    reason: z.string().nullable(),
    created_by: z.string(),
    created_at: Timestamp,
  })
  .openapi('DoNotCallEntry');

export const DoNotCallAdded = DoNotCallEntry.extend({
  canceled_contacts: z
    .number()
    .int()
    .openapi({ description: 'Pending campaign contacts that carried the number, canceled (last_outcome do_not_call)' }),
}).openapi('DoNotCallAdded');

export const DoNotCallList = z.object({ data: z.array(DoNotCallEntry), pagination: CursorPagination }).openapi('DoNotCallList');
