/**
 * Verified tokens by a hash of the token, for a short TTL, so Argon2id runs at most once per token
 * per TTL and process. Bounded: the oldest entries go first. Entries of one api key can be dropped
 * at once when that key is revoked here; other processes see a revocation within the TTL.
 */
export class TokenCache<V extends { keyRowId: string | null; expiresAt: number }> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(hash: string): V | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.until <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.value;
  }

  set(hash: string, value: V): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { value, until: Math.min(Date.now() + this.ttlMs, value.expiresAt) });
  }

  evictKey(keyRowId: string): void {
    for (const [hash, entry] of this.entries) if (entry.value.keyRowId === keyRowId) this.entries.delete(hash);
  }
}
