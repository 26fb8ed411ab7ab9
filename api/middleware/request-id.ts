import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../../platform/core/logger';
import { clientAddress } from './client-address';

const VALID_ID = /^[\w.:@/+=-]{1,128}$/;

/**
 * A request's `ctx.state`: its id, and `log`, the request's logger, made (a pino child carrying `request_id`)
 * when first used, since most requests write nothing through it. A class rather than a property defined on
 * Koa's plain object per request: the getter lives once on the prototype.
 */
class RequestState {
  [key: string]: unknown;
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
  ) {}

  get log(): Logger {
    this.child ??= this.base.child({ request_id: this.requestId });
    return this.child;
  }
}

/** A request's id and its line in the log, begun before anything else runs and ended once it is answered. */
export interface RequestLines {
  /** Echoes a sane X-Request-ID or generates one; makes ctx.state, with the request-scoped logger as ctx.state.log. */
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
      const incoming = ctx.req.headers['x-request-id'];
      const id = incoming !== undefined && VALID_ID.test(incoming as string) ? (incoming as string) : crypto.randomUUID();
      ctx.state = new RequestState(id, logger);
      ctx.set('X-Request-ID', id);
      return logger.isLevelEnabled('info') ? performance.now() : undefined;
    },
    end(ctx, started) {
      if (started === undefined) return;
      lines.info(
        {
          request_id: (ctx.state as RequestState).requestId,
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
