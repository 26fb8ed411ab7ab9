import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { isBlockedAddress } from '../web/fetch';

// Where a mailbox's SMTP or IMAP server may be: the web fetcher's public-address rule, applied to the
// address that is then dialled (the host name stays the TLS server name), so what is checked is what
// is connected to. A caller who names the host must not learn anything about our own network from the
// answer, so every reason (no such name, a private address, a lookup that hangs) is one refusal.

export interface MailHostTarget {
  /** The address to dial. */
  address: string;
  /** The host name, for TLS (absent when the host was an address). */
  servername?: string;
}

export interface MailHostPolicy {
  /** Let private, loopback and link-local addresses through (OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS). */
  allowPrivate: boolean;
  /** Bound of the name lookup. */
  timeoutMs: number;
}

/** A host the rule refuses, or whose name does not resolve in time; the message says nothing more. */
export class MailHostRefused extends Error {
  constructor(readonly host: string) {
    super('mail server host refused');
    this.name = 'MailHostRefused';
  }
}

async function resolveAll(name: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('lookup timed out')), timeoutMs);
  });
  try {
    return (await Promise.race([lookup(name, { all: true }), late])).map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The address to dial for `host`: resolved once (bounded), and refused when any address it resolves
 * to is not public unicast, unless the policy allows private ones.
 */
export async function resolveMailHost(host: string, policy: MailHostPolicy): Promise<MailHostTarget> {
  const bare = host.replace(/^\[|\]$/g, '');
  const literal = net.isIP(bare) !== 0;
  const addresses = literal ? [bare] : await resolveAll(bare, policy.timeoutMs).catch(() => []);
  if (addresses.length === 0 || (!policy.allowPrivate && addresses.some(isBlockedAddress))) throw new MailHostRefused(host);
  return literal ? { address: addresses[0]! } : { address: addresses[0]!, servername: bare };
}
