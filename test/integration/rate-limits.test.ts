import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createSql } from '../../db/client';
import { freePort } from '../../dev-servers/ports';
import { loadConfig, type Config } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';
import { buildDeps } from '../../server/build-deps';
import { listen } from '../../server/listen';
import { createTestContext, type TestContext } from '../support/context';
import { httpClient, type Request } from '../support/http';
import { createOrgKey, newTenant } from '../support/identity';

// Rate limits per credential and per organization, shared by API processes through Postgres; the answers
// carry the IETF draft's RateLimit-Policy and RateLimit fields, a spent quota is 429 with Retry-After.

const WINDOW = 3600;
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    env: { RATE_LIMIT_WINDOW_SECONDS: String(WINDOW), RATE_LIMIT_KEY_REQUESTS: '20', RATE_LIMIT_ORG_REQUESTS: '50' },
  });
});
afterAll(() => ctx?.close());

/** Windows are aligned on the epoch: a test that counts a quota starts at least `margin` seconds before its window ends. */
async function awayFromWindowEnd(windowSeconds = WINDOW, marginSeconds = 30): Promise<void> {
  const left = windowSeconds * 1000 - (Date.now() % (windowSeconds * 1000));
  if (left < marginSeconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

const RATE_LIMIT = /^"key";r=(\d+);t=(\d+), "org";r=(\d+);t=(\d+)$/;

/** `n` GET /me, `concurrency` at a time, through `request`; their statuses. */
async function burst(request: Request, token: string, n: number, concurrency = 8): Promise<number[]> {
  const statuses: number[] = [];
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < n) {
        sent++;
        statuses.push((await request('GET', '/me', { token })).status);
      }
    }),
  );
  return statuses;
}
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

/** What the current windows of a caller's two quotas have counted, its organization's and its session user's. */
async function windowsUsed(me: { body: { organization: { id: string }; user: { id: string } } }): Promise<number[]> {
  const rows = await ctx.deps.sql<{ used: number }[]>`
    SELECT used FROM rate_limit_windows
    WHERE subject IN (${`org:${me.body.organization.id}`}, ${`user:${me.body.user.id}`}) AND window_ends_at > now()`;
  return rows.map((r) => r.used);
}

describe('rate limit fields', () => {
  it('states the policies and what is left of each on every authenticated answer, errors included', async () => {
    await awayFromWindowEnd();
    const t = await newTenant(ctx);
    const first = await ctx.request('GET', '/me', { token: t.session });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe(`"key";q=20;w=${WINDOW}, "org";q=50;w=${WINDOW}`);
    const [, keyLeft, reset, orgLeft] = RATE_LIMIT.exec(first.headers.get('ratelimit') ?? '')!.map(Number);
    expect(keyLeft).toBe(19);
    expect(orgLeft).toBe(49);
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(WINDOW);

    // A 404 of the route counts and says so too.
    const missing = await ctx.request('GET', '/contacts/00000000-0000-7000-8000-000000000000', { token: t.session });
    expect(missing.status).toBe(404);
    expect(RATE_LIMIT.exec(missing.headers.get('ratelimit') ?? '')?.[1]).toBe('18');
  });

  it('counts neither public routes nor requests refused before their caller is known', async () => {
    await awayFromWindowEnd();
    const t = await newTenant(ctx);
    for (let i = 0; i < 25; i++) {
      const health = await ctx.request('GET', '/health');
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit')).toBeNull();
    }
    for (let i = 0; i < 25; i++) {
      const refused = await ctx.request('GET', '/me', { token: `${t.session}x` });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('ratelimit')).toBeNull();
    }
    const me = await ctx.request('GET', '/me', { token: t.session });
    expect(RATE_LIMIT.exec(me.headers.get('ratelimit') ?? '')?.[1]).toBe('19');
  });
});

describe('quotas', () => {
  it("refuses a credential past its quota with 429 and Retry-After, while the organization's other credentials go on", async () => {
    await awayFromWindowEnd();
    const t = await newTenant(ctx);
    const key = await createOrgKey(ctx, t.session); // the session's first request
    const statuses = await burst(ctx.request, t.session, 25, 1);
    expect(count(statuses, 200)).toBe(19);
    expect(count(statuses, 429)).toBe(6);

    const refused = await ctx.request('GET', '/me', { token: t.session });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Rate limit exceeded for this credential: 20 requests per 3600 s; retry after \d+ s$/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW).toBe(true);
    expect(refused.headers.get('ratelimit-policy')).toBe(`"key";q=20;w=${WINDOW}, "org";q=50;w=${WINDOW}`);
    const [, keyLeft, reset] = RATE_LIMIT.exec(refused.headers.get('ratelimit') ?? '')!.map(Number);
    expect(keyLeft).toBe(0);
    expect(reset).toBe(retryAfter);

    // The organization's ak_ key is another credential: its own quota, and the organization's rest.
    const other = await ctx.request('GET', '/me', { token: key });
    expect(other.status).toBe(200);
    const [, otherLeft, , orgLeft] = RATE_LIMIT.exec(other.headers.get('ratelimit') ?? '')!.map(Number);
    expect(otherLeft).toBe(19);
    expect(orgLeft).toBe(50 - 20 - 1); // one process: its estimate is exact (refused requests took nothing)
    // A write refused by the quota wrote nothing.
    const write = await ctx.request('POST', '/tags', { token: t.session, body: { name: 'refused' } });
    expect(write.status).toBe(429);
    const tags = await ctx.request('GET', '/tags', { token: key });
    expect(tags.status).toBe(200);
    expect(JSON.stringify(tags.body)).not.toContain('refused');
  });

  it("refuses every credential of an organization once the organization's quota is spent, and no other organization", async () => {
    await awayFromWindowEnd();
    const t = await newTenant(ctx);
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) keys.push(await createOrgKey(ctx, t.session));
    // Three keys of 20 each ask for more than the organization has left (50, less the four creates).
    const statuses = (await Promise.all(keys.slice(0, 3).map((key) => burst(ctx.request, key, 20, 2)))).flat();
    expect(count(statuses, 200)).toBe(50 - 4);
    // The fourth key has its own quota whole, but not the organization's.
    const refused = await ctx.request('GET', '/me', { token: keys[3]! });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Rate limit exceeded for this organization: 50 requests per 3600 s/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A credential refused by the organization's quota keeps its own: nothing was taken from it.
    const [, keyLeft, , orgLeft] = RATE_LIMIT.exec(refused.headers.get('ratelimit') ?? '')!.map(Number);
    expect([keyLeft, orgLeft]).toEqual([20, 0]);
    const another = await newTenant(ctx);
    expect((await ctx.request('GET', '/me', { token: another.session })).status).toBe(200);
  });
});

/** Another API process over the same database: its own app, pool and limiter, with `env` over the file's config. */
async function startApp(env: Record<string, string>): Promise<{ request: Request; config: Config; close(): Promise<void> }> {
  const port = await freePort();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: ctx.config.DATA_DIR,
    DATABASE_URL: ctx.config.DATABASE_URL,
    PORT: String(port),
    TEMPORAL_ADDRESS: ctx.config.TEMPORAL_ADDRESS,
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW),
    ...env,
  });
  const sql = createSql(config.DATABASE_URL!, 10);
  const deps = await buildDeps(config, { sql, temporal: ctx.deps.temporal, logger: createLogger('silent') });
  const { app } = createApp(deps);
  const server: Server = await listen(app, port, '127.0.0.1');
  return {
    request: httpClient(`http://127.0.0.1:${port}`),
    config,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sql.end({ timeout: 5 });
    },
  };
}

describe('two API processes over one database', () => {
  it('together admit a quota within 10 % of it, never more, per credential and per organization', async () => {
    const stale = new Date(Date.now() - 86_400_000);
    await ctx.deps.sql`INSERT INTO rate_limit_windows (subject, window_ends_at, used, granted) VALUES ('key:stale', ${stale}, 1, 1)`;
    const env = { RATE_LIMIT_KEY_REQUESTS: '150', RATE_LIMIT_ORG_REQUESTS: '200' };
    const [a, b] = [await startApp(env), await startApp(env)];
    try {
      await awayFromWindowEnd();
      // One credential through both processes at once: the credential's quota binds.
      const alone = await newTenant(ctx);
      const both = (await Promise.all([burst(a.request, alone.session, 150), burst(b.request, alone.session, 150)])).flat();
      expect(count(both, 200) + count(both, 429)).toBe(300);
      expect(count(both, 200)).toBeLessThanOrEqual(150);
      expect(count(both, 200)).toBeGreaterThanOrEqual(135);

      // Two credentials of one organization, each through both processes: the organization's quota binds.
      const t = await newTenant(ctx);
      const created = await a.request('POST', '/organization-pats', { token: t.session, body: { name: 'second' } });
      expect(created.status).toBe(200);
      const key: string = created.body.pat_key;
      const org = (
        await Promise.all([
          burst(a.request, t.session, 100),
          burst(b.request, t.session, 100),
          burst(a.request, key, 100),
          burst(b.request, key, 100),
        ])
      ).flat();
      expect(count(org, 200) + count(org, 429)).toBe(400);
      // The organization's quota counts the key's create too.
      expect(count(org, 200) + 1).toBeLessThanOrEqual(200);
      expect(count(org, 200) + 1).toBeGreaterThanOrEqual(180);
      // A process sweeps windows that ended long ago when it first sees a window.
      await expect
        .poll(async () => (await ctx.deps.sql`SELECT 1 FROM rate_limit_windows WHERE subject = 'key:stale'`).length, { timeout: 10_000 })
        .toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("gives a process's unserved lease back once its subject is idle there, for the other process to serve", async () => {
    const env = { RATE_LIMIT_KEY_REQUESTS: '100', RATE_LIMIT_ORG_REQUESTS: '1000' };
    const [a, b] = [await startApp(env), await startApp(env)];
    try {
      await awayFromWindowEnd();
      const t = await newTenant(ctx);
      // One request through A leases an eighth of the quota (13) and serves one of them.
      expect((await a.request('GET', '/me', { token: t.session })).status).toBe(200);
      // B gets the rest (87), and A's 12 once A has been idle for a second and B, refused, asks again
      // (at most a second later): every request of the quota is served, none more.
      let served = count(await burst(b.request, t.session, 120), 200);
      expect(served).toBeGreaterThanOrEqual(100 - 13);
      const deadline = Date.now() + 10_000;
      while (served < 99 && Date.now() < deadline) {
        const res = await b.request('GET', '/me', { token: t.session });
        if (res.status === 200) served++;
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(served).toBe(99);
      expect((await b.request('GET', '/me', { token: t.session })).status).toBe(429);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('takes the next whole lease while a quarter of the last one is left, so a busy subject never waits for it', async () => {
    const app = await startApp({ RATE_LIMIT_KEY_REQUESTS: '100000', RATE_LIMIT_ORG_REQUESTS: '100000', RATE_LIMIT_LEASE_MAX: '40' });
    try {
      await awayFromWindowEnd();
      const t = await newTenant(ctx);
      const me = await app.request('GET', '/me', { token: t.session });
      const used = () => windowsUsed(me);
      // 29 of the first 40 served: 11 left, more than a quarter, and no second lease yet.
      expect(count(await burst(app.request, t.session, 28, 1), 200)).toBe(28);
      expect(await used()).toEqual([40, 40]);
      // The 30th leaves 10, a quarter: the second lease is taken while they are served.
      expect((await app.request('GET', '/me', { token: t.session })).status).toBe(200);
      await expect.poll(used, { timeout: 5000 }).toEqual([80, 80]);
    } finally {
      await app.close();
    }
  });

  it('asks the database once per lease, not once per request', async () => {
    const app = await startApp({ RATE_LIMIT_KEY_REQUESTS: '100000', RATE_LIMIT_ORG_REQUESTS: '100000', RATE_LIMIT_LEASE_MAX: '40' });
    try {
      await awayFromWindowEnd();
      const t = await newTenant(ctx);
      const me = await app.request('GET', '/me', { token: t.session });
      const statuses = await burst(app.request, t.session, 99, 1);
      expect(count(statuses, 200)).toBe(99);
      // 100 requests, one statement per 40: three leases for each quota.
      expect(await windowsUsed(me)).toEqual([120, 120]);
    } finally {
      await app.close();
    }
  });
});
