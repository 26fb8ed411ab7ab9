import { z } from 'zod';
import { SIGNATURE_LAYOUTS } from '../../domain/card-signature';
import { CARD_EVENT_TYPES, CARD_LINKS_MAX, LEAD_STATUSES, UTM_FIELDS } from '../../domain/cards';
import { trimmedText } from '../../domain/trimmed-text';
import { HttpUrl } from './accounts';
import { Timestamp, Uuid, dateInput, offsetQuery, timestampInput } from './common';

// Cards, their share links (managed and public), attribution events and public media.

/** Trimmed, then 1 to `max` characters; the document's pattern says the same. */
const text = trimmedText;
const HexColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour')
  .openapi({ example: '#2563eb' });
/** cards/<card_id>/<uuid>.<png|jpg|webp>, as POST /cards/{card_id}/media answers it. */
export const MediaKey = z
  .string()
  .regex(
    /^cards\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(png|jpg|webp)$/,
  )
  .openapi({ description: 'A key returned by POST /cards/{card_id}/media for this card' });

export const CardLinkItem = z
  .object({ label: text(50), url: HttpUrl })
  .strict()
  .openapi('CardLink');
const PageLimit = (byDefault: number, max: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(byDefault)
    .openapi({ description: `Page size, default ${byDefault}, at most ${max}` });
const Offset = offsetQuery(1_000_000);
const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');

const cardFields = {
  owner_id: text(200).describe("the owner's user id at the identity provider; a member of the organization; defaults to the caller"),
  name: text(200),
  title: text(200).nullable(),
  company: text(200).nullable(),
  email: z.email().max(254).nullable(),
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9 ().-]{3,30}$/, 'must be a phone number: digits, spaces, ( ) . - and a leading +')
    .nullable(),
  website: HttpUrl.nullable(),
  bio: text(1000).nullable(),
  links: z.array(CardLinkItem).max(CARD_LINKS_MAX),
  photo_key: MediaKey.nullable(),
  logo_key: MediaKey.nullable(),
  primary_color: HexColor,
  accent_color: HexColor,
  account_id: Uuid.nullable().describe('an account of the organization; leads captured through the card are linked to it'),
};

export const CreateCardBody = z
  .object({
    ...cardFields,
    owner_id: cardFields.owner_id.optional(),
    title: cardFields.title.optional(),
    company: cardFields.company.optional(),
    email: cardFields.email.optional(),
    phone: cardFields.phone.optional(),
    website: cardFields.website.optional(),
    bio: cardFields.bio.optional(),
    links: cardFields.links.optional(),
    primary_color: cardFields.primary_color.optional().describe('defaults to #1f2937'),
    accent_color: cardFields.accent_color.optional().describe('defaults to #2563eb'),
    account_id: cardFields.account_id.optional(),
  })
  .omit({ photo_key: true, logo_key: true })
  .strict()
  .openapi('CardCreate', { description: 'Images are uploaded once the card exists (POST /cards/{card_id}/media), then set with PATCH' });

/** Any non-empty subset; an explicit null clears a field (owner_id, name, links and colours cannot be null). */
export const UpdateCardBody = z.object(cardFields).partial().strict().openapi('CardUpdate');

/** The contact fields as a card shows them, to its organization and to the public alike. */
const cardContactView = {
  name: z.string(),
  title: z.string().nullable(),
  company: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  website: z.string().nullable(),
  bio: z.string().nullable(),
};

export const Card = z
  .object({
    id: Uuid,
    owner_id: z.string(),
    ...cardContactView,
    links: z.array(z.object({ label: z.string(), url: z.string() })),
    photo_key: z.string().nullable(),
    photo_url: z.string().nullable().describe('public URL of the photo'),
    logo_key: z.string().nullable(),
    logo_url: z.string().nullable(),
    primary_color: z.string(),
    accent_color: z.string(),
    account_id: Uuid.nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Card');

export const CardListQuery = z.object({
  owner_id: z.string().trim().min(1).max(200).optional().describe("only the cards of this owner (identity provider's user id)"),
  limit: PageLimit(50, 200),
  offset: Offset,
});
export const CardList = z.object({ cards: z.array(Card), limit: z.number().int(), offset: z.number().int() }).openapi('CardList');

export const CardParams = z.object({ card_id: Uuid });

export const SignatureQuery = z.object({
  format: z
    .enum(['html', 'fragment', 'text'])
    .default('html')
    .describe(
      'html: a whole document to open and copy; fragment: the table alone, to paste into a mail client; text: the plain-text alternative',
    ),
  layout: z
    .enum(SIGNATURE_LAYOUTS)
    .default('horizontal')
    .describe('horizontal: photo beside the details; stacked: photo above; compact: one line, no images'),
  include_photo: Bool.prefault('true'),
  include_logo: Bool.prefault('true'),
  include_links: Bool.prefault('true'),
});

// ---- share links ------------------------------------------------------------------------------------

export const CreateShareLinkBody = z
  .object({
    source: text(100).nullable().optional().describe('campaign or source label kept with every event of the link, e.g. "websummit-booth"'),
    expires_at: timestampInput('In the future; after it the link answers 404 like an unknown one').nullable().optional(),
  })
  .strict()
  .openapi('ShareLinkCreate');

export const ShareLink = z
  .object({
    id: Uuid,
    card_id: Uuid,
    token: z.string(),
    url: z.string().describe('the public page of the card'),
    qr_url: z.string().describe('what the QR code encodes: the page, marked as opened from the QR code'),
    qr_png_url: z.string(),
    qr_svg_url: z.string(),
    vcard_url: z.string(),
    source: z.string().nullable(),
    state: z.enum(['active', 'revoked', 'expired']),
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    created_by: z.string(),
    created_at: Timestamp,
  })
  .openapi('ShareLink');

export const ShareLinkList = z.object({ share_links: z.array(ShareLink) }).openapi('ShareLinkList');
export const ShareLinkParams = z.object({ card_id: Uuid, link_id: Uuid });

/** A token is a path segment; a malformed one is the same 404 as an unknown one, never a 422. */
export const TokenParams = z.object({ token: z.string().max(200) });
export const LinkClickParams = z.object({
  token: z.string().max(200),
  index: z
    .string()
    .regex(/^[0-9]$/)
    .transform(Number)
    .openapi({ description: `the position of the link in the card's links, 0 to ${CARD_LINKS_MAX - 1}` }),
});

const utmParam = z.string().min(1).max(200);
/**
 * Attribution carried in the query. Other parameters (fbclid, gclid, ...) that sites append to shared
 * links are ignored rather than refused.
 */
export const VisitQuery = z.looseObject({
  ...Object.fromEntries(UTM_FIELDS.map((f) => [f, utmParam.optional()])),
  via: z.enum(['qr', 'link']).optional().describe('qr when opened from the QR code'),
}) as z.ZodObject<
  { [K in (typeof UTM_FIELDS)[number]]: z.ZodOptional<typeof utmParam> } & { via: z.ZodOptional<z.ZodEnum<{ qr: 'qr'; link: 'link' }>> }
>;

export const QrQuery = z.looseObject({
  size: z.coerce.number().int().min(64).max(2048).default(512).describe('PNG width and height in pixels'),
});

export const PublicCard = z
  .object({
    ...cardContactView,
    links: z.array(z.object({ label: z.string(), url: z.string(), click_url: z.string() })),
    photo_url: z.string().nullable(),
    logo_url: z.string().nullable(),
    primary_color: z.string(),
    accent_color: z.string(),
    vcard_url: z.string(),
    leads_url: z.string(),
  })
  .openapi('PublicCard');

export const LeadBody = z
  .object({
    name: text(200),
    email: z.email().max(254),
    phone: cardFields.phone.unwrap().optional(),
    company: text(200).optional(),
    note: text(2000).optional(),
    consent: z.literal(true).describe('the visitor agrees that the card owner stores the details and contacts them'),
  })
  .strict()
  .openapi('CardLead');

/** The unauthenticated lead form's body limit: its fields fit many times over, even fully escaped. */
export const LEAD_BODY_LIMIT_BYTES = 64 * 1024;

export const LeadReceived = z.object({ status: z.literal('received') }).openapi('CardLeadReceived');

// ---- events -----------------------------------------------------------------------------------------

export const CardEventType = z.enum(CARD_EVENT_TYPES).openapi('CardEventType');

export const CardEvent = z
  .object({
    id: Uuid,
    card_id: Uuid,
    share_link_id: Uuid,
    event_type: CardEventType,
    source: z.string().nullable(),
    ...Object.fromEntries(UTM_FIELDS.map((f) => [f, z.string().nullable()])),
    referrer: z.string().nullable().describe("the Referer's scheme, host and path; its query is never kept"),
    detail: z
      .record(z.string(), z.unknown())
      .describe('link_click: index, label, url; lead_submitted: lead_id (the lead waits in the card inbox)'),
    occurred_at: Timestamp,
  })
  .openapi('CardEvent');

export const CardEventListQuery = z.object({
  share_link_id: Uuid.optional(),
  event_type: CardEventType.optional(),
  limit: PageLimit(100, 500),
  offset: Offset,
});
export const CardEventList = z
  .object({ events: z.array(CardEvent), limit: z.number().int(), offset: z.number().int() })
  .openapi('CardEventList');

export const SummaryQuery = z.object({
  from: dateInput('First UTC day, default 29 days before to').optional(),
  to: dateInput('Last UTC day (included), default today').optional(),
});

const Counts = z.object(
  Object.fromEntries(CARD_EVENT_TYPES.map((t) => [t, z.number().int()])) as Record<(typeof CARD_EVENT_TYPES)[number], z.ZodNumber>,
);
const Rate = z.number().nullable().describe('lead_submitted / view, 4 decimals; null without views');

export const CardEventSummary = z
  .object({
    card_id: Uuid,
    share_link_id: Uuid.nullable(),
    from: z.string(),
    to: z.string(),
    event_types: z.array(CardEventType),
    totals: Counts,
    conversion_rate: Rate,
    by_day: z.array(Counts.extend({ date: z.string(), conversion_rate: Rate })),
    by_link: z
      .array(z.object({ share_link_id: Uuid, source: z.string().nullable(), totals: Counts, conversion_rate: Rate }))
      .optional()
      .describe('card summary only: every link of the card'),
  })
  .openapi('CardEventSummary');

// ---- media ------------------------------------------------------------------------------------------

export const CardMedia = z
  .object({
    key: z.string(),
    url: z.string(),
    content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']),
    size_bytes: z.number().int(),
    created_at: Timestamp,
  })
  .openapi('CardMedia');

export const MediaParams = z.object({ card_id: z.string(), file: z.string() });

// ---- lead inbox ---------------------------------------------------------------------------------------

const LeadStatus = z.enum(LEAD_STATUSES);
export const LeadParams = z.object({ card_id: Uuid, lead_id: Uuid });
export const LeadListQuery = z.object({ status: LeadStatus.optional(), limit: PageLimit(50, 200), offset: Offset });
export const LeadExportQuery = z.object({ status: LeadStatus.optional() });

export const CardLeadItem = z
  .object({
    id: Uuid,
    card_id: Uuid,
    share_link_id: Uuid,
    source: z.string().nullable().describe('the source label of the share link it came through'),
    status: LeadStatus.describe('pending until a person accepts it into the CRM or dismisses it'),
    name: z.string(),
    email: z.string(),
    phone: z.string().nullable(),
    company: z.string().nullable(),
    note: z.string().nullable(),
    consent_at: Timestamp,
    created_at: Timestamp,
    decided_at: Timestamp.nullable(),
    decided_by: z.string().nullable(),
    contact_id: Uuid.nullable().describe('the contact an accepted lead became or filled'),
    contact_created: z.boolean().nullable().describe('accepted: whether a new contact was made (false: a known one gained what it lacked)'),
  })
  .openapi('CardLeadItem');
export const CardLeadList = z
  .object({ leads: z.array(CardLeadItem), limit: z.number().int(), offset: z.number().int() })
  .openapi('CardLeadList');
