import * as seqs from '../../db/outreach/sequences';
import { senderOfToken, type UnsubscribeSender } from '../../db/outreach/unsubscribe';
import { notFound, rateLimited } from '../../domain/errors';
import { escapeHtml } from '../../domain/outreach/templates';
import { publicBaseUrl, type Config } from '../../platform/core/config';
import { RateLimiter } from '../../platform/core/rate-limit';
import type { ServiceDeps } from '../deps';
import { suppressAddress } from './suppressions';

// One-click unsubscribe (RFC 8058). Every sequence step names `/outreach/unsubscribe/{token}`, the
// enrollment's random token: a POST lists the address (reason `unsubscribe`) and stops the enrollment;
// a GET only shows a page whose button makes that POST (link scanners prefetch GETs). Unknown tokens
// are one 404; each link is limited (OUTREACH_UNSUBSCRIBE_PER_TOKEN a window) before its lookup.

export const UNSUBSCRIBE_TOKEN = /^[0-9a-f]{64}$/;
export const UNSUBSCRIBE_BODY_LIMIT_BYTES = 1024;

export const unsubscribeUrl = (config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>, token: string) =>
  `${publicBaseUrl(config).replace(/\/+$/, '')}/outreach/unsubscribe/${token}`;

/**
 * Requests per link (token), not per client address: a mailbox provider posts every one-click unsubscribe
 * of its users from a few servers, and a limit per address would refuse them. A token is 256 random bits,
 * so a limit per token costs a guesser nothing it did not already lack; malformed tokens never reach it.
 */
export const createUnsubscribeLimiter = (config: Pick<Config, 'OUTREACH_UNSUBSCRIBE_PER_TOKEN' | 'CARD_RATE_WINDOW_SECONDS'>) =>
  new RateLimiter({ limit: config.OUTREACH_UNSUBSCRIBE_PER_TOKEN, windowSeconds: config.CARD_RATE_WINDOW_SECONDS });

type UnsubscribeDeps = Pick<ServiceDeps, 'sql'> & { limiter: RateLimiter };

const hidden = () => notFound('Unsubscribe link not found');

async function enrollmentOf(deps: UnsubscribeDeps, token: string) {
  if (!UNSUBSCRIBE_TOKEN.test(token)) throw hidden();
  const taken = deps.limiter.take(token);
  if (!taken.ok) throw rateLimited('Too many requests, retry later', taken.retryAfterSeconds);
  const enrollment = await seqs.findByUnsubscribeToken(deps.sql, token);
  if (!enrollment) throw hidden();
  return enrollment;
}

/**
 * Lists the address and stops the enrollment; the same answer every time (idempotent). Answers the
 * JSON body and the page a browser gets (naming the address and the sender).
 */
export async function unsubscribe(deps: UnsubscribeDeps, token: string): Promise<{ answer: { unsubscribed: true }; html: string }> {
  const found = await enrollmentOf(deps, token);
  await deps.sql.begin(async (tx) => {
    const enrollment = (await seqs.findByUnsubscribeToken(tx, token, true))!;
    await seqs.markUnsubscribed(tx, enrollment.org_id, enrollment.id);
    await suppressAddress(tx, enrollment.org_id, enrollment.email ?? '', 'unsubscribe', 'One-click unsubscribe link');
  });
  return { answer: { unsubscribed: true }, html: unsubscribedPage(found.email, await senderOfToken(deps.sql, token)) };
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

/** The sender as the page names it: "Sam Sender (sam@example.com)", or the address alone. */
function senderText(sender: UnsubscribeSender): string {
  const name = sender.sender_name?.trim();
  const address = sender.sender_address;
  if (name && address) return `<strong>${escapeHtml(name)}</strong> (${escapeHtml(address)})`;
  if (name || address) return `<strong>${escapeHtml((name || address)!)}</strong>`;
  return 'the sender';
}

const recipientText = (email: string | null) => (email ? `<strong>${escapeHtml(email)}</strong>` : 'your address');

/** The confirmation page, naming the address and the sender: nothing changes until its button is pressed. */
export async function unsubscribePage(deps: UnsubscribeDeps, token: string): Promise<string> {
  const enrollment = await enrollmentOf(deps, token);
  const sender = await senderOfToken(deps.sql, token);
  if (enrollment.unsubscribed_at) return unsubscribedPage(enrollment.email, sender);
  return page(
    'Unsubscribe',
    `<p>Stop emails from ${senderText(sender)} to ${recipientText(enrollment.email)}? The address goes on the sender's do-not-contact list.</p>
<form method="post" action="/outreach/unsubscribe/${token}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );
}

export const unsubscribedPage = (email: string | null, sender: UnsubscribeSender) =>
  page('You are unsubscribed', `<p>${recipientText(email)} will not receive emails from ${senderText(sender)} again.</p>`);

const ERROR_PAGES: Record<number, [string, string]> = {
  404: [
    'This unsubscribe link is not valid',
    'Check that the whole link from the email was opened, or reply to the sender asking to be removed.',
  ],
  429: ['Too many requests', 'This link was opened too many times in a short while. Please wait a minute and try again.'],
};

/** The unknown-link 404 and the 429 as a person's browser gets them (API clients keep the JSON body). */
export function unsubscribeErrorPage(status: 404 | 429, retryAfterSeconds?: number): string {
  const [title, message] = ERROR_PAGES[status]!;
  const wait = status === 429 && retryAfterSeconds ? ` (about ${retryAfterSeconds} seconds)` : '';
  return page(title, `<p>${escapeHtml(message)}${wait}</p>`);
}
