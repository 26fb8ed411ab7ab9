import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { buildDeps } from '../../server/build-deps';
import type { AppDeps } from '../../api/deps';
import { listen } from '../../server/listen';
import { createSql, databaseTimeouts } from '../../db/client';
import { freePort } from '../../dev-servers/ports';
import { createTestContext, type TestContext } from '../support/context';
import { httpClientFrom } from '../support/http-from';
import { createOrgKey, newTenant } from '../support/identity';

// A key id is not secret: whoever saw one can send wrong secrets for it. Those must not lock the key's
// holder out. Client addresses here are real socket addresses (127.x.y.z on loopback), not headers.

const wrongSecret = (key: string, n: number) => `${key.slice(0, key.indexOf('.') + 1)}${String(n).padStart(43, 'x')}`;

describe('a flood of wrong secrets from one address', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { AUTH_FAILURE_DELAY_MS: '0' } });
  });
  afterAll(() => ctx?.close());

  it('does not lock the key out for its holder at another address, and costs at most AUTH_FAILURES_PER_KEY Argon2id runs', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    const attacker = httpClientFrom(ctx.baseUrl, '127.0.0.1');
    const holder = httpClientFrom(ctx.baseUrl, '127.0.0.2');
    const before = ctx.deps.verifier.stats.secretVerifications;
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await attacker('GET', '/me', { token: wrongSecret(key, i) })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(110).fill(429));
    expect(ctx.deps.verifier.stats.secretVerifications - before).toBe(10);
    // The holder, whose secret this process has never seen, calls from elsewhere within the same window.
    const answer = await holder('GET', '/me', { token: key });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // The flooding address stays limited on this key id.
    expect((await attacker('GET', '/me', { token: wrongSecret(key, 999) })).status).toBe(429);
  });
});

/** A second API process on the same database: its own memory (caches, limiters), shared Postgres. */
async function startSecondInstance(
  ctx: TestContext,
): Promise<{ deps: AppDeps; from: (address: string) => ReturnType<typeof httpClientFrom>; close(): Promise<void> }> {
  const sql = createSql(ctx.config.DATABASE_URL!, 3, databaseTimeouts(ctx.config));
  const deps = await buildDeps(ctx.config, { sql, temporal: ctx.deps.temporal, logger: ctx.deps.logger });
  const port = await freePort();
  const server: Server = await listen(createApp(deps).app, port, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    deps,
    from: (address) => httpClientFrom(baseUrl, address),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sql.end({ timeout: 5 });
    },
  };
}

describe('an address that proved a key', () => {
  let ctx: TestContext;
  let other: Awaited<ReturnType<typeof startSecondInstance>>;
  beforeAll(async () => {
    ctx = await createTestContext({
      env: {
        AUTH_FAILURE_DELAY_MS: '0',
        AUTH_FAILURES_PER_KEY: '3',
        AUTH_FAILURES_PER_ADDRESS: '30',
        AUTH_UNPROVEN_FAILURES_PER_KEY: '5',
        AUTH_KEY_PROOF_TTL_SECONDS: '3600',
      },
    });
    other = await startSecondInstance(ctx);
  });
  afterAll(async () => {
    await other?.close();
    await ctx?.close();
  });

  /** Wrong secrets from several addresses until the key id's budget for unproven addresses is spent. */
  async function floodFromManyAddresses(key: string, send: (address: string) => ReturnType<typeof httpClientFrom>, net: string) {
    const statuses: number[] = [];
    for (let a = 1; a <= 3; a++) {
      for (let i = 0; i < 3; i++) statuses.push((await send(`${net}.${a}`)('GET', '/me', { token: wrongSecret(key, a * 10 + i) })).status);
    }
    // 3 per address (AUTH_FAILURES_PER_KEY), 5 in all (AUTH_UNPROVEN_FAILURES_PER_KEY), then 429.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429]);
  }

  it('keeps working on another API process during a flood from many addresses; an unproven address is refused', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    // Proven on the first process only.
    expect((await httpClientFrom(ctx.baseUrl, '127.0.0.2')('GET', '/me', { token: key })).status).toBe(200);
    const before = other.deps.verifier.stats.secretVerifications;
    await floodFromManyAddresses(key, other.from, '127.0.1');
    expect(other.deps.verifier.stats.secretVerifications - before).toBe(5);

    const stranger = await other.from('127.0.0.9')('GET', '/me', { token: key });
    expect(stranger.status).toBe(429);
    expect(stranger.body).toEqual({ detail: 'Too many failed attempts with API keys; retry later' });
    expect(Number(stranger.headers.get('retry-after'))).toBeGreaterThan(0);
    const holder = await other.from('127.0.0.2')('GET', '/me', { token: key });
    expect(holder.status, JSON.stringify(holder.body)).toBe(200);
  });

  it('is recorded also when the first process answers from its token cache, with the configured TTL', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    expect((await httpClientFrom(ctx.baseUrl, '127.0.0.2')('GET', '/me', { token: key })).status).toBe(200);
    // Cached now (TOKEN_CACHE_TTL_SECONDS 30): this answer runs no verification, yet proves the new address.
    expect((await httpClientFrom(ctx.baseUrl, '127.0.0.3')('GET', '/me', { token: key })).status).toBe(200);
    const keyRow = key.slice(3, key.indexOf('.'));
    const proofs = async () =>
      ctx.deps.sql<{ address: string; ttl: number }[]>`
        SELECT p.address, extract(epoch FROM p.expires_at - now())::int AS ttl
        FROM api_key_proofs p JOIN api_keys k ON k.id = p.key_id WHERE k.key_id = ${keyRow} ORDER BY p.address`;
    await expect.poll(async () => (await proofs()).map((p) => p.address), { timeout: 5000 }).toEqual(['127.0.0.2', '127.0.0.3']);
    for (const proof of await proofs()) expect(Math.abs(proof.ttl - 3600)).toBeLessThan(60);

    await floodFromManyAddresses(key, other.from, '127.0.2');
    expect((await other.from('127.0.0.3')('GET', '/me', { token: key })).status).toBe(200);
  });

  it('is honoured for a key proven from more addresses than a process holds in memory', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    expect((await httpClientFrom(ctx.baseUrl, '127.0.0.2')('GET', '/me', { token: key })).status).toBe(200);
    const keyRow = key.slice(3, key.indexOf('.'));
    await ctx.deps.sql`
      INSERT INTO api_key_proofs (key_id, address, expires_at)
      SELECT k.id, '10.9.' || (i / 256) || '.' || (i % 256), now() + interval '1 hour'
      FROM api_keys k, generate_series(1, 1001) i WHERE k.key_id = ${keyRow}`;
    await floodFromManyAddresses(key, other.from, '127.0.4');
    expect((await other.from('127.0.0.9')('GET', '/me', { token: key })).status).toBe(429);
    expect((await other.from('127.0.0.2')('GET', '/me', { token: key })).status).toBe(200);
  });

  it('lapses after its TTL: then the address is held to the key id budget like any other', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    expect((await httpClientFrom(ctx.baseUrl, '127.0.0.2')('GET', '/me', { token: key })).status).toBe(200);
    const keyRow = key.slice(3, key.indexOf('.'));
    await ctx.deps
      .sql`UPDATE api_key_proofs p SET expires_at = now() - interval '1 second' FROM api_keys k WHERE k.id = p.key_id AND k.key_id = ${keyRow}`;
    await floodFromManyAddresses(key, other.from, '127.0.3');
    expect((await other.from('127.0.0.2')('GET', '/me', { token: key })).status).toBe(429);
  });
});
