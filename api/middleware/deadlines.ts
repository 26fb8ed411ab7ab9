import type Koa from 'koa';
import { withRequestDeadline } from '../../platform/temporal';

/**
 * Every Temporal call made while serving a request shares one deadline, `timeoutMs` after the first of
 * them, wherever the call is made (platform/temporal.ts): a frozen or unreachable Temporal costs the
 * caller a 503 within the bound, and a transaction waiting on the call rolls back.
 */
export function temporalDeadline(timeoutMs: number): Koa.Middleware {
  return (_ctx, next) => withRequestDeadline(timeoutMs, next);
}
