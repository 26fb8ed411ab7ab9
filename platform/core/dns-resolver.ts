import { Resolver } from 'node:dns/promises';

// Looks up the records of a sending domain. The default is node:dns with a timeout, on the system's
// servers or OUTREACH_DNS_SERVERS (tests point it at a DNS server on loopback).

export interface DnsResolver {
  /** TXT records of a host, each with its chunks joined; [] when the host has none. */
  resolveTxt(host: string): Promise<string[]>;
  /** CNAME targets of a host; [] when it has none. */
  resolveCname(host: string): Promise<string[]>;
}

/** Answers that mean "no such record", as opposed to a failed lookup. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'NOTFOUND', 'NODATA']);

export function createDnsResolver(config: { OUTREACH_DNS_TIMEOUT_MS: number; OUTREACH_DNS_SERVERS?: string }): DnsResolver {
  // Two tries, each bounded: a lookup costs at most about twice the timeout.
  const resolver = new Resolver({ timeout: config.OUTREACH_DNS_TIMEOUT_MS, tries: 2 });
  if (config.OUTREACH_DNS_SERVERS) resolver.setServers(config.OUTREACH_DNS_SERVERS.split(','));
  const orEmpty = async <T>(lookup: Promise<T[]>): Promise<T[]> => {
    try {
      return await lookup;
    } catch (error) {
      if (NO_RECORD.has((error as { code?: string }).code ?? '')) return [];
      throw error;
    }
  };
  return {
    resolveTxt: async (host) => (await orEmpty(resolver.resolveTxt(host))).map((chunks) => chunks.join('')),
    resolveCname: (host) => orEmpty(resolver.resolveCname(host)),
  };
}
