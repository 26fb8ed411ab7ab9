/**
 * An in-process fixed-window rate limiter: at most `limit` takes per key in each window of
 * `windowSeconds`. It bounds one process; with several API instances each enforces it on its own
 * share of the traffic. Memory is bounded too: past `maxKeys` live windows the oldest is dropped, so a
 * flood of invented keys costs at most that many entries.
 */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiterOptions {
  limit: number;
  windowSeconds: number;
  maxKeys?: number;
  /** Milliseconds since the epoch; tests pass their own clock. */
  now?: () => number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: RateLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowSeconds * 1000;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /** Counts one use of `key`; refused (with the seconds until its window ends) once the limit is reached. */
  take(key: string): TakeResult {
    const now = this.now();
    const window = this.windows.get(key);
    if (window && window.resetAt > now) {
      if (window.count >= this.limit) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((window.resetAt - now) / 1000)) };
      window.count += 1;
      return { ok: true };
    }
    this.windows.delete(key);
    if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(key, { count: 1, resetAt: now + this.windowMs });
    return this.limit >= 1 ? { ok: true } : { ok: false, retryAfterSeconds: Math.ceil(this.windowMs / 1000) };
  }
}
