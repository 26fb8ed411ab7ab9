import http from 'node:http';
import type net from 'node:net';
import type Router from '@koa/router';
import type Koa from 'koa';
import { HttpError } from '../errors';

/**
 * A path that exists answers any method it does not declare (OPTIONS, TRACE, CONNECT and unknown
 * methods included) with 405, `{detail}` and an `Allow` header listing the methods it does declare
 * (HEAD wherever GET is). Decided before routing, so no router error for an unimplemented method
 * reaches the error handler as a 500. Unknown paths stay 404.
 */
export function methodNotAllowed(router: Router): (ctx: Koa.Context) => void {
  return (ctx) => {
    const match = router.match(ctx.path, ctx.method);
    // One route at this path, declaring this method: nothing to refuse (most requests).
    if (match.route && match.path.length === 1) return;
    // A literal segment (/contacts/import, /versions/compare) names its own resource: a sibling with a
    // parameter there (/contacts/{contact_id}) neither serves its undeclared methods nor adds to its Allow.
    const routesHere = match.path.filter((layer) => layer.methods.length > 0);
    const fewest = Math.min(...routesHere.map((layer) => layer.paramNames.length));
    const literal = routesHere.filter((layer) => layer.paramNames.length === fewest);
    if (literal.length < routesHere.length && !literal.some((layer) => layer.methods.includes(ctx.method))) {
      throw new HttpError(405, 'Method Not Allowed', { Allow: [...new Set(literal.flatMap((layer) => layer.methods))].join(', ') });
    }
    if (match.route || match.path.length === 0) return;
    const allowed = new Set(match.path.flatMap((layer) => layer.methods));
    if (allowed.size === 0) return;
    throw new HttpError(405, 'Method Not Allowed', { Allow: [...allowed].join(', ') });
  };
}

/**
 * Node hands CONNECT requests to a 'connect' listener with the bare socket instead of to the request
 * handler (and drops the connection when there is none). Serve them through the app like any other
 * method, so they get the same 404 or 405 answer, then close the socket: nothing is ever tunnelled.
 * `app.listen` then makes its server with `options` (e.g. the request header limit).
 */
export function serveConnectThroughApp(app: Koa, options: http.ServerOptions = {}): void {
  app.listen = ((...args: unknown[]) => {
    const handle = app.callback();
    const server = http.createServer(options, handle);
    server.listen(...(args as Parameters<http.Server['listen']>));
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      const res = new http.ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.on('finish', () => {
        res.detachSocket(socket);
        socket.end();
      });
      socket.on('error', () => socket.destroy());
      void handle(req, res);
    });
    return server;
  }) as Koa['listen'];
}
