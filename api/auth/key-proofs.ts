import type { ServiceDeps } from '../../services/deps';
import * as identity from '../../services/token-identity';

/** Pairs remembered as recently written, and keys whose proven addresses are held (bounded, oldest first). */
const MAX_REMEMBERED = 10_000;
const MAX_KEYS_HELD = 1_000;
/** A proof this process wrote is written again (its expiry extended) at most this often. */
const REFRESH_MS = 3_600_000;
/** How long a key's proven addresses, read while its budget for strangers is spent, are used. */
const HELD_MS = 5_000;
/** More proven addresses than this per key: asked one by one instead. */
const MAX_ADDRESSES_HELD = 1_000;

type Kind = 'organization' | 'user';

/**
 * That an address proved a key (its secret verified from there), kept in Postgres so every API process
 * exempts that address from the key id's budget for strangers. Written once per (key, address) and
 * hour per process however often the key is used; read, while a key is flooded, once per key and few
 * seconds, so a flood's refusals cost no database read each.
 */
export class KeyProofs {
  private readonly written = new Map<string, number>();
  private readonly held = new Map<string, { at: number; addresses: Promise<Set<string> | null> }>();
  private readonly refreshMs: number;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'sql'>,
    private readonly ttlSeconds: number,
  ) {
    this.refreshMs = Math.min(REFRESH_MS, (ttlSeconds * 1000) / 2);
  }

  /** Resolves once the proof is written; undefined (nothing to wait for, no promise made) when it was lately. */
  record(keyRowId: string, address: string): Promise<void> | undefined {
    const pair = `${keyRowId}|${address}`;
    const last = this.written.get(pair);
    if (last !== undefined && Date.now() - last < this.refreshMs) return undefined;
    // Marked before the write, so concurrent requests from the same address write once; unmarked if it fails.
    remember(this.written, pair, Date.now(), MAX_REMEMBERED);
    return identity.recordKeyProof(this.deps, keyRowId, address, this.ttlSeconds).catch((error: unknown) => {
      this.written.delete(pair);
      throw error;
    });
  }

  /**
   * False when `address` surely has no live proof of the key, from a read of all of them at most a few
   * seconds old; true when it has one or when the key has too many to hold (the key's row then decides).
   */
  async possiblyProven(kind: Kind, keyId: string, address: string): Promise<boolean> {
    const key = `${kind}:${keyId}`;
    let entry = this.held.get(key);
    if (!entry || Date.now() - entry.at >= HELD_MS) {
      const addresses = identity
        .keyProofAddresses(this.deps, kind, keyId, MAX_ADDRESSES_HELD + 1)
        .then((list) => (list.length > MAX_ADDRESSES_HELD ? null : new Set(list)));
      entry = { at: Date.now(), addresses };
      remember(this.held, key, entry, MAX_KEYS_HELD);
      const loaded = entry;
      addresses.catch(() => this.held.get(key) === loaded && this.held.delete(key));
    }
    const addresses = await entry.addresses;
    return addresses ? addresses.has(address) : true;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
