// Digital business cards: the shape a card is rendered from, the attribution vocabulary, and the rules
// for public media keys, share-link tokens, lead names and referrers. Pure: no I/O.

export interface CardLink {
  label: string;
  url: string;
}

/** Everything a rendering (signature, vCard, public page) reads of a card; image URLs are absolute. */
export interface CardContent {
  id: string;
  name: string;
  title: string | null;
  company: string | null;
  email: string | null;
  phone: string | null;
  website: string | null;
  bio: string | null;
  links: CardLink[];
  photo_url: string | null;
  logo_url: string | null;
  primary_color: string;
  accent_color: string;
}

export const CARD_LINKS_MAX = 10;
export const DEFAULT_PRIMARY_COLOR = '#1f2937';
export const DEFAULT_ACCENT_COLOR = '#2563eb';

/** What a visitor does with a shared card, in the order summaries list them. */
export const CARD_EVENT_TYPES = ['view', 'qr_scan', 'vcard_download', 'link_click', 'lead_submitted'] as const;
export type CardEventType = (typeof CARD_EVENT_TYPES)[number];

export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
export type Utm = Partial<Record<(typeof UTM_FIELDS)[number], string>>;

// ---- public media --------------------------------------------------------------------------------

export const MEDIA_TYPES = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' } as const;
export type MediaType = keyof typeof MEDIA_TYPES;
const TYPE_OF_EXTENSION: Record<string, MediaType> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** The only shape of key read without a token: lower-case uuids, one of three image extensions. */
export const PUBLIC_MEDIA_KEY = new RegExp(`^cards/(${UUID})/${UUID}\\.(png|jpg|webp)$`);

export const mediaKey = (cardId: string, mediaId: string, type: MediaType): string => `cards/${cardId}/${mediaId}.${MEDIA_TYPES[type]}`;

/** The card and content type of an allowlisted key, or undefined for any other string. */
export function parseMediaKey(key: string): { cardId: string; contentType: MediaType } | undefined {
  const match = PUBLIC_MEDIA_KEY.exec(key);
  if (!match) return undefined;
  return { cardId: match[1]!, contentType: TYPE_OF_EXTENSION[match[2]!]! };
}

/**
 * The image type the bytes really are (magic numbers), or undefined: an upload is kept only when this
 * agrees with its declared Content-Type, so a public key never serves HTML or script as an image.
 */
export function sniffImageType(bytes: Uint8Array): MediaType | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50)
    return 'image/webp';
  return undefined;
}

// ---- share links -----------------------------------------------------------------------------------

/**
 * The source of the share link every card gets at creation: its email signature links to the card
 * through it, so signature traffic is attributed (revoking it leaves the signature without the link).
 */
export const SIGNATURE_LINK_SOURCE = 'email-signature';
/** The attribution the signature's link carries. */
export const SIGNATURE_LINK_QUERY = '?utm_source=email-signature&utm_medium=email';

/** 16 random bytes in base64url: 22 characters. Anything else cannot be a token and is a plain 404. */
export const SHARE_TOKEN = /^[A-Za-z0-9_-]{22}$/;

export type LinkState = 'active' | 'revoked' | 'expired';

export function linkState(link: { revoked_at: Date | null; expires_at: Date | null }, now: Date): LinkState {
  if (link.revoked_at) return 'revoked';
  if (link.expires_at && link.expires_at.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

// ---- leads -----------------------------------------------------------------------------------------

/** A visitor's one "name" field as the contact's first and last name: the last word is the family name. */
export function splitName(name: string): { first_name: string; last_name: string | null } {
  const words = name.trim().split(/\s+/);
  if (words.length === 1) return { first_name: words[0]!, last_name: null };
  return { first_name: words.slice(0, -1).join(' '), last_name: words[words.length - 1]! };
}

export const LEAD_SOURCE = 'card';

/** Where a lead stands in its card's inbox. */
export const LEAD_STATUSES = ['pending', 'accepted', 'dismissed'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

const LEGAL_FORMS = /\b(inc|incorporated|llc|ltd|limited|gmbh|ag|sa|sas|bv|nv|plc|co|corp|corporation|company|the)\b/g;
const companyKey = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9 ]+/g, ' ')
    .replace(LEGAL_FORMS, ' ')
    .replace(/\s+/g, '');

/**
 * Whether a lead's company names the card's account ("Acme, Inc." is "ACME"): case, accents,
 * punctuation and legal forms aside. A lead naming another company is not filed under the account.
 */
export function sameCompany(leadCompany: string, accountName: string): boolean {
  const a = companyKey(leadCompany);
  return a.length > 0 && a === companyKey(accountName);
}

/** A CSV cell a spreadsheet will not run as a formula (OWASP CSV injection): such text gets a leading quote. */
export const csvSafe = (value: string): string => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

// ---- attribution -----------------------------------------------------------------------------------

const REFERRER_MAX = 500;

/**
 * The part of a Referer header kept with an event: scheme, host and path of an http(s) URL. Its query
 * and fragment are dropped (they often carry personal data); anything unparsable is not kept.
 */
export function cleanReferrer(header: string | undefined): string | null {
  if (!header) return null;
  let url: URL;
  try {
    url = new URL(header);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return `${url.origin}${url.pathname}`.slice(0, REFERRER_MAX);
}

export type EventCounts = Record<CardEventType, number>;

export const zeroCounts = (): EventCounts => ({ view: 0, qr_scan: 0, vcard_download: 0, link_click: 0, lead_submitted: 0 });

/** Leads per view, rounded to four places; null when nothing was viewed (no rate to speak of). */
export const conversionRate = (counts: EventCounts): number | null =>
  counts.view === 0 ? null : Math.round((counts.lead_submitted / counts.view) * 10_000) / 10_000;

/** Summaries span at most a year of days. */
export const SUMMARY_MAX_DAYS = 366;
export const SUMMARY_DEFAULT_DAYS = 30;

// ---- HTML ------------------------------------------------------------------------------------------

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or attribute value made inert in HTML. Every card value passes through it. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** A tel: URI of a phone number: its leading + and digits only. */
export const telUri = (phone: string): string => `tel:${phone.replace(/[^\d+]/g, '').replace(/(?!^)\+/g, '')}`;

/** The host and path of a URL without its scheme, as a signature shows a website. */
export const displayUrl = (url: string): string => url.replace(/^https?:\/\//i, '').replace(/\/$/, '');

/** Every UTC calendar day from `from` to `to` (YYYY-MM-DD, both included). */
export function eachDay(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end; t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** The UTC day `days` after (or before, when negative) a YYYY-MM-DD day. */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
