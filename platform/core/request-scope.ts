import { AsyncLocalStorage } from 'node:async_hooks';

/** The error code of a database connection closed because the request using it passed its deadline. */
export const REQUEST_DEADLINE = 'REQUEST_DEADLINE';

/** Something a request holds that its deadline takes back (a database connection in use). */
export interface Held {
  release(reason: Error): void;
}

/** A budget shared by calls of one kind: `deadline` is set by the first call, `timeoutMs` after it. */
export interface CallBudget {
  readonly timeoutMs: number;
  deadline?: number;
}

/**
 * How often armed deadlines are checked: a request passes its deadline at most this much late (REQUEST_TIMEOUT_MS
 * is a second or more). One clock for every request in flight instead of a timer each, set and cleared per request.
 */
const CLOCK_TICK_MS = 50;

/**
 * One request being served, with its deadline. Reading the request body does not count (`pause`):
 * a slow client is bounded by the body limit and the server's own timeouts, and holds no connection then.
 * The deadline's clock runs from the scope's making, but the scope joins the clock only once the request
 * waits for something (`wait`): a request answered at once cannot pass a deadline checked between tasks.
 */
export class RequestScope {
  /** Scopes whose deadline runs, checked on every tick of one shared clock while there are any. */
  private static readonly armed = new Set<RequestScope>();
  private static clock: NodeJS.Timeout | undefined;

  /** What the request holds that its deadline takes back; made when it first holds something. */
  private held: Set<Held> | undefined;
  /**
   * The Temporal calls' shared budget while this request is served (platform/core/temporal.ts): carried by
   * the scope so a request runs in one async context rather than one per bound.
   */
  readonly temporal: CallBudget | undefined;
  /** The request has been answered (normally or by its deadline). */
  ended = false;
  /** The deadline passed: what the request still does must not hold anything. */
  expired = false;
  private dueAt: number;
  private pausedAt: number | undefined;
  /** Set once the request waits (`wait`): only then is the scope on the clock. */
  private onExpire: (() => void) | undefined;

  constructor(
    readonly timeoutMs: number,
    temporalTimeoutMs?: number,
  ) {
    this.temporal = temporalTimeoutMs === undefined ? undefined : { timeoutMs: temporalTimeoutMs };
    this.dueAt = Date.now() + timeoutMs;
  }

  /** The request waits for something: its deadline is watched from now, and `onExpire` runs if it passes. */
  wait(onExpire: () => void): void {
    if (this.ended) return;
    this.onExpire = onExpire;
    if (this.pausedAt === undefined) this.arm();
  }

  /** `h` is the request's until it is let go; the deadline takes it back (released at once past it). */
  hold(h: Held): void {
    (this.held ??= new Set()).add(h);
  }

  letGo(h: Held): void {
    this.held?.delete(h);
  }

  /** Closes what it holds now: once at the deadline, then for each claim made after it. */
  releaseAll(): void {
    if (!this.held?.size) return;
    const reason = Object.assign(new Error(`The request passed its ${this.timeoutMs} ms deadline`), { code: REQUEST_DEADLINE });
    const held = [...this.held];
    this.held.clear();
    for (const h of held) h.release(reason);
  }

  pause(): void {
    if (this.ended || this.pausedAt !== undefined) return;
    RequestScope.armed.delete(this);
    this.pausedAt = Date.now();
  }

  resume(): void {
    if (this.ended || this.pausedAt === undefined) return;
    this.dueAt += Date.now() - this.pausedAt;
    this.pausedAt = undefined;
    if (this.onExpire) this.arm();
  }

  /** The request was answered in time: nothing is released, later claims are ignored. */
  end(): void {
    this.ended = true;
    if (this.onExpire) RequestScope.armed.delete(this);
    this.held?.clear();
  }

  private arm(): void {
    RequestScope.armed.add(this);
    RequestScope.clock ??= setInterval(RequestScope.tick, Math.min(CLOCK_TICK_MS, this.timeoutMs));
  }

  private expire(): void {
    RequestScope.armed.delete(this);
    if (this.ended) return;
    this.ended = true;
    this.expired = true;
    this.releaseAll();
    this.onExpire?.();
  }

  /** Expires every scope past its deadline; stops the clock when none is left armed. */
  private static tick(): void {
    const now = Date.now();
    for (const scope of RequestScope.armed) if (scope.dueAt <= now) scope.expire();
    if (RequestScope.armed.size === 0) {
      clearInterval(RequestScope.clock);
      RequestScope.clock = undefined;
    }
  }
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs the serving of one request inside its scope. */
export const runInRequestScope = <T>(scope: RequestScope, fn: () => T): T => scopes.run(scope, fn);

/** The scope of the request being served here, ended or not; undefined outside a request. */
export const currentRequestScope = (): RequestScope | undefined => scopes.getStore();

/** Runs `fn` outside any request: what it creates (a pool's socket) does not carry a request along. */
export const outsideRequestScope = <T>(fn: () => T): T => scopes.exit(fn);

/** Runs `fn` with the current request's deadline clock stopped (reading the request body). */
export async function withDeadlinePaused<T>(fn: () => Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  scope?.pause();
  try {
    return await fn();
  } finally {
    scope?.resume();
  }
}
