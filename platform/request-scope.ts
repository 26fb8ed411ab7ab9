import { AsyncLocalStorage } from 'node:async_hooks';

/** The error code of a database connection closed because the request using it passed its deadline. */
export const REQUEST_DEADLINE = 'REQUEST_DEADLINE';

/** Something a request holds that its deadline takes back (a database connection in use). */
export interface Held {
  release(reason: Error): void;
}

/**
 * One request being served, with its deadline. Reading the request body does not count (`pause`):
 * a slow client is bounded by the body limit and the server's own timeouts, and holds no connection then.
 */
export class RequestScope {
  readonly held = new Set<Held>();
  /** The request has been answered (normally or by its deadline). */
  ended = false;
  /** The deadline passed: what the request still does must not hold anything. */
  expired = false;
  private dueAt: number;
  private pausedAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly onExpire: () => void,
  ) {
    this.dueAt = Date.now() + timeoutMs;
    this.arm();
  }

  /** Closes what it holds now: once at the deadline, then for each claim made after it. */
  releaseAll(): void {
    const reason = Object.assign(new Error(`The request passed its ${this.timeoutMs} ms deadline`), { code: REQUEST_DEADLINE });
    const held = [...this.held];
    this.held.clear();
    for (const h of held) h.release(reason);
  }

  pause(): void {
    if (this.ended || this.pausedAt !== undefined) return;
    clearTimeout(this.timer);
    this.pausedAt = Date.now();
  }

  resume(): void {
    if (this.ended || this.pausedAt === undefined) return;
    this.dueAt += Date.now() - this.pausedAt;
    this.pausedAt = undefined;
    this.arm();
  }

  /** The request was answered in time: nothing is released, later claims are ignored. */
  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.held.clear();
  }

  private arm(): void {
    this.timer = setTimeout(
      () => {
        if (this.ended) return;
        this.ended = true;
        this.expired = true;
        this.releaseAll();
        this.onExpire();
      },
      Math.max(0, this.dueAt - Date.now()),
    );
  }
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs the serving of one request inside its scope. */
export const runInRequestScope = <T>(scope: RequestScope, fn: () => Promise<T>): Promise<T> => scopes.run(scope, fn);

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
