import * as windows from '../db/rate-limits';
import { type PolicyState, type RatePolicy, secondsUntil, windowEndMs } from '../domain/rate-limits';
import { outsideRequestScope } from '../platform/core/request-scope';
import type { ServiceDeps } from './deps';

// Quotas shared by every API process without a database round trip per request: a process reserves a
// lease of several requests of a subject's quota at once (one upsert, db/rate-limits.ts) and serves them
// from memory. The database never hands out more than the quota, so the processes together never admit
// more than it. What a process leased and does not serve (its clients went quiet, or moved to another
// process) goes back to the count once the subject has been idle here for a second, so the others can
// use it; a spent quota is refused from memory, asking the database again at most once a second.

export interface Taken {
  allowed: boolean;
  state: PolicyState;
}

interface Bucket {
  /** The end of the window this bucket counts, in milliseconds since the epoch. */
  endsAt: number;
  /** Leased requests not yet served here. */
  tokens: number;
  /** The window's count across processes as of this process's last lease. */
  used: number;
  /** The database said the quota is spent: refused here without asking again until `recheckAt`. */
  spent: boolean;
  recheckAt: number;
  /** When this process last served a request of the subject. */
  lastTakenAt: number;
  /** Tokens admitted without the database (it did not answer): never given back to its count. */
  unbacked: number;
  /** What the last lease granted: a whole lease means the quota is far from spent. */
  lastGranted: number;
  pending?: Promise<void>;
}

/** How long a request waits for a lease before it is admitted on a lease of this process's own. */
const LEASE_TIMEOUT_MS = 2000;
/** Subjects tracked at most; past it the oldest bucket is dropped (its rest of a lease is lost, never exceeded). */
const MAX_BUCKETS = 100_000;
/** A subject idle this long gives its unserved lease back; a spent quota is asked about again this often. */
const IDLE_MS = 1000;

export class SharedRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** The latest window end seen: a later one drops buckets of ended windows and sweeps the table. */
  private latestEnd = 0;
  /** Gives idle subjects' leases back, while any bucket holds some. */
  private returner: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'sql' | 'logger'>,
    private readonly leaseMax: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one request against `subject`'s quota. Synchronous while this process holds a lease (the usual
   * case); a promise when a lease must be taken first.
   */
  take(subject: string, policy: RatePolicy): Taken | Promise<Taken> {
    const now = this.now();
    const bucket = this.bucketOf(subject, policy, now);
    if (bucket.tokens > 0) {
      bucket.tokens--;
      bucket.lastTakenAt = now;
      // Far from the quota's end (whole leases), the next lease is taken while a quarter of this one is left,
      // so a busy subject's requests never wait for it. Near the end, leases shrink and none is taken ahead.
      if (bucket.lastGranted === this.leaseMax && bucket.tokens <= this.leaseMax >> 2 && !bucket.pending)
        void this.leaseNext(subject, bucket, policy);
      return { allowed: true, state: stateOf(bucket, policy, now) };
    }
    if (bucket.spent && now < bucket.recheckAt) return { allowed: false, state: stateOf(bucket, policy, now) };
    // Requests waiting on the same lease share it; one that finds it served already takes the next.
    return this.leaseNext(subject, bucket, policy).then(() => this.take(subject, policy));
  }

  /** One lease at a time per subject: requests that need it before it is granted share it (`pending`). */
  private leaseNext(subject: string, bucket: Bucket, policy: RatePolicy): Promise<void> {
    bucket.pending ??= this.lease(subject, bucket, policy).finally(() => {
      bucket.pending = undefined;
    });
    return bucket.pending;
  }

  /** Gives back a request counted but not served (another policy refused it), for this process to serve. */
  giveBack(subject: string, policy: RatePolicy): void {
    const bucket = this.buckets.get(subject);
    if (bucket && bucket.endsAt === windowEndMs(this.now(), policy.windowSeconds)) bucket.tokens++;
  }

  /** What is left of `subject`'s quota as far as this process knows, counting nothing. */
  peek(subject: string, policy: RatePolicy): PolicyState {
    const now = this.now();
    return stateOf(this.bucketOf(subject, policy, now), policy, now);
  }

  private bucketOf(subject: string, policy: RatePolicy, now: number): Bucket {
    const endsAt = windowEndMs(now, policy.windowSeconds);
    const bucket = this.buckets.get(subject);
    if (bucket && bucket.endsAt === endsAt) return bucket;
    if (endsAt > this.latestEnd) this.windowBegan(endsAt, policy);
    const fresh: Bucket = { endsAt, tokens: 0, used: 0, spent: false, recheckAt: 0, lastTakenAt: now, unbacked: 0, lastGranted: 0 };
    this.buckets.delete(subject);
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(subject, fresh);
    return fresh;
  }

  /** A new window: buckets of ended ones go, and so do rows of windows that ended before the last one. */
  private windowBegan(endsAt: number, policy: RatePolicy): void {
    this.latestEnd = endsAt;
    for (const [subject, bucket] of this.buckets) if (bucket.endsAt < endsAt) this.buckets.delete(subject);
    const before = new Date(endsAt - 2 * policy.windowSeconds * 1000);
    outsideRequestScope(() => windows.sweepWindows(this.deps.sql, before)).catch((err: unknown) =>
      this.deps.logger.debug({ err }, 'rate limit windows not swept'),
    );
  }

  private async lease(subject: string, bucket: Bucket, policy: RatePolicy): Promise<void> {
    // The lease serves many requests, so it belongs to none of them (their deadlines do not cut it).
    const query = outsideRequestScope(() =>
      windows.takeLease(this.deps.sql, subject, new Date(bucket.endsAt), policy.quota, this.leaseMax),
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), LEASE_TIMEOUT_MS);
    });
    try {
      const lease = await Promise.race([query, late]);
      if (lease === 'late') throw new Error(`no lease within ${LEASE_TIMEOUT_MS} ms`);
      bucket.used = lease.used;
      bucket.tokens += lease.granted;
      bucket.lastGranted = lease.granted;
      bucket.spent = lease.granted === 0;
      if (bucket.spent) bucket.recheckAt = this.now() + IDLE_MS;
      else this.returner ??= setInterval(() => this.returnIdle(), IDLE_MS).unref();
    } catch (err) {
      // A database that cannot count is no reason to refuse: the process admits a lease of its own, and
      // asks again once that is served. The limit holds again when the database answers.
      query.catch(() => {});
      this.deps.logger.warn({ err, subject }, 'rate limit lease failed; admitting a local lease');
      bucket.tokens += this.leaseMax;
      bucket.unbacked += this.leaseMax;
      bucket.spent = false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Leases of subjects idle here for a second go back to their windows' counts, for other processes. */
  private returnIdle(): void {
    const now = this.now();
    let holding = false;
    for (const [subject, bucket] of this.buckets) {
      const unserved = bucket.tokens - bucket.unbacked;
      if (unserved <= 0 || bucket.pending || bucket.endsAt <= now) continue;
      if (now - bucket.lastTakenAt < IDLE_MS) {
        holding = true;
        continue;
      }
      bucket.tokens -= unserved;
      bucket.used -= unserved;
      outsideRequestScope(() => windows.returnUnserved(this.deps.sql, subject, new Date(bucket.endsAt), unserved)).catch((err: unknown) =>
        this.deps.logger.debug({ err, subject }, 'unserved rate limit lease not returned'),
      );
    }
    if (!holding) {
      clearInterval(this.returner);
      this.returner = undefined;
    }
  }
}

function stateOf(bucket: Bucket, policy: RatePolicy, now: number): PolicyState {
  const remaining = bucket.spent ? 0 : Math.min(policy.quota, Math.max(0, policy.quota - bucket.used) + bucket.tokens);
  return { policy, remaining, resetSeconds: secondsUntil(bucket.endsAt, now) };
}
