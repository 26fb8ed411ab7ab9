import type Router from '@koa/router';
import type Koa from 'koa';
import type { RouteServer } from './route';

const nothingNext = () => Promise.resolve();

/**
 * Serves the route a request matches. A route added through `Routes.add` is one function that never hands
 * on (`served`), so it is called directly with the path's parameters in `ctx.params`, as @koa/router would
 * set them: the router's own dispatch builds and composes a middleware chain per request, and reads the
 * Host header for a host rule none of our routes has. Anything else (a route registered on the router
 * itself, several layers at one path) goes through the router's dispatch. Nothing matched: nothing is
 * served, and the pipeline answers 404.
 */
export function routeDispatcher(router: Router, served: WeakSet<RouteServer>): (ctx: Koa.Context) => void | Promise<void> {
  const viaRouter = router.routes();
  return (ctx) => {
    const path = ctx.path;
    const match = router.match(path, ctx.method);
    if (!match.route) return;
    const layer = match.pathAndMethod[0]!;
    const serve = layer.stack.length === 1 ? (layer.stack[0] as RouteServer) : undefined;
    if (match.pathAndMethod.length > 1 || !serve || !served.has(serve)) return viaRouter(ctx as never, nothingNext);
    ctx.params = layer.params(path, layer.captures(path), ctx.params);
    return serve(ctx);
  };
}
