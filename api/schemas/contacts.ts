import { z } from 'zod';
import { FUNNEL_MOVES, STAGES, type FunnelMove, type Stage } from '../../domain/contacts';
import { atLeastOneOf } from '../../domain/schema-rules';
import { TagNames, Uuid, cappedLimit, offsetQuery } from './common';

export { FUNNEL_MOVES, STAGES, type FunnelMove, type Stage };

const text = (max: number) => z.string().max(max).nullable();

/** The contact fields a caller writes, with their limits; null clears a field. */
const ContactFields = z.strictObject({
  account_id: Uuid.nullable(),
  first_name: text(200),
  last_name: text(200),
  email: z.email().max(320).nullable(),
  title: text(200),
  department: text(200),
  phone: text(50),
  linkedin_url: text(500),
  company: text(300),
  company_domain: text(255),
  source: text(100),
  notes: text(10_000),
  owner_id: text(200),
});
export type ContactField = keyof typeof ContactFields.shape;
export const CONTACT_FIELDS = Object.keys(ContactFields.shape) as ContactField[];

/** One row of a CSV import, after its empty cells are dropped. */
export const ImportRow = ContactFields.partial();

/** What names a new contact: at least one of these, not null or empty. */
const CONTACT_NAMES = ['first_name', 'last_name', 'email'] as const;

/** Department is not accepted on create (422): it is set by PATCH or CSV import only. */
export const CreateContactBody = ContactFields.omit({ department: true })
  .extend({ tags: TagNames })
  .partial()
  .refine((b) => Boolean(b.first_name || b.last_name || b.email), {
    message: 'A contact needs at least one of first_name, last_name or email',
  })
  // The same rule as the document states it: one of the three present and not empty (null or "" names nobody).
  .openapi('ContactCreate', {
    description: 'At least one of first_name, last_name or email, not null or empty (else 422)',
    ...atLeastOneOf(CONTACT_NAMES, [null, '']),
  });

/** Any subset of the fields; stage is not among them, so sending it is a 422 (extra field). */
export const PatchContactBody = ContactFields.extend({ tags: TagNames.nullable() }).partial().openapi('ContactPatch');

export const Contact = z
  .object({
    id: Uuid,
    account_id: Uuid.nullable(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string().nullable(),
    title: z.string().nullable(),
    department: z.string().nullable(),
    phone: z.string().nullable(),
    linkedin_url: z.string().nullable(),
    company: z.string().nullable(),
    company_domain: z.string().nullable(),
    source: z.string().nullable(),
    notes: z.string().nullable(),
    owner_id: z.string().nullable(),
    stage: z.enum(STAGES),
    stage_changed_at: z.string().nullable(),
    tags: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Contact');

export const ContactParams = z.object({ contact_id: Uuid });

export const ContactListQuery = z.object({
  search: z.string().max(200).optional().openapi({ description: 'Case-insensitive substring of the name, email or company' }),
  stage: z.enum(STAGES).optional(),
  account_id: Uuid.optional(),
  tag: z.string().max(100).optional().openapi({ description: 'Contacts carrying this tag name' }),
  owner_id: z.string().max(200).optional(),
  limit: cappedLimit(50, 200, 'Default 50; values above 200 are served as 200'),
  offset: offsetQuery(),
});
export const CONTACT_LIST_MAX = 200;

export const ImportBody = z
  .strictObject({
    csv: z
      .string()
      .min(1)
      .openapi({ description: 'CSV text: a header row of contact field names (email required), then one contact per row' }),
  })
  .openapi('ContactImportRequest');

export const ImportReport = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    rejected: z.array(z.object({ row: z.number().int(), reason: z.string() })),
  })
  .openapi('ContactImportReport');
