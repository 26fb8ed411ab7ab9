import type Koa from 'koa';
import { proxyTrust, resolveClientAddress } from '../../platform/client-address';

/**
 * Resolves the request's client address once (see platform/client-address.ts) and makes it the one
 * answer: `clientAddress(ctx)`, and `ctx.ip` too, so no code reads a forwarded header on its own.
 */
export function clientAddressMiddleware(trustedProxies: readonly string[]): Koa.Middleware {
  const trust = proxyTrust(trustedProxies);
  return (ctx, next) => {
    const address = resolveClientAddress(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, trust);
    ctx.state.clientAddress = address;
    ctx.request.ip = address;
    return next();
  };
}

/** The client address of a request: what rate limits count by and logs show. */
export function clientAddress(ctx: Koa.Context): string {
  return (ctx.state.clientAddress as string | undefined) ?? ctx.req.socket.remoteAddress ?? 'unknown';
}
