import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp, type AreaRoutes } from '../../api/app';
import { buildDeps } from '../../server/build-deps';
import { migrate } from '../../db/migrate';
import { loadConfig } from '../../platform/core/config';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../dev-servers/embedded-postgres';
import { createLogger } from '../../platform/core/logger';
import { freePort } from '../../dev-servers/ports';
import { waitFor } from '../support/campaigns';
import type { TestContext } from '../support/context';
import { freeze, timed } from '../support/faults';
import { httpClient } from '../support/http';
import { newTenant, type Tenant } from '../support/identity';

// A Postgres of this file alone is frozen (SIGSTOP on the postmaster and every backend), pushed past
// its timeouts, and restarted while the app runs: every request ends within its bound with the spec's
// 502, nothing is half-written, connections are given back, and the same app serves again afterwards.

const STATEMENT_MS = 1000;
const RESPONSE_MS = 1500;
const CONNECT_MS = 1000;
const IDLE_TX_MS = 1500;
const READY_MS = 1000;
const POOL = 4;
const SLACK_MS = 1500;
const UNAVAILABLE = { detail: 'Database unavailable' };

/** Routes that hold the database the way a slow query or a stalled client would. */
const slowRoutes: AreaRoutes = (routes, deps) => {
  routes.add({
    method: 'get',
    path: '/test/slow-statement',
    tag: 'Service Health',
    summary: 'a statement longer than statement_timeout',
    auth: 'public',
    responses: { 200: { description: 'never: the server cancels it' }, 502: { description: 'canceled by the server' } },
    handler: async () => deps.sql`SELECT pg_sleep(${(STATEMENT_MS * 3) / 1000})`,
  });
  routes.add({
    method: 'get',
    path: '/test/idle-transaction',
    tag: 'Service Health',
    summary: 'a transaction left idle longer than idle_in_transaction_session_timeout',
    auth: 'public',
    responses: { 200: { description: 'never: the server ends the session' }, 502: { description: 'the session was ended by the server' } },
    handler: async () =>
      deps.sql.begin(async (tx) => {
        await tx`SELECT 1`;
        await new Promise((r) => setTimeout(r, IDLE_TX_MS * 2));
        return tx`SELECT 1`;
      }),
  });
};

let pg: EmbeddedDatabase;
let pgDir: string;
let pgPort: number;
let ctx: TestContext;
let server: Server;
let thaw: (() => void) | undefined;
let tenant: Tenant;

const postmasterPid = () => Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

beforeAll(async () => {
  const scratch = fs.mkdtempSync(path.join(inject('scratchDir'), 'faults-pg-'));
  fs.chmodSync(scratch, 0o755); // the postgres system user must reach its data dir
  pgDir = path.join(scratch, 'pg');
  pgPort = await freePort();
  pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe('CREATE DATABASE app');
  await admin.end();
  await migrate(pg.urlFor('app'));

  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(inject('scratchDir'), 'faults-ctx-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: pg.urlFor('app'),
    DATABASE_POOL_MAX: String(POOL),
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
    DATABASE_RESPONSE_TIMEOUT_MS: String(RESPONSE_MS),
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
    DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(IDLE_TX_MS),
    TEMPORAL_REQUEST_TIMEOUT_MS: '1000',
    READY_CHECK_TIMEOUT_MS: String(READY_MS),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    LOG_LEVEL: 'info',
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const deps = await buildDeps(config, { logger: createLogger('info', sink) });
  await deps.storage.ensureReady();
  server = await new Promise((resolve) => {
    const s = createApp(deps, [slowRoutes]).app.listen(port, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  ctx = {
    config,
    deps,
    baseUrl,
    request: httpClient(baseUrl),
    logs,
    session: (claims, ttl) => deps.devIdp!.sign(claims, ttl),
    close: async () => {},
  };
  tenant = await newTenant(ctx);
}, 120_000);

afterAll(async () => {
  thaw?.();
  server?.closeAllConnections();
  server?.close();
  await ctx?.deps.sql.end({ timeout: 2 });
  await ctx?.deps.temporal.connection.close().catch(() => {});
  await pg?.stop();
});

/** The app's sessions on its database, seen from a connection of the test's own. */
async function appSessions(): Promise<{ state: string }[]> {
  const probe = postgres(pg.urlFor('app'), { max: 1, onnotice: () => {} });
  try {
    return await probe<{ state: string }[]>`
      SELECT state FROM pg_stat_activity WHERE datname = 'app' AND application_name = 'voice-crm'`;
  } finally {
    await probe.end();
  }
}

const serves = () =>
  waitFor(
    async () => (await ctx.request('GET', '/tags', { token: tenant.session })).status === 200,
    30_000,
    'GET /tags to answer 200 again',
  );

describe('Postgres limits', () => {
  it('cancels a statement past statement_timeout: 502, and the connection serves the next request', async () => {
    const { value, ms } = await timed(() => ctx.request('GET', '/test/slow-statement'));
    expect(value.status).toBe(502);
    expect(value.body).toEqual(UNAVAILABLE);
    expect(ms).toBeLessThan(STATEMENT_MS + SLACK_MS);
    expect(ms).toBeGreaterThanOrEqual(STATEMENT_MS - 50);
    const tags = await ctx.request('GET', '/tags', { token: tenant.session });
    expect(tags.status).toBe(200);
  });

  it('ends a transaction left idle past idle_in_transaction_session_timeout: 502, and the pool recovers', async () => {
    const { value } = await timed(() => ctx.request('GET', '/test/idle-transaction'));
    expect(value.status).toBe(502);
    expect(value.body).toEqual(UNAVAILABLE);
    // Every slot of the pool serves again, at once.
    const all = await Promise.all(Array.from({ length: POOL * 2 }, () => ctx.request('GET', '/tags', { token: tenant.session })));
    expect(all.map((r) => r.status)).toEqual(Array(POOL * 2).fill(200));
    expect((await appSessions()).filter((s) => s.state.startsWith('idle in transaction'))).toEqual([]);
  });
});

describe('a frozen Postgres', () => {
  it('answers every request within its bound with 502, /ready within its own, and serves again after the thaw', async () => {
    const created = await ctx.request('POST', '/tags', { token: tenant.session, body: { name: 'before' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const contact = await ctx.request('POST', '/contacts', {
      token: tenant.session,
      body: { email: 'frozen@example.com', first_name: 'Frozen', tags: ['before'] },
    });
    expect(contact.status, JSON.stringify(contact.body)).toBe(200);

    thaw = freeze(postmasterPid());
    const reads = Array.from({ length: 12 }, () => timed(() => ctx.request('GET', '/tags', { token: tenant.session })));
    const write = timed(() => ctx.request('POST', '/tags', { token: tenant.session, body: { name: 'during' } }));
    // A rename touches the tag and the contact in one transaction: it must apply whole or not at all.
    const rename = timed(() => ctx.request('PATCH', `/tags/${created.body.id}`, { token: tenant.session, body: { name: 'renamed' } }));
    const ready = timed(() => ctx.request('GET', '/ready'));

    const readyAnswer = await ready;
    expect(readyAnswer.value.status).toBe(503);
    expect(readyAnswer.value.body).toMatchObject({ status: 'fail', checks: { 'postgres:responseTime': [{ status: 'fail' }] } });
    expect(readyAnswer.ms).toBeLessThan(READY_MS + SLACK_MS);

    // Requests beyond the pool's POOL connections wait for a connection attempt: the first one fails
    // by the connect timeout, and the attempts after it fail at once (platform/core/postgres-watchdog.ts).
    const bound = RESPONSE_MS + CONNECT_MS + SLACK_MS;
    for (const { value, ms } of await Promise.all([...reads, write, rename])) {
      expect(value.status, JSON.stringify(value.body)).toBe(502);
      expect(value.body).toEqual(UNAVAILABLE);
      expect(ms).toBeLessThan(bound);
    }

    thaw();
    thaw = undefined;
    await serves();

    // Nothing half-written: the tag and the contact agree on the tag's name.
    const tags = await ctx.request('GET', '/tags', { token: tenant.session });
    const names = tags.body.tags ? tags.body.tags.map((t: { name: string }) => t.name) : tags.body.map((t: { name: string }) => t.name);
    const tagName = names.includes('renamed') ? 'renamed' : 'before';
    const read = await ctx.request('GET', `/contacts/${contact.body.id}`, { token: tenant.session });
    expect(read.body.tags).toEqual([tagName]);

    // Every connection was given back: the whole pool serves concurrent requests, none is stuck.
    const all = await Promise.all(Array.from({ length: POOL * 2 }, () => ctx.request('GET', '/tags', { token: tenant.session })));
    expect(all.map((r) => r.status)).toEqual(Array(POOL * 2).fill(200));
    await waitFor(
      async () => (await appSessions()).every((s) => !s.state.startsWith('idle in transaction')),
      10_000,
      'no transaction left open',
    );
  }, 90_000);
});

describe('a restarted Postgres', () => {
  it('costs requests a prompt 502 while it is down, then the same app serves again', async () => {
    await pg.stop();
    const down = await timed(() => ctx.request('GET', '/tags', { token: tenant.session }));
    expect(down.value.status).toBe(502);
    expect(down.value.body).toEqual(UNAVAILABLE);
    expect(down.ms).toBeLessThan(CONNECT_MS + SLACK_MS);
    const ready = await ctx.request('GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks['postgres:responseTime'][0].status).toBe('fail');

    pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });
    await serves();
    const again = await ctx.request('GET', '/ready');
    expect(again.status).toBe(200);
  }, 90_000);
});
