import { z } from 'zod';
import { DOMAIN_NAME, normalizeDomain } from '../../domain/outreach/domains';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, Uuid } from './common';

const DomainName = z
  .string()
  .max(254)
  .transform(normalizeDomain)
  .pipe(z.string().regex(DOMAIN_NAME, 'must be a domain name such as example.com'))
  .openapi({
    type: 'string',
    // DOMAIN_NAME in either case (the server lower-cases, and also takes one trailing dot, which this leaves out).
    maxLength: 253,
    pattern: '^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$',
    description: 'A domain name such as example.com (case and a trailing dot are ignored)',
    example: 'acme-mail.com',
  });

const TrackingEnabled = z
  .boolean()
  .openapi({ description: 'Open and click tracking: the tracking CNAME is required for verification only while on' });

export const AddDomainBody = z.strictObject({
  name: DomainName,
  tracking_enabled: TrackingEnabled.optional().openapi({ description: 'Default false' }),
});

export const PatchDomainBody = z.strictObject({ tracking_enabled: TrackingEnabled });

export const PurchaseDomainBody = z.strictObject({
  name: DomainName,
  years: z.number().int().min(1).max(10).default(1),
  max_price_cents: z
    .number()
    .int()
    .min(0)
    .max(100_000_000)
    .optional()
    .openapi({ description: 'Refuse (409) when the registrar asks more than this for the whole term' }),
});

export const AvailabilityQuery = z.object({ name: DomainName });

export const DomainParams = z.object({ domain_id: Uuid });

export const DomainListQuery = z.object({
  status: z.enum(['pending', 'verified', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorQuery(CreatedCursor),
});

const DomainRecord = z.object({
  purpose: z.enum(['spf', 'dkim', 'dmarc', 'tracking']),
  type: z.enum(['TXT', 'CNAME']),
  host: z.string(),
  value: z.string().openapi({ description: 'What to publish at host (the DKIM record carries the public key only)' }),
  required: z.boolean().openapi({ description: 'Counts for verification: always, except the tracking CNAME while tracking is off' }),
  status: z.enum(['pending', 'verified', 'mismatch', 'missing', 'error']).openapi({
    description:
      'pending: never checked; missing: no such record; mismatch: a record that is not ours (or two SPF/DMARC records); error: the lookup failed',
  }),
  found: z.array(z.string()).nullable().openapi({ description: 'What DNS answered at the last check (at most 10)' }),
  checked_at: Timestamp.nullable(),
});

export const Domain = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    name: z.string(),
    source: z.enum(['owned', 'purchased']),
    registrar: z
      .string()
      .nullable()
      .openapi({ description: 'The registrar a purchased domain came from (`simulated` for the built-in one)' }),
    registrar_order_id: z.string().nullable(),
    price_cents: z.number().int().nullable(),
    currency: z.string().nullable(),
    registered_until: Timestamp.nullable(),
    status: z.enum(['pending', 'verified', 'failed']).openapi({
      description:
        'pending until the first verification run; verified when every required record is (the tracking CNAME only while tracking_enabled)',
    }),
    dkim_selector: z.string(),
    tracking_enabled: z.boolean(),
    records: z.array(DomainRecord),
    last_verified_at: Timestamp.nullable(),
    verified_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
  })
  .openapi('OutreachDomain');

export const DomainList = z.object({ data: z.array(Domain), pagination: CursorPagination }).openapi('OutreachDomainList');

export const Availability = z
  .object({
    name: z.string(),
    available: z.boolean(),
    price_cents: z.number().int().openapi({ description: 'Price of one year' }),
    currency: z.string(),
    registrar: z.string(),
  })
  .openapi('OutreachDomainAvailability');
