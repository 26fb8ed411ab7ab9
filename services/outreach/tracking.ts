import crypto from 'node:crypto';
import type { Db } from '../../db/client';
import * as db from '../../db/outreach/tracking';
import { notFound } from '../../domain/errors';
import {
  CLICK_BURST_SECONDS,
  classifyClick,
  classifyOpen,
  instrumentHtml,
  type Hit,
  type TrackingUrls,
} from '../../domain/outreach/tracking';
import { addressSubject } from '../../platform/core/client-address';
import { publicBaseUrl, type Config } from '../../platform/core/config';
import { newId } from '../../platform/core/ids';
import { RateLimiter } from '../../platform/core/rate-limit';
import { deriveKey, loadMasterKey, parsePreviousKeys } from '../../platform/core/secrets';
import type { ServiceDeps } from '../deps';

// Open and click tracking. A step sent through a mailbox whose sending domain tracks gets, in its HTML
// only, a 1×1 pixel `GET /t/o/{token}.gif` and each web link rewritten to `GET /t/c/{token}`, on the
// domain's tracking host (its `track.` CNAME points at this service). A token is the message id (and
// the link's index) with an HMAC under a key derived from ENCRYPTION_KEY: a token that does not verify
// is a 404, and a click redirects only to the URL recorded for that message and index at reservation.

type KeyConfig = Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>;
type UrlConfig = KeyConfig & Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>;

const MAC_BYTES = 16;
const ID_BYTES = 16;
/** Events kept per message and kind; more are answered and not stored (a message reloaded in a loop). */
const MAX_EVENTS_PER_MESSAGE = 100;
/** Hits recorded per client address per CARD_RATE_WINDOW_SECONDS; past it they are answered, not recorded. */
const RECORDED_PER_ADDRESS = 300;

/** A transparent 1×1 GIF. */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const keyrings = new Map<string, { current: Buffer; all: Buffer[] }>();

/** The signing key (and those of ENCRYPTION_KEYS_PREVIOUS, so links in mail sent before a rotation still work). */
function trackingKeys(config: KeyConfig) {
  const cacheKey = `${config.dataDir}|${config.ENCRYPTION_KEY ?? ''}|${config.ENCRYPTION_KEYS_PREVIOUS ?? ''}`;
  let ring = keyrings.get(cacheKey);
  if (!ring) {
    const current = deriveKey(loadMasterKey(config.ENCRYPTION_KEY, config.dataDir), 'outreach-tracking');
    const previous = parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS).map((k) => deriveKey(k, 'outreach-tracking'));
    ring = { current, all: [current, ...previous] };
    keyrings.set(cacheKey, ring);
  }
  return ring;
}

const mac = (key: Buffer, purpose: 'open' | 'click', payload: Buffer) =>
  crypto.createHmac('sha256', key).update(purpose).update(payload).digest().subarray(0, MAC_BYTES);

function payloadOf(messageId: string, index?: number): Buffer {
  const id = Buffer.from(messageId.replace(/-/g, ''), 'hex');
  if (index === undefined) return id;
  const at = Buffer.alloc(2);
  at.writeUInt16BE(index);
  return Buffer.concat([id, at]);
}

const sign = (config: KeyConfig, purpose: 'open' | 'click', payload: Buffer) =>
  Buffer.concat([payload, mac(trackingKeys(config).current, purpose, payload)]).toString('base64url');

export const openToken = (config: KeyConfig, messageId: string) => sign(config, 'open', payloadOf(messageId));
export const clickToken = (config: KeyConfig, messageId: string, index: number) => sign(config, 'click', payloadOf(messageId, index));

/** The message id (and link index) a token names, or null when it does not verify. */
function verify(config: KeyConfig, purpose: 'open' | 'click', token: string): { messageId: string; index: number } | null {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(token)) return null;
  const raw = Buffer.from(token, 'base64url');
  const payloadBytes = ID_BYTES + (purpose === 'click' ? 2 : 0);
  if (raw.length !== payloadBytes + MAC_BYTES || raw.toString('base64url') !== token) return null;
  const payload = raw.subarray(0, payloadBytes);
  const given = raw.subarray(payloadBytes);
  if (!trackingKeys(config).all.some((key) => crypto.timingSafeEqual(mac(key, purpose, payload), given))) return null;
  const hex = payload.subarray(0, ID_BYTES).toString('hex');
  const messageId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { messageId, index: purpose === 'click' ? payload.readUInt16BE(ID_BYTES) : 0 };
}

/** The tracking host's base URL, with the scheme of the service's public address. */
export const trackingBaseUrl = (config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>, trackingHost: string) =>
  `${new URL(publicBaseUrl(config)).protocol}//${trackingHost}`;

const urlsOf = (config: KeyConfig, baseUrl: string, messageId: string): TrackingUrls => ({
  pixel: `${baseUrl}/t/o/${openToken(config, messageId)}.gif`,
  click: (index) => `${baseUrl}/t/c/${clickToken(config, messageId, index)}`,
});

/** The unsubscribe link is never wrapped: mail clients and filters look for it as it is. */
const untrackedOf = (config: UrlConfig) => {
  const unsubscribe = `${publicBaseUrl(config).replace(/\/+$/, '')}/outreach/unsubscribe/`;
  return (url: string) => url.startsWith(unsubscribe);
};

/**
 * Inside the reservation's transaction: records that the message goes out tracked, with the URL of
 * each link its HTML will redirect through. The stored HTML stays as written (the unibox shows it, and
 * a person reading their own thread must not count as an open); the send rewrites it (`trackedHtml`).
 */
export async function recordTrackedMessage(tx: Db, config: UrlConfig, orgId: string, messageId: string, baseUrl: string, html: string) {
  const { links } = instrumentHtml(html, null, untrackedOf(config));
  await db.insertTrackedMessage(tx, orgId, messageId, baseUrl, links);
}

/** The HTML as sent: the pixel and the rewritten links (the same links, in the same order, as recorded). */
export function trackedHtml(config: UrlConfig, messageId: string, baseUrl: string, html: string): string {
  return instrumentHtml(html, urlsOf(config, baseUrl, messageId), untrackedOf(config)).html;
}

// ---- the public routes ----

export const createTrackingLimiter = (config: Pick<Config, 'CARD_RATE_WINDOW_SECONDS'>) =>
  new RateLimiter({ limit: RECORDED_PER_ADDRESS, windowSeconds: config.CARD_RATE_WINDOW_SECONDS });

type TrackingDeps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'> & { limiter: RateLimiter };
export type Request = Omit<Hit, 'sentAt' | 'at'>;

const unknownLink = () => notFound('Link not found');

/** Whether this hit is stored: within the address's budget and the message's. */
async function recordable(deps: TrackingDeps, orgId: string, messageId: string, kind: 'open' | 'click', request: Request) {
  if (!deps.limiter.take(addressSubject(request.address ?? 'unknown')).ok) return false;
  return (await db.countEvents(deps.sql, orgId, messageId, kind)) < MAX_EVENTS_PER_MESSAGE;
}

const userAgentOf = (request: Request) => request.userAgent?.slice(0, 300) || null;

/** Records an open of the message the token names (a person's, or why not); 404 for a token that does not verify. */
export async function recordOpen(deps: TrackingDeps, token: string, request: Request): Promise<void> {
  const named = verify(deps.config, 'open', token);
  const message = named && (await db.findTrackedMessage(deps.sql, named.messageId));
  if (!message) throw unknownLink();
  if (!(await recordable(deps, message.org_id, message.message_id, 'open', request))) return;
  const at = new Date();
  await db.insertEvent(deps.sql, message.org_id, {
    id: newId(),
    message_id: message.message_id,
    kind: 'open',
    link_index: null,
    bot_reason: classifyOpen({ ...request, sentAt: message.sent_at, at }),
    user_agent: userAgentOf(request),
    occurred_at: at,
  });
}

/**
 * The URL recorded for the message and link the token names, and the click recorded (a person's, or
 * why not). Nothing of the request chooses where it goes; a token that does not verify is a 404.
 */
export async function followClick(deps: TrackingDeps, token: string, request: Request): Promise<string> {
  const named = verify(deps.config, 'click', token);
  const message = named && (await db.findTrackedMessage(deps.sql, named.messageId));
  const url = message?.links[named!.index];
  if (!message || !url) throw unknownLink();
  if (await recordable(deps, message.org_id, message.message_id, 'click', request)) {
    const at = new Date();
    await deps.sql.begin(async (tx) => {
      // One click of a message at a time: a burst is judged with every click before it in view.
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`outreach-click:${message.message_id}`}, 0))`;
      const burst = await db.markClickBurst(
        tx,
        message.org_id,
        message.message_id,
        named!.index,
        new Date(at.getTime() - CLICK_BURST_SECONDS * 1000),
      );
      await db.insertEvent(tx, message.org_id, {
        id: newId(),
        message_id: message.message_id,
        kind: 'click',
        link_index: named!.index,
        bot_reason: classifyClick({ ...request, sentAt: message.sent_at, at }, burst),
        user_agent: userAgentOf(request),
        occurred_at: at,
      });
    });
  }
  return url;
}
