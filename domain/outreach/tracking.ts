import { Parser } from 'htmlparser2';
import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';

// Open and click tracking of a sent HTML message: which links are rewritten, where the pixel goes, and
// which opens and clicks were made by a machine rather than a person.

/** How a tracked link or pixel is addressed: the message's pixel URL and the URL of its link `index`. */
export interface TrackingUrls {
  pixel: string;
  click: (index: number) => string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Only web links are followed through the redirect; mailto:, tel:, anchors and the unsubscribe link stay as written. */
function isTrackable(url: string, untracked: (url: string) => boolean): boolean {
  if (!/^https?:\/\//i.test(url) || untracked(url)) return false;
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * The message's HTML with each web link (`<a href="http(s)://…">`, in document order) pointing at its
 * redirect and a 1×1 pixel before `</body>` (or at the end). `links[i]` is the URL link `i` redirects
 * to, as the href said it (entities decoded). Deterministic: the same HTML always gives the same links
 * in the same order, so the links recorded at reservation are the ones the sent message names.
 * Everything else of the HTML is kept byte for byte.
 */
export function instrumentHtml(
  html: string,
  urls: TrackingUrls | null,
  untracked: (url: string) => boolean = () => false,
): { html: string; links: string[] } {
  const links: string[] = [];
  const edits: { start: number; end: number; text: string }[] = [];
  let tag = '';
  let hrefSeen = false;
  let bodyClose = -1;
  const parser = new Parser(
    {
      onopentagname(name) {
        tag = name;
        hrefSeen = false;
      },
      onattribute(name, value) {
        if (tag !== 'a' || name !== 'href' || hrefSeen) return;
        hrefSeen = true; // a browser follows the first href of a tag only
        const url = value.trim();
        if (!isTrackable(url, untracked)) return;
        const index = links.push(url) - 1;
        if (urls) edits.push({ start: parser.startIndex, end: parser.endIndex, text: `href="${escapeAttribute(urls.click(index))}"` });
      },
      onclosetag(name, implied) {
        if (name === 'body' && !implied && bodyClose < 0) bodyClose = parser.startIndex;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  if (!urls) return { html, links };
  const pixel = `<img src="${escapeAttribute(urls.pixel)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`;
  edits.push({ start: bodyClose < 0 ? html.length : bodyClose, end: bodyClose < 0 ? html.length : bodyClose, text: pixel });
  let out = '';
  let at = 0;
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    out += html.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return { html: out + html.slice(at), links };
}

// ---- machines among the openers and clickers --------------------------------------------------------

/**
 * Why an open or a click is not counted as a person's:
 * - `apple_privacy`: Apple Mail Privacy Protection loads every image of every message through Apple's
 *   proxies when it arrives, whether or not anyone reads it (Apple's 17.0.0.0/8, a bare `Mozilla/5.0`);
 * - `prefetch`: an open within OPEN_PREFETCH_SECONDS of delivery (a gateway or a client fetching ahead);
 * - `scanner`: a click within CLICK_SCANNER_SECONDS of delivery, or a burst of clicks on different links
 *   of one message within CLICK_BURST_SECONDS (security scanners follow every link at once);
 * - `bot`: a crawler, an HTTP library or no User-Agent at all (`isbot`);
 * - `head`: a HEAD request (link checkers; a person's browser sends GET).
 */
export type BotReason = 'apple_privacy' | 'prefetch' | 'scanner' | 'bot' | 'head';

export const OPEN_PREFETCH_SECONDS = 5;
export const CLICK_SCANNER_SECONDS = 10;
export const CLICK_BURST_SECONDS = 3;

/** Apple's network: Mail Privacy Protection's image proxies fetch from it. */
const APPLE_RANGES = [ipaddr.parseCIDR('17.0.0.0/8')] as const;

/** Proxies that fetch images when a person opens the message (Gmail, Yahoo): a person's open. */
const PERSON_PROXY = /GoogleImageProxy|YahooMailProxy/i;

function isAppleAddress(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.kind() === 'ipv4' && APPLE_RANGES.some(([range, bits]) => (parsed as ipaddr.IPv4).match(range as ipaddr.IPv4, bits));
}

export interface Hit {
  method: string;
  userAgent: string | undefined;
  address: string | undefined;
  /** When the message was handed to the mail server (null: not recorded yet, so just now). */
  sentAt: Date | null;
  at: Date;
}

const secondsSinceSent = (hit: Hit) => (hit.sentAt ? (hit.at.getTime() - hit.sentAt.getTime()) / 1000 : 0);

/** Null when a person opened the message; otherwise why the open is a machine's. */
export function classifyOpen(hit: Hit): BotReason | null {
  const ua = hit.userAgent?.trim() ?? '';
  if (hit.method === 'HEAD') return 'head';
  if (isAppleAddress(hit.address) || ua === 'Mozilla/5.0') return 'apple_privacy';
  if (secondsSinceSent(hit) < OPEN_PREFETCH_SECONDS) return 'prefetch';
  if (PERSON_PROXY.test(ua)) return null;
  if (!ua || isbot(ua)) return 'bot';
  return null;
}

/**
 * Null when a person clicked; otherwise why the click is a machine's. `otherLinkClickedWithin` is
 * whether another link of the same message was clicked within CLICK_BURST_SECONDS before this one.
 */
export function classifyClick(hit: Hit, otherLinkClickedWithin: boolean): BotReason | null {
  const ua = hit.userAgent?.trim() ?? '';
  if (hit.method === 'HEAD') return 'head';
  if (!ua || isbot(ua)) return 'bot';
  if (secondsSinceSent(hit) < CLICK_SCANNER_SECONDS || otherLinkClickedWithin) return 'scanner';
  return null;
}
