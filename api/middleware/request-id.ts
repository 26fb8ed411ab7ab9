import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../../platform/core/logger';
import { clientAddress } from './client-address';

const VALID_ID = /^[\w.:@/+=-]{1,128}$/;

const BASE = Symbol('request logger base');
const CHILD = Symbol('request logger');
type LogState = { requestId: string; [BASE]: Logger; [CHILD]?: Logger };

/**
 * `ctx.state.log`, the request's logger: made (a pino child carrying `request_id`) when first used; most
 * requests write nothing through it. One getter shared by every request: no closure made per request.
 */
const LOG_PROPERTY: PropertyDescriptor = {
  get(this: LogState) {
    this[CHILD] ??= this[BASE].child({ request_id: this.requestId });
    return this[CHILD];
  },
  enumerable: true,
  configurable: true,
};

/** Echoes a sane X-Request-ID or generates one; hangs a request-scoped logger on ctx.state.log. */
export function requestId(logger: Logger): Koa.Middleware {
  // The request line's fields (ids, method, path, status, time, address) hold nothing the logger redacts, so
  // it is written through a child without the redaction pass, which would cost as much as the rest of the line.
  const lines = logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-ID');
    const id = VALID_ID.test(incoming) ? incoming : crypto.randomUUID();
    const state = ctx.state as LogState;
    state.requestId = id;
    state[BASE] = logger;
    Object.defineProperty(state, 'log', LOG_PROPERTY);
    ctx.set('X-Request-ID', id);
    // The request line, unless the level discards it (then nothing of it is worked out).
    const started = logger.isLevelEnabled('info') ? performance.now() : undefined;
    try {
      await next();
    } finally {
      if (started !== undefined) {
        lines.info(
          {
            request_id: id,
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round(performance.now() - started),
            client_address: clientAddress(ctx),
          },
          'request',
        );
      }
    }
  };
}
