import * as seqs from '../db/outreach-sequences';
import { notFound, rateLimited } from '../domain/errors';
import { escapeHtml } from '../domain/outreach-templates';
import { addressSubject } from '../platform/client-address';
import { publicBaseUrl, type Config } from '../platform/config';
import { RateLimiter } from '../platform/rate-limit';
import type { ServiceDeps } from './deps';
import { suppressAddress } from './outreach-suppressions';

// One-click unsubscribe (RFC 8058). Every sequence step names `/outreach/unsubscribe/{token}`, the
// enrollment's random token: a POST lists the address (reason `unsubscribe`) and stops the enrollment;
// a GET only shows a page whose button makes that POST (link scanners prefetch GETs). Unknown tokens
// are one 404; the client address is limited before any lookup, so guessing costs the same budget.

export const UNSUBSCRIBE_TOKEN = /^[0-9a-f]{64}$/;
export const UNSUBSCRIBE_BODY_LIMIT_BYTES = 1024;

export const unsubscribeUrl = (config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>, token: string) =>
  `${publicBaseUrl(config).replace(/\/+$/, '')}/outreach/unsubscribe/${token}`;

export const createUnsubscribeLimiter = (config: Pick<Config, 'OUTREACH_UNSUBSCRIBE_PER_ADDRESS' | 'CARD_RATE_WINDOW_SECONDS'>) =>
  new RateLimiter({ limit: config.OUTREACH_UNSUBSCRIBE_PER_ADDRESS, windowSeconds: config.CARD_RATE_WINDOW_SECONDS });

type UnsubscribeDeps = Pick<ServiceDeps, 'sql'> & { limiter: RateLimiter };

const hidden = () => notFound('Unsubscribe link not found');

async function enrollmentOf(deps: UnsubscribeDeps, token: string, address: string) {
  const taken = deps.limiter.take(addressSubject(address));
  if (!taken.ok) throw rateLimited('Too many requests, retry later', taken.retryAfterSeconds);
  if (!UNSUBSCRIBE_TOKEN.test(token)) throw hidden();
  const enrollment = await seqs.findByUnsubscribeToken(deps.sql, token);
  if (!enrollment) throw hidden();
  return enrollment;
}

/** Lists the address and stops the enrollment; the same answer every time (idempotent). */
export async function unsubscribe(deps: UnsubscribeDeps, token: string, address: string): Promise<{ unsubscribed: true }> {
  await enrollmentOf(deps, token, address);
  await deps.sql.begin(async (tx) => {
    const enrollment = (await seqs.findByUnsubscribeToken(tx, token, true))!;
    await seqs.markUnsubscribed(tx, enrollment.org_id, enrollment.id);
    await suppressAddress(tx, enrollment.org_id, enrollment.email ?? '', 'unsubscribe', 'One-click unsubscribe link');
  });
  return { unsubscribed: true };
}

const STYLE = `body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:420px;margin:15vh auto 0;padding:24px;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:20px;margin:0 0 8px}p{margin:0 0 16px;line-height:1.5;color:#374151}
button{font:inherit;padding:10px 18px;border:0;border-radius:8px;background:#111827;color:#fff;cursor:pointer}`;

/** No script, no outside resource; the form posts to this same address only. */
export const UNSUBSCRIBE_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const page = (title: string, body: string) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;

/** The confirmation page: nothing changes until its button is pressed. */
export async function unsubscribePage(deps: UnsubscribeDeps, token: string, address: string): Promise<string> {
  const enrollment = await enrollmentOf(deps, token, address);
  if (enrollment.unsubscribed_at) return unsubscribedPage();
  return page(
    'Unsubscribe',
    `<p>Stop receiving these emails? Your address goes on the sender's do-not-contact list.</p>
<form method="post" action="/outreach/unsubscribe/${token}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );
}

export const unsubscribedPage = () => page('You are unsubscribed', '<p>You will not receive these emails again.</p>');
