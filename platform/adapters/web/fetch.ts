import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Parser } from 'htmlparser2';
import ipaddr from 'ipaddr.js';
import type { PageProfile } from '../llm/llm';

/**
 * Fetching a page a caller named, without letting the caller reach our own network: every hop is
 * resolved and checked before connecting (the check runs inside the socket's DNS lookup, so the
 * address checked is the address dialled), redirects are followed by hand and bounded, and time and
 * size are capped.
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

export type WebFetchErrorCode =
  | 'invalid_url'
  | 'blocked_address'
  | 'dns_failed'
  | 'too_many_redirects'
  | 'timeout'
  | 'http_status'
  | 'unsupported_content_type'
  | 'network';

export class WebFetchError extends Error {
  constructor(
    readonly code: WebFetchErrorCode,
    message: string,
    /** Worth another attempt later (timeouts, network trouble, 5xx). */
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'WebFetchError';
  }
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
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const TEXT_TYPES = /^(text\/html|application\/xhtml\+xml|text\/plain)\b/i;

// Address classification comes from ipaddr.js, whose special-purpose ranges follow the IANA IPv4 and
// IPv6 Special-Purpose Address Registries. An IPv4 address is public only when it is in none of them.
// An IPv6 address is public only when it is in none of them and inside 2000::/3, the only block IANA
// allocates as global unicast (so IPv4-compatible ::a.b.c.d, ::/8 and every unallocated block are
// refused). The forms that carry an IPv4 address to where it is routed (IPv4-mapped, the well-known
// NAT64 prefix, 6to4) are judged by the IPv4 address they carry; other translation and tunnel forms
// (SIIT, local-use NAT64, Teredo) are refused outright.
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/** The IPv4 address carried in bits `from`..`from+32` of an IPv6 address. */
function embeddedIPv4(address: ipaddr.IPv6, fromBit: number): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  const at = fromBit / 8;
  return new ipaddr.IPv4(bytes.slice(at, at + 4));
}

/** Which IANA special-purpose block (ipaddr.js's name) an address is in, or 'unicast'; undefined if not an address. */
export function addressRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  return ipaddr.parse(address).range();
}

function isBlockedParsed(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() !== 'unicast';
  const v6 = address as ipaddr.IPv6;
  switch (v6.range()) {
    case 'ipv4Mapped':
      return isBlockedParsed(v6.toIPv4Address());
    case 'rfc6052':
      return v6.match(WELL_KNOWN_NAT64) ? isBlockedParsed(embeddedIPv4(v6, 96)) : true;
    case '6to4':
      return isBlockedParsed(embeddedIPv4(v6, 16));
    case 'unicast':
      return !v6.match(GLOBAL_UNICAST);
    default:
      return true;
  }
}

/** True for addresses no outside site may make us call: anything but public unicast, in any embedding. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) === 0 || !ipaddr.isValid(bare)) return true;
  return isBlockedParsed(ipaddr.parse(bare));
}

type AllowPrivate = (address: string) => boolean;
const refused = (address: string, allow: AllowPrivate) => isBlockedAddress(address) && !allow(address);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A socket lookup that refuses blocked addresses, so what is checked is exactly what is dialled. */
export function guardedLookup(allow: AllowPrivate) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(new WebFetchError('dns_failed', `Cannot resolve ${hostname}`, true) as NodeJS.ErrnoException, '');
      const list = addresses as dns.LookupAddress[];
      if (list.some((a) => refused(a.address, allow)))
        return callback(new WebFetchError('blocked_address', `${hostname} resolves to a non-public address`) as NodeJS.ErrnoException, '');
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** A URL the fetcher may dial: http(s), no credentials, a literal address only when public (or allowed). */
export function parseTarget(raw: string, allow: AllowPrivate): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebFetchError('invalid_url', `Not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebFetchError('invalid_url', `Only http and https URLs are fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new WebFetchError('invalid_url', 'URLs with credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Literal addresses never pass through the socket's lookup, so they are checked here.
  if (net.isIP(host) && refused(host, allow)) throw new WebFetchError('blocked_address', `${host} is not a public address`);
  return url;
}

interface Hop {
  status: number;
  location: string | undefined;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

function requestOnce(url: URL, allow: AllowPrivate, maxBytes: number, deadline: number): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(new WebFetchError('timeout', 'Timed out', true));
    const get = url.protocol === 'https:' ? https.get : http.get;
    const req = get(
      url,
      {
        lookup: guardedLookup(allow) as unknown as typeof dns.lookup,
        headers: { 'User-Agent': 'voice-crm-agent-builder/1.0', Accept: 'text/html,application/xhtml+xml,text/plain;q=0.8' },
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers['content-type'] ?? '');
        const done = (body: Buffer, truncated: boolean) => {
          clearTimeout(timer);
          resolve({ status, location: res.headers.location, contentType, body, truncated });
        };
        if (REDIRECTS.has(status) || status >= 400 || !TEXT_TYPES.test(contentType)) {
          res.destroy();
          return done(Buffer.alloc(0), false);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size + chunk.length > maxBytes) {
            chunks.push(chunk.subarray(0, maxBytes - size));
            res.destroy();
            return done(Buffer.concat(chunks), true);
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => done(Buffer.concat(chunks), false));
        res.on('error', (e) => fail(e));
      },
    );
    const fail = (e: unknown) => {
      clearTimeout(timer);
      req.destroy();
      if (e instanceof WebFetchError) return reject(e);
      const cause = (e as { cause?: unknown }).cause;
      if (cause instanceof WebFetchError) return reject(cause);
      reject(new WebFetchError('network', `Cannot fetch ${url.origin}: ${(e as Error).message}`, true));
    };
    const timer = setTimeout(() => fail(new WebFetchError('timeout', `Timed out fetching ${url.origin}`, true)), remaining);
    req.on('error', fail);
  });
}

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
  const option = options.allowPrivate ?? false;
  const allow: AllowPrivate = typeof option === 'function' ? option : () => option;
  const deadline = Date.now() + timeoutMs;
  const redirects: string[] = [];
  let url = parseTarget(raw, allow);
  for (;;) {
    const hop = await requestOnce(url, allow, maxBytes, deadline);
    if (REDIRECTS.has(hop.status) && hop.location) {
      if (redirects.length >= maxRedirects) throw new WebFetchError('too_many_redirects', `More than ${maxRedirects} redirects`);
      redirects.push(url.toString());
      url = parseTarget(new URL(hop.location, url).toString(), allow);
      continue;
    }
    if (hop.status >= 400 || hop.status < 200 || hop.status >= 300)
      throw new WebFetchError('http_status', `${url.origin} answered ${hop.status}`, hop.status >= 500 || hop.status === 429);
    if (!TEXT_TYPES.test(hop.contentType))
      throw new WebFetchError('unsupported_content_type', `Not a web page: ${hop.contentType || 'no content type'}`);
    return {
      url: url.toString(),
      status: hop.status,
      contentType: hop.contentType,
      body: decode(hop.body, hop.contentType),
      truncated: hop.truncated,
      redirects,
    };
  }
}

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'head']);
const HEADINGS = new Set(['h1', 'h2', 'h3']);
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'li',
  'br',
  'tr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'main',
  'header',
  'footer',
]);
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Title, meta description, headings (h1-h3) and the readable text of an HTML page. */
export function extractPageProfile(html: string, url: string, maxText = 20_000): PageProfile {
  let title = '';
  let description: string | null = null;
  const headings: string[] = [];
  const text: string[] = [];
  const stack: string[] = [];
  let skipDepth = 0;
  let inTitle = false;
  let heading: string[] | null = null;

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        stack.push(name);
        if (name === 'title') inTitle = true;
        if (name === 'meta') {
          const key = (attrs.name ?? attrs.property ?? '').toLowerCase();
          if ((key === 'description' || (key === 'og:description' && !description)) && attrs.content) description = squash(attrs.content);
        }
        if (SKIPPED.has(name)) skipDepth++;
        if (HEADINGS.has(name)) heading = [];
        if (BLOCKS.has(name)) text.push('\n');
      },
      ontext(data) {
        if (inTitle) title += data;
        if (skipDepth > 0) return;
        heading?.push(data);
        text.push(data);
      },
      onclosetag(name) {
        stack.pop();
        if (name === 'title') inTitle = false;
        if (SKIPPED.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        if (HEADINGS.has(name) && heading) {
          const h = squash(heading.join(' '));
          if (h && headings.length < 30) headings.push(h);
          heading = null;
        }
        if (BLOCKS.has(name)) text.push('\n');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();

  const body = text.join('').split('\n').map(squash).filter(Boolean).join('\n').slice(0, maxText);
  return { url, title: squash(title) || null, description, headings, text: body };
}
