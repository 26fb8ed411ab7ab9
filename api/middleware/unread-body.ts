import type Koa from 'koa';

/**
 * A request answered before its body arrived (refused by its token, its signature headers or its
 * declared length) ends its connection with the answer: on a kept-alive connection Node would
 * otherwise receive the rest of the body, however large, only to discard it. Runs once the answer is set.
 */
export function closeUnreadBody(ctx: Koa.Context): void {
  const { headers } = ctx.req;
  const sendsBody = Number(headers['content-length'] || 0) > 0 || (headers['transfer-encoding'] ?? '') !== '';
  if (sendsBody && !ctx.req.complete && !ctx.headerSent) ctx.set('Connection', 'close');
}
