import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createTestContext, type TestContext } from '../support/context';
import { rawRequest } from '../support/faults';

// Any method a path does not declare is 405 with {detail} and an Allow header, never a 500.

const ID = '0190a0b0-0000-7000-8000-000000000001';

let ctx: TestContext;
let paths: Map<string, Set<string>>;

beforeAll(async () => {
  ctx = await createTestContext();
  paths = new Map();
  for (const route of createApp(ctx.deps).routes) {
    const concrete = route.path.replace(/\{[^}]+\}/g, ID);
    paths.set(concrete, (paths.get(concrete) ?? new Set()).add(route.method.toUpperCase()));
  }
});
afterAll(() => ctx?.close());

function expectAllowed(allow: string | undefined, declared: Set<string>) {
  const listed = new Set((allow ?? '').split(',').map((m) => m.trim()));
  for (const method of declared) expect(listed).toContain(method);
  if (declared.has('GET')) expect(listed).toContain('HEAD');
  for (const method of ['TRACE', 'CONNECT', 'OPTIONS']) expect(listed).not.toContain(method);
}

describe('undeclared methods', () => {
  it('answers TRACE and CONNECT on every declared path with 405, {detail} and Allow', async () => {
    expect(paths.size).toBeGreaterThan(20);
    for (const [path, declared] of paths) {
      for (const method of ['TRACE', 'CONNECT']) {
        const res = await rawRequest(ctx.baseUrl, method, path);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(JSON.parse(res.body), `${method} ${path}`).toEqual({ detail: 'Method Not Allowed' });
        expect(res.headers['content-type']).toContain('application/json');
        expectAllowed(res.headers.allow, declared);
      }
    }
    expect(ctx.logs.join('')).not.toContain('unhandled error');
  });

  it('answers OPTIONS, an unknown method and a method of another path with 405 too', async () => {
    for (const method of ['OPTIONS', 'PROPFIND', 'PURGE', 'DELETE']) {
      const res = await rawRequest(ctx.baseUrl, method, '/tags');
      expect(res.status, method).toBe(405);
      expect(JSON.parse(res.body)).toEqual({ detail: 'Method Not Allowed' });
      expectAllowed(res.headers.allow, paths.get('/tags')!);
    }
    const put = await ctx.request('PUT', '/health');
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('HEAD, GET');
  });

  it('keeps HEAD where GET is declared, and 404 for paths that do not exist whatever the method', async () => {
    const head = await ctx.request('HEAD', '/health');
    expect(head.status).toBe(200);
    for (const method of ['TRACE', 'CONNECT', 'GET']) {
      const res = await rawRequest(ctx.baseUrl, method, '/no/such/path');
      expect(res.status, method).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ detail: 'Not Found' });
    }
  });

  it('checks the method before authentication: no token, still 405 rather than 401', async () => {
    const res = await rawRequest(ctx.baseUrl, 'TRACE', '/contacts');
    expect(res.status).toBe(405);
    const get = await ctx.request('GET', '/contacts');
    expect(get.status).toBe(401);
  });
});
