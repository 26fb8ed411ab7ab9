import ipaddr from 'ipaddr.js';

// The address a request comes from. X-Forwarded-For is read only as far as the hops that appended to
// it are trusted proxies (TRUSTED_PROXIES): walking it from the right, starting with the socket's peer,
// the first address that is not a trusted proxy is the client. Anything further left was written by
// that client and proves nothing.

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** A bare address or CIDR range as TRUSTED_PROXIES lists them. */
export function isProxyEntry(text: string): boolean {
  return ipaddr.isValid(text) || ipaddr.isValidCIDR(text);
}

/** An address as compared and reported: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is its IPv4 address. */
function parseHop(text: string | undefined): Address | undefined {
  if (!text) return undefined;
  let bare = text.trim();
  // Some proxies write a port: `[2001:db8::1]:443` or `203.0.113.7:443`.
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare);
  if (bracketed) bare = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(bare)) bare = bare.slice(0, bare.lastIndexOf(':'));
  return ipaddr.isValid(bare) ? ipaddr.process(bare) : undefined;
}

function parseRange(entry: string): Range {
  const [address, prefix] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), -1];
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    const v4 = (address as ipaddr.IPv6).toIPv4Address();
    return [v4, prefix < 0 ? 32 : Math.max(0, prefix - 96)];
  }
  return [address, prefix < 0 ? bits : prefix];
}

/** Whether an address is one of the configured proxies; built once from TRUSTED_PROXIES. */
export type ProxyTrust = (address: Address) => boolean;

export function proxyTrust(entries: readonly string[]): ProxyTrust {
  const ranges = entries.map(parseRange);
  return (address) => ranges.some(([net, bits]) => net.kind() === address.kind() && address.match(net, bits));
}

/** The client's address from the socket's peer and X-Forwarded-For; 'unknown' without a peer. */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | undefined, trust: ProxyTrust): string {
  let client = parseHop(peer);
  if (!client) return peer || 'unknown';
  const hops = forwardedFor ? forwardedFor.split(',').reverse() : [];
  for (const hop of hops) {
    if (!trust(client)) break;
    const next = parseHop(hop);
    // A trusted proxy that forwards something other than an address stays the client itself.
    if (!next) break;
    client = next;
  }
  return client.toString();
}

/**
 * What per-address limits count by: an IPv4 address, or the /64 network of an IPv6 address (one
 * customer's allocation, whose 2^64 addresses are otherwise a new budget each).
 */
export function addressSubject(address: string): string {
  // Worked out once per address: an ak_ key's every request records its proof by it (api/auth/verifier.ts).
  let subject = SUBJECTS.get(address);
  if (subject === undefined) {
    subject = subjectOf(address);
    if (SUBJECTS.size >= MAX_SUBJECTS) SUBJECTS.delete(SUBJECTS.keys().next().value!);
    SUBJECTS.set(address, subject);
  }
  return subject;
}

/** Addresses whose subject was worked out, bounded (the oldest goes first): parsing one costs more than the lookup. */
const SUBJECTS = new Map<string, string>();
const MAX_SUBJECTS = 10_000;

function subjectOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
