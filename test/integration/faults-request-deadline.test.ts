import http from 'node:http';
import { once } from 'node:events';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AreaRoutes } from '../../api/app';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { timed } from '../support/faults';
import { newTenant, type Tenant } from '../support/identity';

// Every request ends within REQUEST_TIMEOUT_MS and gives its database connections back, whatever its
// handler waits for; a pool that stays exhausted shows in /health.

const DEADLINE_MS = 2000;
const SLACK_MS = 3000;
const POOL = 5; // test/support/context.ts
const never = () => new Promise<never>(() => {});

/** Handlers that hold a connection the way a bug would. */
const stuckRoutes: AreaRoutes = (routes, deps) => {
  const responses = { 200: { description: 'never: the deadline answers 503 first' } };
  routes.add({
    method: 'get',
    path: '/test/stuck-transaction',
    tag: 'Service Health',
    summary: 'a transaction whose handler waits forever',
    auth: 'public',
    responses,
    handler: () =>
      deps.sql.begin(async (tx) => {
        await tx`SELECT 1`;
        return never();
      }),
  });
  routes.add({
    method: 'get',
    path: '/test/stuck-copy',
    tag: 'Service Health',
    summary: 'a COPY the server refuses, waited on through the bare stream (the server ignores its idle limit then)',
    auth: 'public',
    responses,
    handler: () =>
      deps.sql.begin(async (tx) => {
        await tx`CREATE TEMP TABLE stuck (v jsonb) ON COMMIT DROP`;
        const stream = await tx`COPY stuck (v) FROM STDIN`.writable();
        stream.end('"a\\\\ud800b"\n');
        await once(stream, 'finish'); // never comes for a refused COPY
        return {};
      }),
  });
  routes.add({
    method: 'post',
    path: '/test/echo',
    tag: 'Service Health',
    summary: 'answers the length of the text it is sent',
    auth: 'public',
    body: z.object({ text: z.string() }),
    responses: { 200: { description: 'the length', schema: z.object({ length: z.number() }) } },
    handler: async ({ body }) => ({ length: body.text.length }),
  });
};

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext({
    env: { REQUEST_TIMEOUT_MS: String(DEADLINE_MS), DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_RESPONSE_TIMEOUT_MS: '1500' },
    extraAreas: [stuckRoutes],
  });
  tenant = await newTenant(ctx);
});
afterAll(() => ctx?.close());

/** This file's database sessions (other than the asking one) inside a transaction. */
async function openTransactions(): Promise<number> {
  const [row] = await ctx.deps.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`;
  return row!.n;
}

const serves = async () => {
  const { value, ms } = await timed(() => ctx.request('GET', '/tags', { token: tenant.session }));
  expect(value.status).toBe(200);
  expect(ms).toBeLessThan(SLACK_MS);
};

describe('the request deadline (REQUEST_TIMEOUT_MS)', () => {
  it.each(['/test/stuck-transaction', '/test/stuck-copy'])(
    'answers %s with 503 in time, more of them than the pool holds, and frees their connections',
    async (path) => {
      const { value: answers, ms } = await timed(() => Promise.all(Array.from({ length: POOL + 2 }, () => ctx.request('GET', path))));
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual({
          detail: `The request did not finish within ${DEADLINE_MS} ms; what it had not committed was rolled back`,
        });
      }
      expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      await serves();
      await waitFor(async () => (await openTransactions()) === 0, 5000, 'the stuck transactions to end');
      expect((await ctx.request('GET', '/ready')).status).toBe(200);
    },
  );

  it('does not count the time a client takes to send its body', async () => {
    const url = new URL('/test/echo', ctx.baseUrl);
    const body = JSON.stringify({ text: 'x'.repeat(3000) });
    const req = http.request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    });
    const answered = once(req, 'response') as Promise<[http.IncomingMessage]>;
    // The body trickles in over about 1.5 times the deadline.
    const parts = 6;
    for (let i = 0; i < parts; i++) {
      req.write(body.slice((i * body.length) / parts, ((i + 1) * body.length) / parts));
      await new Promise((r) => setTimeout(r, (DEADLINE_MS * 1.5) / parts));
    }
    req.end();
    const [res] = await answered;
    let text = '';
    for await (const chunk of res) text += chunk;
    expect(res.statusCode, text).toBe(200);
    expect(JSON.parse(text)).toEqual({ length: 3000 });
  });
});

describe('a transaction whose connection closed under it', () => {
  it('refuses what its callback still sends: nothing runs outside the transaction, and the process lives on', async () => {
    await ctx.deps.sql`CREATE TABLE IF NOT EXISTS late_writes (v text)`;
    let resume!: () => void;
    const gate = new Promise<void>((resolve) => (resume = resolve));
    let late: Promise<unknown> | undefined;
    const outcome = ctx.deps.sql.begin(async (tx) => {
      const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await ctx.deps.sql`SELECT pg_terminate_backend(${row!.pid})`; // as the server's idle limit would
      await gate;
      late = tx`INSERT INTO late_writes VALUES ('after its end')`.then(
        () => 'sent',
        (error: { code?: string }) => error.code,
      );
      await late;
      return 'committed';
    });
    await expect(outcome).rejects.toThrow();
    // At once, before the pool opens the connection again (postgres.js would write to a closed socket), ...
    resume();
    await waitFor(async () => late !== undefined, 2000, 'the late query');
    expect(await late).toBe('TRANSACTION_OVER');
    // ... and once it is open again (the query would run there, outside any transaction).
    const [count] = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM late_writes`;
    expect(count!.n).toBe(0);
    await serves();
  });
});

describe('/health and an exhausted pool', () => {
  it('warns, naming the reason, while every connection stays busy, and passes again once they are free', async () => {
    const idle = await ctx.request('GET', '/health');
    expect(idle.body.status).toBe('pass');
    expect(idle.body.checks['postgres:connections'][0]).toMatchObject({
      componentType: 'datastore',
      observedUnit: 'connections',
      status: 'pass',
    });

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Transactions outside any request: no deadline takes them back.
    const held = Array.from({ length: POOL }, () =>
      ctx.deps.sql.begin(async (tx) => {
        await tx`SELECT 1`;
        await gate;
      }),
    );
    try {
      const warned = await waitFor(
        async () => {
          const res = await ctx.request('GET', '/health');
          return res.body.status === 'warn' ? res : undefined;
        },
        30_000,
        '/health to warn',
      );
      expect(warned.status).toBe(200);
      expect(warned.body.output).toMatch(/^Database pool exhausted: all 5 connections busy for \d+ s; requests wait for a connection$/);
      expect(warned.body.checks['postgres:connections'][0]).toMatchObject({
        observedValue: POOL,
        status: 'warn',
        output: warned.body.output,
      });
    } finally {
      release();
      await Promise.all(held);
    }
    await waitFor(async () => (await ctx.request('GET', '/health')).body.status === 'pass', 5000, '/health to pass again');
  });
});
