import Router from '@koa/router';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { indexRoutes } from '../../api/route-index';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';

// The indexed match (api/route-index.ts) answers exactly what @koa/router's full scan answers: the same
// layers, in the same order, for every path the app declares and for paths it does not.

const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data' });
const { router: appRouter } = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps);
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];

const summary = (m: ReturnType<Router['match']>) => ({
  path: m.path.map((l) => `${l.methods.join(',')} ${String(l.path)}`),
  pathAndMethod: m.pathAndMethod.map((l) => `${l.methods.join(',')} ${String(l.path)}`),
  route: m.route,
});

/** Request paths from the declared ones: parameters filled, case changed, a trailing slash, a sibling. */
function requestPaths(declared: string[]): string[] {
  const paths = new Set(['/', '', '*', '//', '/x', '/%2e%2e/me', '/ME', '/me/', '/me/x', '/docs/', '/docs/assets/a.css']);
  for (const p of declared) {
    const filled = p.replace(/:\w+/g, '0190b8c4-7f4e-7c3a-9d1e-2b7a4c9e8f10');
    paths.add(filled);
    paths.add(filled.toUpperCase());
    paths.add(`${filled}/`);
    paths.add(`${filled}/extra`);
    paths.add(filled.replace(/^\/[^/]+/, (s) => `${s}x`));
    paths.add(p.replace(/:\w+/g, 'import'));
  }
  return [...paths];
}

describe('the indexed route match', () => {
  it("answers what the full scan answers, on every declared route's paths and around them", () => {
    const declared = appRouter.stack.map((l) => String(l.path));
    expect(declared.length).toBeGreaterThan(100);
    const fullScan = (path: string, method: string) => Router.prototype.match.call(appRouter, path, method);
    let compared = 0;
    for (const path of requestPaths(declared))
      for (const method of METHODS) {
        expect(summary(appRouter.match(path, method)), `${method} ${path}`).toEqual(summary(fullScan(path, method)));
        compared++;
      }
    expect(compared).toBeGreaterThan(1000);
  });

  it('keeps prefix layers, expressions and routes added later', () => {
    const router = new Router();
    indexRoutes(router);
    router.get('/a/:id', () => {});
    expect(router.match('/a/1', 'GET').route).toBe(true);
    router.use('/a', () => {});
    router.get(/^\/b\d+$/, () => {});
    router.get('/:any/c', () => {});
    const full = (path: string, method: string) => summary(Router.prototype.match.call(router, path, method));
    for (const path of ['/a/1', '/A/1', '/a', '/b12', '/x/c', '/a/c', '/z'])
      for (const method of ['GET', 'POST']) expect(summary(router.match(path, method)), `${method} ${path}`).toEqual(full(path, method));
    expect(router.match('/b12', 'GET').route).toBe(true);
    expect(router.match('/x/c', 'GET').route).toBe(true);
  });

  it('answers the second call of a request (same path and method) from the first, and only that one', () => {
    const router = new Router();
    indexRoutes(router);
    router.get('/a/:id', () => {});
    const first = router.match('/a/1', 'GET');
    expect(router.match('/a/1', 'GET')).toBe(first);
    // The router takes the array as ctx.matched: the next request gets one of its own.
    expect(router.match('/a/1', 'GET')).not.toBe(first);
    const get = router.match('/a/1', 'GET');
    expect(summary(router.match('/a/1', 'POST'))).toEqual(summary(Router.prototype.match.call(router, '/a/1', 'POST')));
    expect(router.match('/a/1', 'GET')).not.toBe(get);
  });
});
