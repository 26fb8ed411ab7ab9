import type Koa from 'koa';
import { unavailable } from '../../domain/errors';
import { RequestScope, runInRequestScope } from '../../platform/core/request-scope';
import { withRequestDeadline } from '../../platform/core/temporal';

/** Serves a request's route: at once when nothing in it waits, else a promise. */
export type RouteStep = (ctx: Koa.Context) => void | Promise<void>;

/**
 * The bounds of one request, set up in one async context (platform/core/request-scope.ts):
 *
 * - Every request is answered within `requestTimeoutMs` (REQUEST_TIMEOUT_MS), the reading of its body
 *   aside. Past it, the database connections it keeps busy are closed (the server rolls back what they
 *   had open; the pool opens new ones, platform/core/postgres-pool.ts) and it answers 503, whatever its
 *   handler is still waiting for: a request that never finishes costs its caller the bound, never a
 *   pool slot. `exempt` paths (streamed uploads, which hold no connection while they stream) have no
 *   such deadline.
 * - Every Temporal call made while serving a request shares one deadline, `temporalTimeoutMs` after the
 *   first of them, wherever the call is made (platform/core/temporal.ts): a frozen or unreachable Temporal
 *   costs the caller a 503 within the bound, and a transaction waiting on the call rolls back.
 *
 * A route answered at once (nothing in it waited) ends its scope at once, without a promise.
 */
export function requestDeadlines(
  requestTimeoutMs: number,
  temporalTimeoutMs: number,
  exempt: (path: string) => boolean,
): (ctx: Koa.Context, route: RouteStep) => void | Promise<void> {
  const late = () => unavailable(`The request did not finish within ${requestTimeoutMs} ms; what it had not committed was rolled back`);
  return (ctx, route) => {
    if (exempt(ctx.path)) return withRequestDeadline(temporalTimeoutMs, () => route(ctx));
    const scope = new RequestScope(requestTimeoutMs, temporalTimeoutMs);
    let served: void | Promise<void>;
    try {
      served = runInRequestScope(scope, () => route(ctx));
    } catch (error) {
      scope.end();
      throw error;
    }
    if (!(served instanceof Promise)) return scope.end();
    const waiting = served;
    return new Promise<void>((resolve, reject) => {
      scope.wait(() => reject(late()));
      waiting.then(
        () => {
          scope.end();
          resolve();
        },
        (error: unknown) => {
          scope.end();
          reject(error);
        },
      );
    });
  };
}
