import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageRows } from '../../db/custom-data';
import { isDomainError } from '../../domain/errors';
import { writeRows } from '../../services/custom-data';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// Snapshot writes Postgres refuses end at once, roll back and give their connection back; a replace that
// could only empty the table by accident is refused.

let ctx: TestContext;
let a: Tenant;
let aOrg: string;
beforeAll(async () => {
  ctx = await createTestContext();
  a = await newTenant(ctx);
  aOrg = await orgUuid(ctx, a);
});
afterAll(() => ctx?.close());

const POOL = 5; // test/support/context.ts
const SCHEMA = {
  key: ['id'],
  properties: [
    { name: 'id', type: 'string' },
    { name: 'v', type: 'string' },
  ],
};
const uniqueName = (prefix: string) => `${prefix}_${crypto.randomBytes(3).toString('hex')}`;
const declare = async (name: string) =>
  expect((await ctx.request('PUT', `/core/custom-data/tables/${name}`, { token: a.session, body: SCHEMA })).status).toBe(200);
const write = (name: string, mode: 'replace' | 'upsert', body: unknown) =>
  ctx.request('POST', `/core/custom-data/tables/${name}/${mode}`, { token: a.session, body });
const rawWrite = (name: string, mode: 'replace' | 'upsert', rawBody: string) =>
  ctx.request('POST', `/core/custom-data/tables/${name}/${mode}`, {
    token: a.session,
    rawBody,
    headers: { 'Content-Type': 'application/json' },
  });
const allRows = async (name: string) =>
  (await ctx.request('GET', `/core/custom-data/tables/${name}/rows?state=all`, { token: a.session })).body;

/** Settles with the promise's outcome, or fails the test once `ms` have passed (the bug was a hang). */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sessions of this file's database other than the asking one, by state. */
async function sessionStates(): Promise<string[]> {
  const rows = await ctx.deps.sql<{ state: string | null }[]>`
    SELECT state FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
  return rows.map((r) => r.state ?? '');
}

/** [key, JSON text] lines as the service stages them. */
const lines = (n: number, from = 0): [string, string][] =>
  Array.from({ length: n }, (_, i) => [`["k${from + i}"]`, JSON.stringify({ id: `k${from + i}`, v: 'x'.repeat(40) })]);
// A lone surrogate as JSON.stringify writes it: a JSON escape jsonb refuses.
const refused: [string, string] = ['["bad"]', '{"id":"bad","v":"a\\ud800b"}'];

describe('a COPY Postgres refuses', () => {
  it.each([
    ['as its last row, after the stream ended', () => [refused]],
    ['among 60,000 rows, after the stream ended', () => [...lines(60_000), refused]],
    ['as its first row, while more megabytes are still being written', () => [refused, ...lines(60_000)]],
  ])('%s: throws 400 at once, rolls back, and frees the connection (twice the pool over)', async (_, rows) => {
    const started = performance.now();
    const outcomes = await within(
      20_000,
      'refused COPYs',
      Promise.allSettled(Array.from({ length: POOL * 2 }, () => ctx.deps.sql.begin((tx) => stageRows(tx, aOrg, rows())))),
    );
    expect(performance.now() - started).toBeLessThan(15_000);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason;
      expect(isDomainError(error, 'invalid'), String(error)).toBe(true);
      expect(error.detail).toMatch(/nothing was written/);
    }
    // Every connection went back to the pool, outside any transaction.
    expect((await sessionStates()).filter((s) => s.startsWith('idle in transaction'))).toEqual([]);
    const [row] = await within(5_000, 'a query after them', ctx.deps.sql`SELECT 1 AS ok`);
    expect(row!.ok).toBe(1);
  });

  it('surfaces the server canceling a COPY (statement_timeout) instead of waiting', async () => {
    const outcome = await within(
      20_000,
      'canceled COPY',
      ctx.deps.sql
        .begin(async (tx) => {
          await tx`SET LOCAL statement_timeout = '200ms'`;
          await stageRows(tx, aOrg, lines(400_000));
        })
        .then(
          () => 'staged',
          (error: { code?: string }) => error.code,
        ),
    );
    // On a fast machine the COPY may finish first; it must never hang.
    expect(['57014', 'staged']).toContain(outcome);
    expect((await sessionStates()).filter((s) => s.startsWith('idle in transaction'))).toEqual([]);
  });

  it('refuses a lone surrogate that reaches the service (400), writes nothing, and the table takes the next write', async () => {
    const name = uniqueName('surrogate');
    await declare(name);
    expect((await write(name, 'replace', { rows: [{ id: 'a', v: 'kept' }] })).status).toBe(200);
    const before = await allRows(name);
    for (const mode of ['replace', 'upsert'] as const) {
      const error = await within(
        10_000,
        mode,
        writeRows(ctx.deps, aOrg, name, [{ id: 'b', v: 'a\ud800b' }], mode).catch((e: unknown) => e),
      );
      expect(isDomainError(error, 'invalid'), String(error)).toBe(true);
    }
    expect(await allRows(name)).toEqual(before);
    expect((await write(name, 'upsert', { rows: [{ id: 'b', v: 'fine' }] })).body).toMatchObject({ written: 1, live_after: 2 });
  });
});

describe('a lone surrogate in a bulk body', () => {
  it.each(['upsert', 'replace'] as const)('%s: 400 at once, twice the pool over; the pool and /ready stay usable', async (mode) => {
    const name = uniqueName(`lone_${mode}`);
    await declare(name);
    const started = performance.now();
    const answers = await within(
      15_000,
      'lone surrogate bodies',
      Promise.all(Array.from({ length: POOL * 2 }, () => rawWrite(name, mode, '{"rows":[{"id":"x","v":"a\\ud800b"}]}'))),
    );
    expect(performance.now() - started).toBeLessThan(10_000);
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        detail: 'Request body is not valid Unicode: a lone UTF-16 surrogate (\\ud800) in the value at body.rows.0.v',
      });
    }
    expect((await write(name, mode, { rows: [{ id: 'x', v: 'ab' }] })).status).toBe(200);
    expect((await allRows(name)).data.map((r: { data: unknown }) => r.data)).toEqual([{ id: 'x', v: 'ab' }]);
    expect((await ctx.request('GET', '/ready')).status).toBe(200);
  });
});

describe('a replace whose rows cannot be keyed', () => {
  it('is 422 in the validation format when rows were sent but none holds the key, and applies nothing', async () => {
    const name = uniqueName('unkeyed');
    await declare(name);
    expect((await write(name, 'replace', { rows: [{ id: 'a' }, { id: 'b' }] })).body).toMatchObject({ live_after: 2 });
    const before = await allRows(name);
    const res = await write(name, 'replace', { rows: [{ v: 'no key' }, { ID: 'a' }, { id: null }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'rows'],
          msg: expect.stringMatching(
            /^Value error, none of the 3 row\(s\) holds every key property \(id\).*tombstone every live row.*nothing was applied/,
          ),
          input: null,
          ctx: {},
        },
      ],
    });
    expect(await allRows(name)).toEqual(before);
    // One keyed row among them is a snapshot: the others are skipped with a warning, as before.
    const keyed = await write(name, 'replace', { rows: [{ v: 'no key' }, { id: 'a' }] });
    expect(keyed.status).toBe(200);
    expect(keyed.body).toMatchObject({
      received: 2,
      tombstoned: 1,
      live_after: 1,
      warnings: [expect.stringContaining('lack a key property')],
    });
  });

  it('keeps rows: [] as the deliberate way to empty a table, and upsert of unkeyed rows as a no-op with a warning', async () => {
    const name = uniqueName('emptied');
    await declare(name);
    await write(name, 'replace', { rows: [{ id: 'a' }, { id: 'b' }] });
    const upsert = await write(name, 'upsert', { rows: [{ v: 'no key' }] });
    expect(upsert.status).toBe(200);
    expect(upsert.body).toMatchObject({ written: 0, live_after: 2, warnings: [expect.stringContaining('lack a key property')] });
    const emptied = await write(name, 'replace', { rows: [] });
    expect(emptied.status).toBe(200);
    expect(emptied.body).toMatchObject({ received: 0, tombstoned: 2, live_before: 2, live_after: 0, warnings: [] });
  });

  it('says so in the document', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const replace = doc.paths['/core/custom-data/tables/{name}/replace'].post;
    expect(replace.description).toMatch(/none holds every key property.*422/s);
    expect(replace.description).toMatch(/rows: \[\]/);
    expect(replace.responses['422'].description).toMatch(/none holds every key property/);
  });
});
