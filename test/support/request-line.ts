import type Koa from 'koa';
import { requestLines } from '../../api/middleware/request-id';
import type { Logger } from '../../platform/core/logger';

/** The request id and line alone, as the API's pipeline begins and ends them (api/middleware/pipeline.ts). */
export function requestLineMiddleware(logger: Logger): Koa.Middleware {
  const lines = requestLines(logger);
  return async (ctx, next) => {
    const line = lines.begin(ctx);
    try {
      await next();
    } finally {
      lines.end(ctx, line);
    }
  };
}
