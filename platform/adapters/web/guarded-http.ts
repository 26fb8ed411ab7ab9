import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The one HTTP client for URLs a caller named (web pages, credential refreshers' endpoints), without
 * letting the caller reach our own network: every hop is resolved and checked before connecting (the
 * check runs inside the socket's DNS lookup, so the address checked is the address dialled), redirects
 * are followed by hand, each hop checked again, and bounded (or not followed at all), and one deadline
 * covers the whole exchange and a size bound the body.
 */
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
function guardedLookup(allow: AllowPrivate) {
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

/** A URL the client may dial: http(s), no credentials, a literal address only when public (or allowed). */
function parseTarget(raw: string, allow: AllowPrivate, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
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

export interface GuardedRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH';
  headers: Record<string, string>;
  body?: string;
  /**
   * Let private, loopback and link-local addresses through (tests serve sites on 127.0.0.1): all of
   * them, or those the function accepts.
   */
  allowPrivate?: boolean | AllowPrivate;
  /** One deadline for the whole exchange: every hop, headers and body. */
  timeoutMs: number;
  maxBytes: number;
  /** A body longer than maxBytes: cut there and flagged `truncated`, or refused (a `network` error). */
  oversize: 'truncate' | 'refuse';
  /**
   * Redirects followed by hand, each target checked again like the first URL; one more is
   * `too_many_redirects`. Not given: a redirect is not followed but answered as it is.
   */
  maxRedirects?: number;
  /** Whether to read the body of a response (by status and type); unread bodies are dropped. Default: all. */
  readBody?: (status: number, contentType: string) => boolean;
  /** How errors name the exchange: "Timed out fetching …"/"Cannot fetch …", or "… calling …"/"Cannot reach …". */
  wording: 'fetch' | 'call';
}

export interface GuardedResponse {
  /** The URL that answered (after redirects). */
  url: URL;
  status: number;
  contentType: string;
  location: string | undefined;
  body: Buffer;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
  /** Every URL redirected through, in order. */
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const WORDING = {
  fetch: { timeout: 'Timed out fetching', network: 'Cannot fetch' },
  call: { timeout: 'Timed out calling', network: 'Cannot reach' },
};

type Hop = Omit<GuardedResponse, 'url' | 'redirects'>;

function requestOnce(url: URL, request: GuardedRequest, allow: AllowPrivate, deadline: number): Promise<Hop> {
  const { maxBytes, wording } = request;
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(new WebFetchError('timeout', 'Timed out', true));
    const send = url.protocol === 'https:' ? https.request : http.request;
    const req = send(
      url,
      {
        method: request.method ?? 'GET',
        lookup: guardedLookup(allow) as unknown as typeof dns.lookup,
        headers: request.headers,
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers['content-type'] ?? '');
        const location = res.headers.location;
        const done = (body: Buffer, truncated: boolean) => {
          clearTimeout(timer);
          resolve({ status, location, contentType, body, truncated });
        };
        const followed = request.maxRedirects !== undefined && REDIRECTS.has(status);
        if (followed || !(request.readBody?.(status, contentType) ?? true)) {
          res.destroy();
          return done(Buffer.alloc(0), false);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size + chunk.length > maxBytes) {
            if (request.oversize === 'refuse')
              return fail(new WebFetchError('network', `Response from ${url.origin} larger than ${maxBytes} bytes`));
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
      reject(new WebFetchError('network', `${WORDING[wording].network} ${url.origin}: ${(e as Error).message}`, true));
    };
    const timer = setTimeout(() => fail(new WebFetchError('timeout', `${WORDING[wording].timeout} ${url.origin}`, true)), remaining);
    req.on('error', fail);
    req.end(request.body);
  });
}

/**
 * One request to a URL a caller named, through every guard above. Statuses are the caller's to judge;
 * a redirect that is followed repeats a GET (only GETs follow redirects here: another method's
 * redirect is answered as it is).
 */
export async function guardedRequest(raw: string, request: GuardedRequest): Promise<GuardedResponse> {
  const option = request.allowPrivate ?? false;
  const allow: AllowPrivate = typeof option === 'function' ? option : () => option;
  const follow = (request.method ?? 'GET') === 'GET' ? request.maxRedirects : undefined;
  const hopRequest = { ...request, maxRedirects: follow };
  const deadline = Date.now() + request.timeoutMs;
  const redirects: string[] = [];
  let url = parseTarget(raw, allow);
  for (;;) {
    const hop = await requestOnce(url, hopRequest, allow, deadline);
    if (follow !== undefined && REDIRECTS.has(hop.status) && hop.location) {
      if (redirects.length >= follow) throw new WebFetchError('too_many_redirects', `More than ${follow} redirects`);
      redirects.push(url.toString());
      url = parseTarget(hop.location, allow, url);
      continue;
    }
    return { ...hop, url, redirects };
  }
}
