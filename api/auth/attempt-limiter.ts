/**
 * Attempts counted per subject (a key id, a client address) in fixed windows. A subject that
 * reached its limit is refused until its window ends, without any work being done for it. Bounded:
 * past `maxSubjects` the oldest windows are dropped, so a flood of invented subjects costs memory once.
 */
export class AttemptLimiter {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxSubjects = 100_000,
  ) {}

  /** Seconds until the subject may try again, or 0 when it may try now. */
  retryAfterSeconds(subject: string, now = Date.now()): number {
    const window = this.windows.get(subject);
    if (!window) return 0;
    if (window.resetAt <= now) {
      this.windows.delete(subject);
      return 0;
    }
    return window.failures >= this.limit ? Math.max(1, Math.ceil((window.resetAt - now) / 1000)) : 0;
  }

  /** An attempt that turned out right is not held against its subject. */
  forgive(subject: string): void {
    const window = this.windows.get(subject);
    if (window && window.failures > 0) window.failures--;
  }

  fail(subject: string, now = Date.now()): void {
    const window = this.windows.get(subject);
    if (window && window.resetAt > now) {
      window.failures++;
      return;
    }
    this.windows.delete(subject);
    if (this.windows.size >= this.maxSubjects) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(subject, { failures: 1, resetAt: now + this.windowMs });
  }
}

/**
 * At most `limit` tasks at once, at most `maxWaiting` queued; `run` refuses beyond that. Argon2id runs
 * on libuv's thread pool, which DNS lookups and file reads share: holding it below the pool's size
 * keeps a burst of key checks from stalling every other request.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most tasks seen running at once. */
  peak = 0;

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  get full(): boolean {
    return this.waiting.length >= this.maxWaiting;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so no newcomer slips in between.
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    this.peak = Math.max(this.peak, this.active);
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
