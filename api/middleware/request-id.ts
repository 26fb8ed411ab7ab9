import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../../platform/logger';
import { clientAddress } from './client-address';

const VALID_ID = /^[\w.:@/+=-]{1,128}$/;

/** Echoes a sane X-Request-ID or generates one; hangs a request-scoped logger on ctx.state.log. */
export function requestId(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-ID');
    const id = VALID_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ request_id: id });
    ctx.set('X-Request-ID', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          client_address: clientAddress(ctx),
        },
        'request',
      );
    }
  };
}
