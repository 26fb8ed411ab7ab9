import crypto from 'node:crypto';
import { isbot } from 'isbot';
import QRCode from 'qrcode';
import * as links from '../db/card-share-links';
import type { ShareLinkRow } from '../db/card-share-links';
import * as cards from '../db/cards';
import type { CardRow } from '../db/cards';
import { renderSharePage, sharePageCsp } from '../domain/card-page';
import { SHARE_TOKEN, UTM_FIELDS, cleanReferrer, linkState, type CardEventType, type Utm } from '../domain/cards';
import { notFound, rateLimited, unprocessable } from '../domain/errors';
import { renderVcard, vcardFilename } from '../domain/vcard';
import { addressSubject } from '../platform/core/client-address';
import { publicBaseUrl, type Config } from '../platform/core/config';
import { newId } from '../platform/core/ids';
import { RateLimiter } from '../platform/core/rate-limit';
import { recordCardEvent } from './card-events';
import { emitEvent } from './notifications/emit';
import { cardContent, cardNotFound } from './cards';
import type { ServiceDeps } from './deps';

// Share links: managed by the card's organization, opened by anyone holding the token (a link or a QR
// code). Every public answer about a link that is unknown, malformed, revoked or expired is the same
// 404, so a token reveals nothing once it stops working.

const shareUrl = (deps: Pick<ServiceDeps, 'config'>, token: string) => `${publicBaseUrl(deps.config)}/share/${token}`;

export function linkView(deps: Pick<ServiceDeps, 'config'>, row: ShareLinkRow, now = new Date()) {
  const url = shareUrl(deps, row.token);
  return {
    id: row.id,
    card_id: row.card_id,
    token: row.token,
    url,
    qr_url: `${url}?via=qr`,
    qr_png_url: `${url}/qr.png`,
    qr_svg_url: `${url}/qr.svg`,
    vcard_url: `${url}/vcard`,
    source: row.source,
    state: linkState(row, now),
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  };
}

// ---- management (authenticated) -------------------------------------------------------------------

export async function createShareLink(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  actor: string,
  cardId: string,
  input: { source?: string | null; expires_at?: string | null },
) {
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw unprocessable([{ loc: ['body', 'expires_at'], msg: 'expires_at must be in the future' }]);
  const row = await deps.sql.begin(async (tx) => {
    if (!(await cards.lockCardRef(tx, orgId, cardId))) throw cardNotFound();
    return links.insertShareLink(tx, orgId, cardId, {
      id: newId(),
      token: crypto.randomBytes(16).toString('base64url'),
      source: input.source ?? null,
      expires_at: expiresAt,
      created_by: actor,
    });
  });
  return linkView(deps, row);
}

export async function listShareLinks(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, cardId: string) {
  if (!(await cards.getCard(deps.sql, orgId, cardId))) throw cardNotFound();
  const now = new Date();
  return { share_links: (await links.listShareLinks(deps.sql, orgId, cardId)).map((r) => linkView(deps, r, now)) };
}

export async function getShareLink(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, cardId: string, linkId: string) {
  const row = await links.getShareLink(deps.sql, orgId, cardId, linkId);
  if (!row) throw notFound('Share link not found');
  return linkView(deps, row);
}

/** Revokes a link at once; idempotent. Its events stay, so its attribution remains readable. */
export async function revokeShareLink(deps: Pick<ServiceDeps, 'sql'>, orgId: string, cardId: string, linkId: string): Promise<void> {
  if (!(await links.revokeShareLink(deps.sql, orgId, cardId, linkId))) throw notFound('Share link not found');
}

// ---- public (no token) ----------------------------------------------------------------------------

/** The per-process limits of the public endpoints; one set per running app. */
export interface ShareLimiters {
  readsPerAddress: RateLimiter;
  readsPerLink: RateLimiter;
  leadsPerAddress: RateLimiter;
  leadsPerLink: RateLimiter;
}

export function createShareLimiters(config: Config): ShareLimiters {
  const windowSeconds = config.CARD_RATE_WINDOW_SECONDS;
  return {
    readsPerAddress: new RateLimiter({ limit: config.CARD_READS_PER_ADDRESS, windowSeconds }),
    readsPerLink: new RateLimiter({ limit: config.CARD_READS_PER_LINK, windowSeconds }),
    leadsPerAddress: new RateLimiter({ limit: config.CARD_LEADS_PER_ADDRESS, windowSeconds }),
    leadsPerLink: new RateLimiter({ limit: config.CARD_LEADS_PER_LINK, windowSeconds }),
  };
}

/** Where a public request came from: its client address (used for limits only, never stored) and attribution. */
export interface Visit {
  address: string;
  /** The User-Agent header: known crawlers and link expanders (isbot's list) are not counted as views. */
  userAgent?: string;
  referrer?: string;
  utm: Utm;
  via?: 'qr' | 'link';
}

/** A visit from where the request came from and its query (the UTM fields it carries, and `via`). */
export function visitFrom(origin: Pick<Visit, 'address' | 'userAgent' | 'referrer'>, query: Utm & { via?: Visit['via'] }): Visit {
  const utm: Utm = {};
  for (const field of UTM_FIELDS) if (query[field] !== undefined) utm[field] = query[field];
  return { ...origin, utm, via: query.via };
}

type PublicDeps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'> & { limiters: ShareLimiters };

function take(limiter: RateLimiter, key: string): void {
  const result = limiter.take(key);
  if (!result.ok) throw rateLimited('Too many requests, retry later', result.retryAfterSeconds);
}

const hidden = () => notFound('Share link not found');

/**
 * The live link and its card behind a token. The client address is limited first, before any lookup,
 * so guessing tokens costs the same budget as using them; then the link itself.
 */
async function open(deps: PublicDeps, token: string, visit: Visit, kind: 'read' | 'lead'): Promise<{ link: ShareLinkRow; card: CardRow }> {
  take(kind === 'read' ? deps.limiters.readsPerAddress : deps.limiters.leadsPerAddress, addressSubject(visit.address));
  if (!SHARE_TOKEN.test(token)) throw hidden();
  const link = await links.findLinkByToken(deps.sql, token);
  if (!link || linkState(link, link.now) !== 'active') throw hidden();
  take(kind === 'read' ? deps.limiters.readsPerLink : deps.limiters.leadsPerLink, link.id);
  const card = await cards.getCard(deps.sql, link.org_id, link.card_id);
  if (!card) throw hidden();
  return { link, card };
}

function record(deps: PublicDeps, link: ShareLinkRow, type: CardEventType, visit: Visit, detail: Record<string, unknown> = {}) {
  return recordCardEvent(deps.sql, link, type, { utm: visit.utm, referrer: cleanReferrer(visit.referrer) }, detail);
}

/**
 * A page load counts a view, and a QR scan too when the page was opened from the QR code; a crawler or
 * a link expander fetching the page for a preview (Slackbot, facebookexternalhit, LinkedInBot…) does not.
 */
async function recordOpen(deps: PublicDeps, link: ShareLinkRow, visit: Visit): Promise<void> {
  if (isbot(visit.userAgent)) return;
  await record(deps, link, 'view', visit);
  if (visit.via === 'qr') await record(deps, link, 'qr_scan', visit);
}

/** `?utm_...` to carry the visit's attribution into the page's own links, or ''. */
function attributionQuery(visit: Visit): string {
  const params = new URLSearchParams();
  for (const field of UTM_FIELDS) if (visit.utm[field]) params.set(field, visit.utm[field]!);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export async function publicCard(deps: PublicDeps, token: string, visit: Visit) {
  const { link, card } = await open(deps, token, visit, 'read');
  await recordOpen(deps, link, visit);
  const content = cardContent(deps, card);
  const url = shareUrl(deps, token);
  return {
    name: content.name,
    title: content.title,
    company: content.company,
    email: content.email,
    phone: content.phone,
    website: content.website,
    bio: content.bio,
    links: content.links.map((l, i) => ({ label: l.label, url: l.url, click_url: `${url}/links/${i}` })),
    photo_url: content.photo_url,
    logo_url: content.logo_url,
    primary_color: content.primary_color,
    accent_color: content.accent_color,
    vcard_url: `${url}/vcard`,
    leads_url: `${url}/leads`,
  };
}

export async function sharePage(deps: PublicDeps, token: string, visit: Visit) {
  const { link, card } = await open(deps, token, visit, 'read');
  await recordOpen(deps, link, visit);
  const nonce = crypto.randomBytes(16).toString('base64');
  const html = renderSharePage(cardContent(deps, card), { share: shareUrl(deps, token), query: attributionQuery(visit) }, nonce);
  return { html, csp: sharePageCsp(nonce) };
}

export async function vcard(deps: PublicDeps, token: string, visit: Visit) {
  const { link, card } = await open(deps, token, visit, 'read');
  await record(deps, link, 'vcard_download', visit);
  const content = cardContent(deps, card);
  return { body: renderVcard(content), filename: vcardFilename(content) };
}

/** The QR code of the link (opening it counts a scan); PNG of `size` pixels, or SVG. */
export async function qrCode(deps: PublicDeps, token: string, visit: Visit, format: 'png' | 'svg', size: number) {
  const { card } = await open(deps, token, visit, 'read');
  const text = `${shareUrl(deps, token)}?via=qr`;
  const color = { dark: card.primary_color, light: '#ffffff' };
  if (format === 'svg') return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color });
  return QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: size, color });
}

/** Where a card's link leads (a redirect), counting the click; an index the card lacks is 404. */
export async function linkClick(deps: PublicDeps, token: string, index: number, visit: Visit): Promise<string> {
  const { link, card } = await open(deps, token, visit, 'read');
  const target = card.links[index];
  if (!target) throw notFound('Link not found');
  await record(deps, link, 'link_click', visit, { index, label: target.label, url: target.url });
  return target.url;
}

const FORM_TRUE = new Set(['on', 'true', '1', 'yes']);

/**
 * The lead as a plain HTML form posts it, made into the JSON body's shape: an empty optional input counts as
 * not given (name and email stay, to be refused as empty), and the ticked consent checkbox ("on") is true.
 */
export function leadFromForm(fields: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([key, value]) => value !== '' || key === 'name' || key === 'email')
      .map(([key, value]) => [key, key === 'consent' && FORM_TRUE.has(value.toLowerCase()) ? true : value]),
  );
}

/** The refused fields of a lead as its form page names them (`form` for the body as a whole). */
export const leadProblems = (issues: readonly { loc: readonly (string | number)[]; msg: string }[]) =>
  issues.map((issue) => ({ field: String(issue.loc.slice(1).join('.') || 'form'), message: issue.msg }));

export interface LeadInput {
  name: string;
  email: string;
  phone?: string;
  company?: string;
  note?: string;
  consent: true;
}

/**
 * A visitor's details become a contact of the card's organization (source `card`, owned by the card's
 * owner, on the card's account when it has one), or fill the gaps of the contact with that email. The
 * submission itself, its consent time, a `lead_submitted` event and the owner's notification
 * (`card.lead_submitted`) are written in the same transaction.
 */
/**
 * A lead waits in the card's inbox (status `pending`) until a person accepts it into the CRM: the form
 * is anonymous, so it never writes a contact by itself (services/card-leads.ts).
 */
export async function submitLead(
  deps: PublicDeps,
  token: string,
  visit: Visit,
  input: LeadInput,
): Promise<{ status: 'received'; cardName: string }> {
  const { link, card } = await open(deps, token, visit, 'lead');
  const orgId = link.org_id;
  await deps.sql.begin(async (tx) => {
    const lead = await links.insertLead(tx, orgId, {
      id: newId(),
      card_id: card.id,
      share_link_id: link.id,
      contact_id: null,
      contact_created: false,
      name: input.name,
      email: input.email,
      phone: input.phone ?? null,
      company: input.company ?? null,
      note: input.note ?? null,
    });
    await recordCardEvent(tx, link, 'lead_submitted', { utm: visit.utm, referrer: cleanReferrer(visit.referrer) }, { lead_id: lead.id });
    // The owner hears of it through the notification outbox, committed with the lead itself.
    await emitEvent(tx, orgId, {
      event_type: 'card.lead_submitted',
      entity_type: 'card',
      entity_id: card.id,
      payload: {
        name: input.name,
        email: input.email,
        company: input.company ?? null,
        card_id: card.id,
        card_name: card.name,
        share_link_id: link.id,
        source: link.source,
        lead_id: lead.id,
      },
      recipient_user_ids: [card.owner_user_id],
    });
  });
  // The card's name is for the thank-you page of a plain form post; the JSON answer is the status alone.
  return { status: 'received', cardName: card.name };
}
