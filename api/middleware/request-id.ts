import crypto from 'node:crypto';
import type Koa from 'koa';
import pino from 'pino';
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

/** What pino writes before a line's own fields: its level, time and bindings, as the logger is configured. */
interface LinePrefix {
  [pino.symbols.lsCacheSym]: Record<number, string>;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.streamSym]: pino.DestinationStream;
}

export function requestLines(logger: Logger): RequestLines {
  // The request line is the one line every request writes, so it is put together here rather than by pino's
  // generic serializer, whose key loop and per-value lookups cost as much as the rest of the line's way: the
  // same fields, behind pino's own level, time and bindings, written to the logger's own destination so it
  // keeps its place among the other lines. Its fields (ids, method, path, status, time, address) hold nothing
  // the logger redacts. test/unit/request-cost.test.ts holds it to pino's format.
  const parts = logger as unknown as LinePrefix;
  const level = parts[pino.symbols.lsCacheSym][logger.levels.values.info!]!;
  const time = parts[pino.symbols.timeSym];
  const bindings = parts[pino.symbols.chindingsSym];
  const destination = parts[pino.symbols.streamSym];
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
      const fields =
        `,"request_id":${JSON.stringify((ctx.state as RequestState).requestId)},"method":${JSON.stringify(ctx.method)}` +
        `,"path":${JSON.stringify(ctx.path)},"status":${ctx.status},"ms":${Math.round(performance.now() - started)}` +
        `,"client_address":${JSON.stringify(clientAddress(ctx))}`;
      destination.write(`${level}${time()}${bindings}${fields},"msg":"request"}\n`);
    },
  };
}
