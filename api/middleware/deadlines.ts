import type Koa from 'koa';
import { unavailable } from '../../domain/errors';
import { RequestScope, runInRequestScope } from '../../platform/core/request-scope';
import { withRequestDeadline } from '../../platform/core/temporal';

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
 */
export function requestDeadlines(requestTimeoutMs: number, temporalTimeoutMs: number, exempt: (path: string) => boolean): Koa.Middleware {
  return (ctx, next) => {
    if (exempt(ctx.path)) return withRequestDeadline(temporalTimeoutMs, next);
    return new Promise<void>((resolve, reject) => {
      const scope = new RequestScope(
        requestTimeoutMs,
        () => reject(unavailable(`The request did not finish within ${requestTimeoutMs} ms; what it had not committed was rolled back`)),
        temporalTimeoutMs,
      );
      runInRequestScope(scope, next).then(
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
