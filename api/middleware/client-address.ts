import type net from 'node:net';
import type Koa from 'koa';
import { proxyTrust, resolveClientAddress } from '../../platform/core/client-address';

/**
 * Resolves the request's client address once (see platform/core/client-address.ts) and makes it the one
 * answer: `clientAddress(ctx)`, and `ctx.ip` too, so no code reads a forwarded header on its own.
 * Without X-Forwarded-For the answer depends on the connection alone, so it is worked out once per
 * connection (a kept-alive one serves many requests); a request carrying the header is resolved anew.
 * The second step of every request, after its id (api/middleware/pipeline.ts).
 */
export function clientAddressResolver(trustedProxies: readonly string[]): (ctx: Koa.Context) => void {
  const trust = proxyTrust(trustedProxies);
  const byConnection = new WeakMap<net.Socket, string>();
  return (ctx) => {
    const socket = ctx.req.socket;
    const forwardedFor = (ctx.req.headers['x-forwarded-for'] as string | undefined) || undefined;
    let address = forwardedFor === undefined ? byConnection.get(socket) : undefined;
    if (address === undefined) {
      address = resolveClientAddress(socket.remoteAddress, forwardedFor, trust);
      if (forwardedFor === undefined && socket.remoteAddress !== undefined) byConnection.set(socket, address);
    }
    ctx.state.clientAddress = address;
    ctx.request.ip = address;
  };
}

/** The client address of a request: what rate limits count by and logs show. */
export function clientAddress(ctx: Koa.Context): string {
  return (ctx.state.clientAddress as string | undefined) ?? ctx.req.socket.remoteAddress ?? 'unknown';
}
