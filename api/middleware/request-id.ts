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

/** A request's id and its line in the log, begun before anything else runs and ended once it is answered. */
export interface RequestLines {
  /** Echoes a sane X-Request-ID or generates one; hangs a request-scoped logger on ctx.state.log. */
  begin(ctx: Koa.Context): RequestLine;
  /** Writes the request line, unless the level discards it. */
  end(ctx: Koa.Context, line: RequestLine): void;
}

/** When the request began (undefined when the level discards its line: then nothing of it is worked out). */
export type RequestLine = number | undefined;

export function requestLines(logger: Logger): RequestLines {
  // The request line's fields (ids, method, path, status, time, address) hold nothing the logger redacts, so
  // it is written through a child without the redaction pass, which would cost as much as the rest of the line.
  const lines = logger.child({}, { redact: [] });
  return {
    begin(ctx) {
      const incoming = ctx.get('X-Request-ID');
      const id = VALID_ID.test(incoming) ? incoming : crypto.randomUUID();
      const state = ctx.state as LogState;
      state.requestId = id;
      state[BASE] = logger;
      Object.defineProperty(state, 'log', LOG_PROPERTY);
      ctx.set('X-Request-ID', id);
      return logger.isLevelEnabled('info') ? performance.now() : undefined;
    },
    end(ctx, started) {
      if (started === undefined) return;
      lines.info(
        {
          request_id: (ctx.state as LogState).requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          client_address: clientAddress(ctx),
        },
        'request',
      );
    },
  };
}
