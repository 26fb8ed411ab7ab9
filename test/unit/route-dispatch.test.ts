import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteServer } from '../../api/route';
import { routeDispatcher } from '../../api/route-dispatch';
import { indexRoutes } from '../../api/route-index';

// The direct dispatch (api/route-dispatch.ts) serves what @koa/router's own dispatch serves: the same
// handler with the same parameters, for whole routes, siblings at one path, routes it must leave to the
// router, and paths nothing matches.

function routerWithRoutes(): { router: Router; served: WeakSet<RouteServer>; direct: string[] } {
  const router = new Router();
  indexRoutes(router);
  const served = new WeakSet<RouteServer>();
  const direct: string[] = [];
  const whole = (method: 'get' | 'post', path: string, name: string) => {
    const serve: RouteServer = (ctx) => {
      direct.push(name);
      ctx.body = { name, params: ctx.params };
    };
    served.add(serve);
    router[method](path, serve);
  };
  whole('get', '/contacts/import', 'import');
  whole('get', '/contacts/:contact_id', 'contact');
  whole('post', '/contacts/:contact_id', 'update');
  whole('get', '/agents/:agent_id/versions/:version', 'version');
  whole('get', '/files/:name', 'file');
  // Registered on the router itself, in two steps: only the router's dispatch runs both.
  router.get(
    '/docs/:page',
    async (ctx, next) => {
      ctx.state.first = true;
      await next();
    },
    (ctx) => {
      ctx.body = { name: 'docs', params: ctx.params, first: ctx.state.first === true };
    },
  );
  // One step, registered on the router itself: it may read what the router sets beside the parameters.
  router.get('/patterns/:id', (ctx) => {
    ctx.body = { name: 'pattern', route: (ctx as { _matchedRoute?: string })._matchedRoute ?? null };
  });
  return { router, served, direct };
}

async function listen(app: Koa): Promise<{ url: string; close: () => void }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const REQUESTS: [string, string][] = [
  ['GET', '/contacts/import'],
  ['GET', '/contacts/0190b8c4-7f4e-7c3a-9d1e-2b7a4c9e8f10'],
  ['POST', '/contacts/c1'],
  ['GET', '/agents/a%20b/versions/3'],
  ['GET', '/files/r%C3%A9sum%C3%A9.pdf'],
  ['GET', '/files/%E0%A4%A'],
  ['GET', '/docs/intro'],
  ['GET', '/patterns/p1'],
  ['GET', '/nowhere'],
  ['DELETE', '/contacts/c1'],
];

describe('the direct route dispatch', () => {
  let viaRouter: { url: string; close: () => void };
  let direct: { url: string; close: () => void };
  let directNames: string[];

  beforeAll(async () => {
    const a = routerWithRoutes();
    const routerApp = new Koa();
    routerApp.use(a.router.routes());
    viaRouter = await listen(routerApp);
    const b = routerWithRoutes();
    directNames = b.direct;
    const dispatch = routeDispatcher(b.router, b.served);
    const directApp = new Koa();
    directApp.use((ctx) => dispatch(ctx));
    direct = await listen(directApp);
  });
  afterAll(() => {
    viaRouter.close();
    direct.close();
  });

  it.each(REQUESTS)('%s %s: the same status and body as the router', async (method, path) => {
    const [mine, theirs] = await Promise.all(
      [direct, viaRouter].map(async ({ url }) => {
        const res = await fetch(`${url}${path}`, { method });
        return { status: res.status, body: await res.text() };
      }),
    );
    expect(mine).toEqual(theirs);
  });

  it('serves a whole route without the router, and leaves a route of several steps to it', async () => {
    directNames.length = 0;
    for (const path of ['/contacts/c1', '/docs/intro']) await fetch(`${direct.url}${path}`);
    expect(directNames).toEqual(['contact']);
    const docs = await fetch(`${direct.url}/docs/intro`).then((r) => r.json());
    expect(docs).toEqual({ name: 'docs', params: { page: 'intro' }, first: true });
  });

  it('answers a whole route at once, without a promise', () => {
    const { router, served } = routerWithRoutes();
    const dispatch = routeDispatcher(router, served);
    const ctx = { path: '/contacts/c1', method: 'GET', params: undefined } as unknown as Koa.Context;
    expect(dispatch(ctx)).toBeUndefined();
    expect(ctx.body).toEqual({ name: 'contact', params: { contact_id: 'c1' } });
  });
});
