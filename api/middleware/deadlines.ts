import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import { withRequestDeadline } from '../../platform/temporal';

/**
 * Every Temporal call made while serving a request shares one deadline, `timeoutMs` after the request
 * began, wherever the call is made: a frozen or unreachable Temporal costs the caller a 503 within the
 * bound, and a transaction waiting on the call rolls back.
 */
export function temporalDeadline(client: Client, timeoutMs: number): Koa.Middleware {
  return (_ctx, next) => withRequestDeadline(client, timeoutMs, next);
}
