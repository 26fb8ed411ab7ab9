import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AreaRoutes } from '../../api/app';
import { createApp } from '../../api/app';
import { reply } from '../../api/route';
import { healthProbe } from '../../workflows/health';
import type { AddressInfo } from 'node:net';
import { buildDeps } from '../../server/build-deps';
import { createSql } from '../../db/client';
import { createTestContext, type TestContext } from '../support/context';
import { httpClient } from '../support/http';
import { newTenant } from '../support/identity';
import { keepHistory } from '../support/histories';

// Routes that exist only here, to drive the error paths every real route shares.
const probeRoutes: AreaRoutes = (routes, deps) => {
  routes.add({
    method: 'post',
    path: '/test/echo/{item_id}',
    tag: 'Service Health',
    summary: 'echo',
    auth: 'public',
    params: z.object({ item_id: z.uuid() }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(10).default(5), kind: z.enum(['a', 'b']).optional() }),
    headers: z.object({ 'x-probe': z.enum(['yes', 'no']).optional() }),
    body: z.object({ name: z.string() }),
    responses: { 200: { description: 'echo' } },
    handler: async ({ params, query, body }) => ({ params, query, body }),
  });
  routes.add({
    method: 'get',
    path: '/test/boom',
    tag: 'Service Health',
    summary: 'throws',
    auth: 'public',
    responses: { 500: { description: 'boom' } },
    handler: async () => {
      throw new Error('secret internals: stack should only be logged');
    },
  });
  routes.add({
    method: 'get',
    path: '/test/off-contract',
    tag: 'Service Health',
    summary: 'answers a body its schema refuses, or a status it does not declare',
    auth: 'public',
    query: z.object({ status: z.enum(['200', '418']).default('200') }),
    responses: { 200: { description: 'a count', schema: z.object({ count: z.number().int() }) } },
    // The casts get past the compile-time check on purpose: the run-time one must catch it.
    handler: async ({ query }) => (query.status === '418' ? (reply(418, { count: 1 }) as never) : ({ count: 'many' } as never)),
  });
  routes.add({
    method: 'post',
    path: '/test/start-workflow',
    tag: 'Service Health',
    summary: 'starts a workflow',
    auth: 'public',
    responses: { 200: { description: 'started' } },
    handler: async () => {
      const handle = await deps.temporal.workflow.start(healthProbe, {
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: `health:${Date.now()}`,
      });
      return { workflow_id: handle.workflowId };
    },
  });
};

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ worker: true, extraAreas: [probeRoutes], env: { BODY_LIMIT_BYTES: '2048' } });
});
afterAll(() => ctx?.close());

const ID = '0190c0de-0000-7000-8000-000000000001';

describe('response contract', () => {
  it('turns a body its schema refuses into a 500 naming the route, so the test that made it fails', async () => {
    const res = await ctx.request('GET', '/test/off-contract');
    expect(res.status).toBe(500);
    expect(ctx.logs.join('\n')).toContain('GET /test/off-contract answered 200 with a body its schema refuses');
  });

  it('and a status the route does not declare', async () => {
    const res = await ctx.request('GET', '/test/off-contract?status=418');
    expect(res.status).toBe(500);
    expect(ctx.logs.join('\n')).toContain('GET /test/off-contract answered 418, a status it does not declare');
  });
});

describe('request id', () => {
  it('echoes a given X-Request-ID', async () => {
    const res = await ctx.request('GET', '/health', { headers: { 'X-Request-ID': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
  });

  it('generates one when absent or unusable', async () => {
    const res = await ctx.request('GET', '/health');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await ctx.request('GET', '/health', { headers: { 'X-Request-ID': 'has spaces and \u00e9' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is written on the request log line', async () => {
    await ctx.request('GET', '/health', { headers: { 'X-Request-ID': 'log-me-42' } });
    expect(ctx.logs.some((l) => l.includes('"request_id":"log-me-42"'))).toBe(true);
  });
});

describe('error format', () => {
  it('answers an unknown route with 404 and a detail', async () => {
    const res = await ctx.request('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not Found' });
  });

  it('answers a known path with the wrong method with 405', async () => {
    const res = await ctx.request('DELETE', '/health');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: 'Method Not Allowed' });
  });

  it('maps malformed JSON to 422 json_invalid', async () => {
    const res = await ctx.request('POST', `/test/echo/${ID}`, { rawBody: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error' });
  });

  it('refuses a body over the limit with 413', async () => {
    const res = await ctx.request('POST', `/test/echo/${ID}`, { body: { name: 'x'.repeat(4096) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body too large' });
  });

  it('reports validation failures with loc in body, query, path and header', async () => {
    const body = await ctx.request('POST', `/test/echo/${ID}`, { body: {} });
    expect(body.status).toBe(422);
    expect(body.body.detail).toEqual([{ type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: null, ctx: {} }]);

    const query = await ctx.request('POST', `/test/echo/${ID}?limit=50`, { body: { name: 'a' } });
    expect(query.status).toBe(422);
    expect(query.body.detail[0]).toMatchObject({ type: 'less_than_equal', loc: ['query', 'limit'], input: '50', ctx: { le: 10 } });

    const path = await ctx.request('POST', '/test/echo/not-a-uuid', { body: { name: 'a' } });
    expect(path.status).toBe(422);
    expect(path.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'item_id'], input: 'not-a-uuid' });

    const header = await ctx.request('POST', `/test/echo/${ID}`, { body: { name: 'a' }, headers: { 'X-Probe': 'maybe' } });
    expect(header.status).toBe(422);
    expect(header.body.detail[0]).toMatchObject({ type: 'enum', loc: ['header', 'x-probe'], input: 'maybe' });
  });

  it('refuses a query value outside its enum with 400, naming the allowed values', async () => {
    const res = await ctx.request('POST', `/test/echo/${ID}?kind=c`, { body: { name: 'a' } });
    expect(res).toMatchObject({ status: 400, body: { detail: "Invalid kind 'c': expected one of a, b" } });
  });

  it('refuses an undeclared query parameter with 400 Unknown filter', async () => {
    const res = await ctx.request('POST', `/test/echo/${ID}?limit=3&colour=red`, { body: { name: 'a' } });
    expect(res).toMatchObject({ status: 400, body: { detail: 'Unknown filter: colour' } });
  });

  it('hands the handler parsed values', async () => {
    const res = await ctx.request('POST', `/test/echo/${ID}?limit=3`, { body: { name: 'a' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ params: { item_id: ID }, query: { limit: 3 }, body: { name: 'a' } });
  });

  it('answers an unexpected error with 500 and keeps the stack in the log only', async () => {
    const res = await ctx.request('GET', '/test/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'Internal Server Error' });
    expect(res.text).not.toContain('secret internals');
    expect(ctx.logs.some((l) => l.includes('secret internals') && l.includes('"stack"'))).toBe(true);
  });
});

describe('health and readiness', () => {
  it('GET /health is live without auth', async () => {
    const res = await ctx.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/health+json');
    expect(res.body).toMatchObject({ status: 'pass', releaseId: '0.0.1', checks: { uptime: [{ status: 'pass', observedUnit: 's' }] } });
  });

  it('GET /ready checks Postgres, Temporal and object storage', async () => {
    const res = await ctx.request('GET', '/ready');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/health+json');
    expect(res.body.status).not.toBe('fail');
    for (const name of ['postgres:responseTime', 'temporal:responseTime', 'objectStorage:responseTime'])
      expect(res.body.checks[name][0], name).toMatchObject({ status: expect.stringMatching(/^(pass|warn)$/), observedUnit: 'ms' });
  });
});

describe('values Postgres cannot hold', () => {
  it('answers a NUL character or an out-of-range integer with 422, not 500', async () => {
    const tenant = await newTenant(ctx);
    const nul = await ctx.request('POST', '/tags', { token: tenant.session, body: { name: 'a\u0000b' } });
    expect(nul.status).toBe(422);
    expect(nul.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'name'] });
    const search = await ctx.request('GET', '/accounts?search=%00', { token: tenant.session });
    expect(search.status).toBe(422);
    expect(search.body.detail[0]).toMatchObject({ type: 'value_error', loc: ['query', 'search'] });
  });
});

describe('database unreachable', () => {
  it('answers 502 Database unavailable', async () => {
    const config = { ...ctx.config, DATABASE_URL: 'postgres://nobody:x@127.0.0.1:1/none' };
    const deps = await buildDeps(config, { sql: createSql(config.DATABASE_URL, 1), logger: ctx.deps.logger, temporal: ctx.deps.temporal });
    const server = createApp(deps).app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tenant = await newTenant(ctx);
      const res = await httpClient(`http://127.0.0.1:${port}`)('GET', '/me', { token: tenant.session });
      expect(res).toMatchObject({ status: 502, body: { detail: 'Database unavailable' } });
    } finally {
      server.close();
      await deps.sql.end({ timeout: 1 });
    }
  });
});

describe('Temporal unreachable', () => {
  let down: TestContext;
  beforeAll(async () => {
    down = await createTestContext({ extraAreas: [probeRoutes], env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  });
  afterAll(() => down?.close());

  it('makes /ready answer 503 naming the failed check', async () => {
    const res = await down.request('GET', '/ready');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      status: 'fail',
      output: 'Not ready: temporal',
      checks: { 'temporal:responseTime': [{ status: 'fail' }] },
    });
    expect(res.body.checks['postgres:responseTime'][0].status).not.toBe('fail');
  });

  it('turns a workflow start into a clean 503', async () => {
    const res = await down.request('POST', '/test/start-workflow');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'Workflow engine unavailable, try again shortly' });
  });
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1.0 document with version 0.0.1', async () => {
    const res = await ctx.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('0.0.1');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every registered route, with no version segment, a known tag and bearer security', async () => {
    const { document, routes } = createApp(ctx.deps);
    const tags = new Set(document.tags!.map((t) => t.name));
    expect(document.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(routes.length).toBeGreaterThan(5);
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      (['get', 'post', 'put', 'patch', 'delete'] as const).filter((m) => item[m]).map((method) => ({ method, path })),
    );
    // Both directions against the served document: nothing registered is undocumented, nothing documented is missing.
    expect(documented.map((r) => `${r.method} ${r.path}`).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    for (const { method, path, auth, statuses } of routes) {
      const operation = document.paths?.[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(path).not.toMatch(/\/v\d+(\/|$)/);
      expect(tags.has(operation!.tags![0]!)).toBe(true);
      // The statuses the wrapper declared, derived ones included, are the document's.
      expect(
        Object.keys(operation!.responses ?? {})
          .map(Number)
          .sort(),
        `${method} ${path}`,
      ).toEqual(expect.arrayContaining(statuses));
      if (auth !== 'public')
        expect(Object.keys(operation!.responses ?? {}), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '403']));
    }
    // A tag is listed exactly when a route carries it.
    const carried = new Set(documented.map(({ method, path }) => document.paths![path]![method]!.tags![0]!));
    expect([...tags].sort()).toEqual([...carried].sort());
    // The first key needs an identity-provider session, so the document names that scheme.
    expect(document.paths?.['/organization-pats']?.post?.security).toEqual([{ sessionAuth: [] }]);
    expect(document.components?.securitySchemes?.sessionAuth).toBeDefined();
    expect(document.paths?.['/pat/exchange']?.post?.security).toEqual([]);
    // A user's own things (tokens, notification feed) take a session or a pat_ token, and say so.
    expect(document.components?.securitySchemes?.userAuth).toBeDefined();
    for (const path of ['/user-pats', '/notifications']) expect(document.paths?.[path]?.get?.security, path).toEqual([{ userAuth: [] }]);
  });

  it('serves every documented operation: a protected one answers 401 without a token, none is an unknown route', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const sample = (path: string) => path.replace(/\{[^}]+\}/g, '01a1fca5-a371-745b-b7ee-e3c82b739e7d');
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const protectedRoute = Boolean(operation.security?.length);
        // A public upload or webhook route may close a bodyless request outright: it was served.
        const res = await ctx.request(method.toUpperCase(), sample(path)).catch((error: unknown) => {
          if (protectedRoute) throw error;
          return undefined;
        });
        if (!res) continue;
        expect(res.status, `${method} ${path}`).not.toBe(405);
        if (protectedRoute) expect(res.status, `${method} ${path}`).toBe(401);
        else expect(res.status === 404 && res.body?.detail === 'Not Found' && !path.includes('{'), `${method} ${path}`).toBe(false);
      }
    }
  });

  it('refuses a query parameter on a route that declares none (400), and documents that answer', async () => {
    const t = await newTenant(ctx);
    const res = await ctx.request('GET', '/me?verbose=1', { token: t.session });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Unknown filter: verbose' });
    const document = (await ctx.request('GET', '/openapi.json')).body;
    expect(Object.keys(document.paths['/me'].get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
  });

  it('serves an interactive page at /docs with its assets', async () => {
    const page = await ctx.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/openapi.json');
    const asset = await ctx.request('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
    expect((await ctx.request('GET', '/docs/assets/package.json')).status).toBe(404);
  });
});

describe('Temporal plumbing', () => {
  it('runs a workflow end to end on the dev server through a real worker', async () => {
    const workflowId = `health-probe-${Date.now()}`;
    const result = await ctx.deps.temporal.workflow.execute(healthProbe, { taskQueue: ctx.config.TEMPORAL_TASK_QUEUE, workflowId });
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, workflowId, 'health-probe');
    expect(result.postgres).toBe(true);
    expect(result.storage).toBe(true);
    expect(Date.parse(result.checked_at)).not.toBeNaN();
  });
});
