import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, type Tenant } from '../support/identity';

// Verified tokens are not cached here (TTL 0), so every request reaches the verifier: what it costs is
// visible in stats.secretVerifications (Argon2id runs).
let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext({
    env: {
      TOKEN_CACHE_TTL_SECONDS: '0',
      AUTH_FAILURES_PER_KEY: '3',
      AUTH_FAILURES_PER_ADDRESS: '5',
      AUTH_UNPROVEN_FAILURES_PER_KEY: '6',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
      AUTH_NEGATIVE_CACHE_SECONDS: '60',
      AUTH_HASH_CONCURRENCY: '2',
      AUTH_FAILURE_DELAY_MS: '0',
      // The test client stands in for a proxy forwarding each caller's address.
      TRUSTED_PROXIES: '127.0.0.1',
    },
  });
  tenant = await newTenant(ctx);
});
afterAll(() => ctx?.close());

const verifications = () => ctx.deps.verifier.stats.secretVerifications;
let addressSeq = 0;
/** A client address of its own (forwarded by the trusted proxy the test client stands in for). */
const newAddress = () => `203.0.113.${++addressSeq}`;
const me = (token: string, address: string) => ctx.request('GET', '/me', { token, headers: { 'X-Forwarded-For': address } });
const wrongSecret = (key: string, n: number) => `${key.slice(0, key.indexOf('.') + 1)}${String(n).padStart(43, 'x')}`;

describe('a valid key', () => {
  it('is verified once for 64 concurrent requests, and Argon2id is not run again after the cache', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    const before = verifications();
    const address = newAddress();
    const answers = await Promise.all(Array.from({ length: 64 }, () => me(key, address)));
    expect(answers.map((r) => r.status)).toEqual(Array(64).fill(200));
    expect((await me(key, address)).status).toBe(200);
    expect(verifications() - before).toBe(1);
  });

  it('still stops at once when revoked, although its secret is remembered', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    expect((await me(key, newAddress())).status).toBe(200);
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: tenant.session })).body;
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: tenant.session })).status).toBe(204);
    expect(await me(key, newAddress())).toMatchObject({ status: 401, body: { detail: 'API key revoked' } });
  });
});

describe('wrong secrets', () => {
  it('are remembered: the same wrong token repeated runs Argon2id once', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    const bad = wrongSecret(key, 1);
    const before = verifications();
    const address = newAddress();
    const answers = await Promise.all(Array.from({ length: 20 }, () => me(bad, address)));
    expect(answers.every((r) => r.status === 401 && r.body.detail === 'Invalid API key')).toBe(true);
    expect((await me(bad, newAddress())).status).toBe(401);
    expect(verifications() - before).toBe(1);
  });

  it('are limited per key id and address: 429 with Retry-After, without running Argon2id', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    expect((await me(key, newAddress())).status).toBe(200); // the holder, proven before the flood
    const attacker = newAddress();
    for (let i = 0; i < 3; i++) expect((await me(wrongSecret(key, 100 + i), attacker)).status).toBe(401);
    const before = verifications();
    const limited = await me(wrongSecret(key, 200), attacker);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ detail: 'Too many failed attempts with API keys; retry later' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(verifications()).toBe(before);
    // Another address still gets an answer for this key id, and the key's holder is not locked out.
    expect((await me(wrongSecret(key, 201), newAddress())).status).toBe(401);
    expect((await me(key, newAddress())).status).toBe(200);
    // POST /pat/exchange is limited the same way.
    const exchange = await ctx.request('POST', '/pat/exchange', {
      body: { token: wrongSecret(key, 300) },
      headers: { 'X-Forwarded-For': attacker },
    });
    expect(exchange.status).toBe(429);
  });

  it('are limited per key id across addresses that have not proven it (AUTH_UNPROVEN_FAILURES_PER_KEY)', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    expect((await me(key, newAddress())).status).toBe(200); // the holder, proven before the flood
    for (let i = 0; i < 6; i++) expect((await me(wrongSecret(key, 400 + i), newAddress())).status).toBe(401);
    const before = verifications();
    expect((await me(wrongSecret(key, 410), newAddress())).status).toBe(429);
    expect(verifications()).toBe(before);
    expect((await me(key, newAddress())).status).toBe(200);
  });

  it('are limited per client address, across key ids', async () => {
    const address = newAddress();
    const keys = await Promise.all(Array.from({ length: 6 }, () => createOrgKey(ctx, tenant.session)));
    for (let i = 0; i < 5; i++) expect((await me(wrongSecret(keys[i]!, 1), address)).status).toBe(401);
    const limited = await me(wrongSecret(keys[5]!, 1), address);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    // Unknown key ids count too (one database read each, still a probe).
    const other = newAddress();
    for (let i = 0; i < 5; i++)
      expect((await me(`ak_unknownkeyid${String(i).padStart(4, '0')}.${'y'.repeat(43)}`, other)).status).toBe(401);
    expect((await me(wrongSecret(keys[5]!, 2), other)).status).toBe(429);
    // Another address is not affected.
    expect((await me(wrongSecret(keys[5]!, 3), newAddress())).status).toBe(401);
  });

  it('run at most AUTH_HASH_CONCURRENCY Argon2id checks at once', async () => {
    const keys = await Promise.all(Array.from({ length: 4 }, () => createOrgKey(ctx, tenant.session)));
    const attempts = keys.flatMap((key, k) => [0, 1].map((i) => me(wrongSecret(key, 500 + i), `198.51.100.${k * 2 + i + 1}`)));
    const answers = await Promise.all(attempts);
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(401));
    expect(ctx.deps.verifier.hashing.peak).toBeLessThanOrEqual(2);
    expect(ctx.deps.verifier.hashing.peak).toBeGreaterThan(0);
  });

  it('declares 429 with Retry-After on authenticated routes and on the exchange', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    for (const op of [doc.paths['/me'].get, doc.paths['/pat/exchange'].post, doc.paths['/tags'].get]) {
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    }
  });
});

describe('the answer to a refused key', () => {
  it('comes AUTH_FAILURE_DELAY_MS late (401 and 429 alike), while a valid key answers at once', async () => {
    // A delay long enough that a valid key's answer, slowed by a loaded machine, still comes well before it.
    const slow = await createTestContext({ env: { AUTH_FAILURE_DELAY_MS: '2000', AUTH_FAILURES_PER_KEY: '1' } });
    try {
      const t = await newTenant(slow);
      const key = await createOrgKey(slow, t.session);
      const timed = async (token: string) => {
        const started = performance.now();
        const res = await slow.request('GET', '/me', { token });
        return { status: res.status, ms: performance.now() - started };
      };
      expect((await timed(key)).status).toBe(200);
      const refused = await timed(wrongSecret(key, 1));
      expect(refused.status).toBe(401);
      expect(refused.ms).toBeGreaterThanOrEqual(1990);
      const limited = await timed(wrongSecret(key, 2));
      expect(limited.status).toBe(429);
      expect(limited.ms).toBeGreaterThanOrEqual(1990);
      expect((await timed(key)).ms).toBeLessThan(1990);
    } finally {
      await slow.close();
    }
  });
});

describe('who sees key ids', () => {
  it('a read scope or a CRM manage scope neither lists nor revokes keys; api:manage or Org admin does both', async () => {
    const t = await newTenant(ctx, ['api:read', 'contacts:read', 'organizations:read', 'contacts:manage', 'organizations:manage']);
    const reader = await createOrgKey(ctx, t.session, { scopes: ['api:read', 'contacts:read', 'organizations:read'] });
    const crmManager = await createOrgKey(ctx, t.session, { scopes: ['contacts:manage'] });
    const admin = await createOrgKey(ctx, t.session, { scopes: ['organizations:manage'] });
    for (const token of [reader, crmManager]) {
      expect(await ctx.request('GET', '/organization-pats', { token })).toMatchObject({
        status: 403,
        body: { detail: 'Insufficient permissions' },
      });
    }
    const list = await ctx.request('GET', '/organization-pats', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(3);
    for (const token of [reader, crmManager])
      expect((await ctx.request('DELETE', `/organization-pats/${list.body[0].id}`, { token })).status).toBe(403);
    const apiManager = await newTenant(ctx, ['api:manage']);
    expect((await ctx.request('GET', '/organization-pats', { token: apiManager.session })).status).toBe(200);
  });
});
