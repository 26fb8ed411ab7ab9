import type { PageProfile } from '../llm/llm';
import { guardedRequest, WebFetchError } from './guarded-http';
import { LINE_BREAKING, squash, walkHtmlText } from './html-text';

export { addressRange, isBlockedAddress, WebFetchError, type WebFetchErrorCode } from './guarded-http';

/**
 * Fetching a page a caller named, through the guarded client (`guarded-http.ts`: public addresses
 * only, checked where they are dialled, every redirect hop checked again): redirects are followed and
 * bounded, time and size are capped, and only HTML or plain text is read.
 */
export interface WebFetchOptions {
  /**
   * Let private, loopback and link-local addresses through (tests serve sites on 127.0.0.1): all of
   * them, or those the function accepts.
   */
  allowPrivate?: boolean | ((address: string) => boolean);
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

export interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  body: string;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
  /** Every URL redirected through, in order. */
  redirects: string[];
}

const DEFAULTS = { timeoutMs: 10_000, maxBytes: 2 * 1024 * 1024, maxRedirects: 5 };
const TEXT_TYPES = /^(text\/html|application\/xhtml\+xml|text\/plain)\b/i;

function decode(body: Buffer, contentType: string): string {
  const charset = /charset="?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** GET one page, following at most maxRedirects redirects, each re-checked like the first URL. */
export async function fetchPage(raw: string, options: WebFetchOptions = {}): Promise<FetchedPage> {
  const { timeoutMs, maxBytes, maxRedirects } = { ...DEFAULTS, ...options };
  const page = await guardedRequest(raw, {
    headers: { 'User-Agent': 'voice-crm-agent-builder/1.0', Accept: 'text/html,application/xhtml+xml,text/plain;q=0.8' },
    allowPrivate: options.allowPrivate,
    timeoutMs,
    maxBytes,
    oversize: 'truncate',
    maxRedirects: maxRedirects ?? DEFAULTS.maxRedirects,
    // Error pages and other types are never downloaded.
    readBody: (status, contentType) => status >= 200 && status < 300 && TEXT_TYPES.test(contentType),
    wording: 'fetch',
  });
  if (page.status < 200 || page.status >= 300)
    throw new WebFetchError('http_status', `${page.url.origin} answered ${page.status}`, page.status >= 500 || page.status === 429);
  if (!TEXT_TYPES.test(page.contentType))
    throw new WebFetchError('unsupported_content_type', `Not a web page: ${page.contentType || 'no content type'}`);
  return {
    url: page.url.toString(),
    status: page.status,
    contentType: page.contentType,
    body: decode(page.body, page.contentType),
    truncated: page.truncated,
    redirects: page.redirects,
  };
}

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'head']);
const HEADINGS = new Set(['h1', 'h2', 'h3']);
const BLOCKS = new Set<string>([...LINE_BREAKING, 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'footer']);

/** Title, meta description, headings (h1-h3) and the readable text of an HTML page. */
export function extractPageProfile(html: string, url: string, maxText = 20_000): PageProfile {
  const headings: string[] = [];
  const text: string[] = [];
  const walk = walkHtmlText(
    html,
    { skipped: SKIPPED, blocks: BLOCKS, headings: HEADINGS },
    {
      text: (data) => text.push(data),
      blockBreak: () => text.push('\n'),
      heading: (_level, pieces) => {
        const h = squash(pieces.join(' '));
        if (h && headings.length < 30) headings.push(h);
      },
    },
  );
  const body = text.join('').split('\n').map(squash).filter(Boolean).join('\n').slice(0, maxText);
  return { url, title: squash(walk.title) || null, description: walk.description, headings, text: body };
}
