import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReaderPools, orgToken, readerPool } from '../../db/analytics-assistant';
import { runStatement } from '../../services/assistants/query-runner';
import { ATTACKS, HARMLESS, withOther } from '../support/analytics-attacks';
import { type AnalyticsTenant, analyticsTenant, fingerprint, seedCrm, seedOrders } from '../support/analytics';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey } from '../support/identity';

let ctx: TestContext;
let a: AnalyticsTenant;
let b: AnalyticsTenant;
let aOrders: string;
let bOrders: string;
beforeAll(async () => {
  ctx = await createTestContext({
    env: { ANALYTICS_MAX_ROWS: '50', ANALYTICS_MAX_RESULT_BYTES: '4096', ANALYTICS_STATEMENT_TIMEOUT_MS: '1000' },
  });
  [a, b] = await Promise.all([analyticsTenant(ctx), analyticsTenant(ctx)]);
  await Promise.all([seedCrm(ctx.deps.sql, a.orgId, 'A'), seedCrm(ctx.deps.sql, b.orgId, 'B')]);
  [aOrders, bOrders] = await Promise.all([seedOrders(ctx, a), seedOrders(ctx, b)]);
}, 60_000);
afterAll(async () => {
  await closeReaderPools();
  await ctx?.close();
});

const query = (t: AnalyticsTenant, sql: string, token = t.session) =>
  ctx.request('POST', '/analytics-assistant/query', { token, body: { sql } });

describe('GET /assistants/schema', () => {
  it('lists the CRM views and the organization’s own custom-data views, with column types and descriptions', async () => {
    const res = await ctx.request('GET', '/assistants/schema', { token: a.session });
    expect(res.status).toBe(200);
    const names = res.body.relations.map((r: { name: string }) => r.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'analytics.accounts',
        'analytics.contacts',
        'analytics.deals',
        'analytics.activities',
        'analytics.tags',
        'analytics.campaigns',
        aOrders,
      ]),
    );
    expect(names).not.toContain(bOrders);
    const deals = res.body.relations.find((r: { name: string }) => r.name === 'analytics.deals');
    expect(deals.kind).toBe('crm');
    expect(deals.columns).toContainEqual({ name: 'stage', type: 'text', description: expect.stringContaining('closed_won') });
    expect(deals.columns.map((c: { name: string }) => c.name)).not.toContain('org_id');
    const orders = res.body.relations.find((r: { name: string }) => r.name === aOrders);
    expect(orders).toMatchObject({ kind: 'custom_data', description: 'Shop orders' });
    expect(orders.columns).toContainEqual({ name: 'amount', type: 'numeric', description: 'Order total' });
  });

  it('needs data:access (403 without it, 401 without a token)', async () => {
    const key = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
    expect((await ctx.request('GET', '/assistants/schema', { token: key })).status).toBe(403);
    expect((await query(a, 'SELECT 1', key)).status).toBe(403);
    expect((await ctx.request('GET', '/assistants/schema')).status).toBe(401);
    const dataKey = await createOrgKey(ctx, a.session, { scopes: ['data:access'] });
    expect((await query(a, 'SELECT count(*) FROM accounts', dataKey)).body.rows).toEqual([['3']]);
  });
});

describe('POST /analytics-assistant/query', () => {
  it('answers columns with types, rows as arrays, row_count and truncated, from the caller’s rows only', async () => {
    const res = await query(a, 'SELECT stage, count(*) AS n, sum(value) AS total FROM deals GROUP BY stage ORDER BY stage');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      columns: [
        { name: 'stage', type: 'text' },
        { name: 'n', type: 'bigint' },
        { name: 'total', type: 'numeric' },
      ],
      rows: [
        ['closed_lost', '1', '5000.00'],
        ['closed_won', '1', '50000.00'],
        ['negotiation', '1', '75000.00'],
        ['proposal', '1', '20000.00'],
      ],
      row_count: 4,
      truncated: false,
    });
    const names = await query(a, 'SELECT name FROM accounts ORDER BY name');
    expect(names.body.rows).toEqual([['A Alpha'], ['A Beta'], ['A Gamma']]);
    const dated = await query(a, "SELECT closed_at, close_date FROM deals WHERE stage = 'closed_won'");
    expect(dated.body.rows).toEqual([['2025-01-15T12:00:00.000Z', '2025-01-15T00:00:00.000Z']]);
  });

  it('reads the organization’s own custom-data view', async () => {
    const res = await query(a, `SELECT customer, sum(amount) AS total FROM ${aOrders} GROUP BY customer ORDER BY customer`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows).toEqual([
      ['Alpha', '400.5'],
      ['Beta', '20'],
    ]);
  });

  it('cuts the result at ANALYTICS_MAX_ROWS and at ANALYTICS_MAX_RESULT_BYTES, saying so', async () => {
    const many = await query(a, 'SELECT g FROM generate_series(1, 500) g');
    expect(many.body).toMatchObject({ row_count: 50, truncated: true });
    const wide = await query(a, 'SELECT md5(g::text) || md5(g::text) || md5(g::text) AS x FROM generate_series(1, 50) g');
    expect(wide.body.truncated).toBe(true);
    expect(wide.body.row_count).toBeLessThan(50);
    expect(Buffer.byteLength(JSON.stringify(wide.body.rows))).toBeLessThanOrEqual(4096);
    const exact = await query(a, 'SELECT g FROM generate_series(1, 50) g');
    expect(exact.body).toMatchObject({ row_count: 50, truncated: false });
  });

  it('answers a statement past ANALYTICS_STATEMENT_TIMEOUT_MS with a 400 within the bound, and serves the next one', async () => {
    const started = Date.now();
    const res = await query(a, 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/ran past its 1000 ms limit/);
    expect(Date.now() - started).toBeLessThan(20_000); // a statement left running would hold the request to its deadline
    expect((await query(a, 'SELECT count(*) FROM contacts')).body.rows).toEqual([['4']]);
  });

  it('answers a database error the statement caused with a 400 naming it', async () => {
    const res = await query(a, 'SELECT org_id FROM accounts');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/column "org_id" does not exist.*42703/);
    const div = await query(a, 'SELECT 1 / 0');
    expect(div.status).toBe(400);
    expect(div.body.detail).toMatch(/division by zero/);
  });

  it('validates the body (422): missing, empty, too long, unknown fields', async () => {
    for (const body of [{}, { sql: '' }, { sql: 'x'.repeat(20_001) }, { sql: 'SELECT 1', extra: true }, { sql: 5 }]) {
      const res = await ctx.request('POST', '/analytics-assistant/query', { token: a.session, body });
      expect(res.status, JSON.stringify(body).slice(0, 50)).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });
});

describe('hostile statements through POST /analytics-assistant/query', () => {
  it(`refuses each of ${ATTACKS.length} attacks with a 400 naming its rule, and changes nothing`, async () => {
    const before = await fingerprint(ctx.deps.sql);
    for (const attack of ATTACKS) {
      const res = await query(a, withOther(attack.sql, b.orgId, bOrders));
      expect(res.status, `${attack.name}: ${res.text}`).toBe(400);
      expect(res.body.detail, attack.name).toMatch(new RegExp(`^Refused by rule ${attack.rule}: `));
      expect(Object.keys(res.body)).toEqual(['detail']);
    }
    expect(ATTACKS.length).toBeGreaterThanOrEqual(40);
    expect(await fingerprint(ctx.deps.sql)).toBe(before);
    expect(fs.existsSync('/tmp/analytics-pwned')).toBe(false);
    const [stolen] = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'stolen'`;
    expect(stolen!.n).toBe(0);
  });

  it('runs what the guard lets through over the caller’s rows only', async () => {
    for (const sql of HARMLESS) {
      const res = await query(a, sql);
      expect(res.status, `${sql}: ${res.text}`).toBe(200);
      expect(res.body.rows.length, sql).toBeGreaterThan(0);
      for (const [name] of res.body.rows) expect(String(name), sql).toMatch(/^A /);
    }
  });
});

describe('the role alone, with the guard switched off', () => {
  // A transaction as analytics_reader for organization A, not read only: only the role's grants and row-level security stand.
  const asReader = async <T>(run: (tx: any) => Promise<T>): Promise<T> => {
    const token = await orgToken(ctx.deps.sql, a.orgId);
    return readerPool(ctx.config).begin(async (tx) => {
      await tx`SELECT set_config('app.org_id', ${a.orgId}, true), set_config('analytics.org_token', ${token}, true), set_config('statement_timeout', '500', true), set_config('search_path', 'analytics, pg_catalog', true)`;
      return run(tx);
    }) as Promise<T>;
  };
  const refusedCode = async (sql: string) => {
    try {
      await asReader((tx) => tx.unsafe(sql));
      return 'ran';
    } catch (error) {
      return (error as { code?: string }).code;
    }
  };

  it('is a login role that is neither the owner nor BYPASSRLS, reading views owned by a role without BYPASSRLS', async () => {
    const roles = await ctx.deps.sql<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }[]>`
      SELECT rolname, rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname IN ('analytics_reader', 'analytics_definer') ORDER BY rolname`;
    expect(roles).toEqual([
      { rolname: 'analytics_definer', rolsuper: false, rolbypassrls: false, rolcanlogin: false },
      { rolname: 'analytics_reader', rolsuper: false, rolbypassrls: false, rolcanlogin: true },
    ]);
    const owners = await ctx.deps.sql`SELECT DISTINCT viewowner FROM pg_views WHERE schemaname = 'analytics'`;
    expect(owners.map((r) => r.viewowner)).toEqual(['analytics_definer']);
    const [who] = await asReader(async (tx): Promise<unknown[]> => tx`SELECT current_user AS u, session_user AS s`);
    expect(who).toEqual({ u: 'analytics_reader', s: 'analytics_reader' });
  });

  it('refuses every write and every relation outside its views (permission denied)', async () => {
    const before = await fingerprint(ctx.deps.sql);
    const writes = [
      "INSERT INTO analytics.accounts (id, name) VALUES (gen_random_uuid(), 'x')",
      'UPDATE analytics.deals SET value = 0',
      'DELETE FROM analytics.contacts',
      'TRUNCATE public.tags',
      'SELECT * FROM public.accounts',
      'DELETE FROM public.accounts',
      'SELECT * FROM analytics_private.signing_key',
      `SELECT analytics_private.org_token('${b.orgId}')`,
      "SELECT pg_read_file('/etc/passwd')",
      "COPY (SELECT 1) TO PROGRAM 'touch /tmp/analytics-pwned'",
      'CREATE TABLE public.stolen (x int)',
      'CREATE SCHEMA stolen',
      'SET ROLE postgres',
      `SELECT * FROM ${bOrders}`,
    ];
    for (const sql of writes) expect(await refusedCode(sql), sql).toBe('42501');
    expect(await fingerprint(ctx.deps.sql)).toBe(before);
    expect(fs.existsSync('/tmp/analytics-pwned')).toBe(false);
  });

  it('shows no other organization’s rows, whatever the session sets', async () => {
    const count = (sql: string) => asReader(async (tx) => (await tx.unsafe(sql))[0].n as string);
    expect(await count("SELECT count(*) AS n FROM accounts WHERE name LIKE 'A %'")).toBe('3');
    expect(await count("SELECT count(*) AS n FROM accounts WHERE name LIKE 'B %'")).toBe('0');
    // app.org_id spoofed: the signed token still names A, and the restrictive policy wants both.
    expect(
      await count(`SELECT count(*) AS n FROM accounts, (SELECT set_config('app.org_id', '${b.orgId}', true)) s WHERE name LIKE 'B %'`),
    ).toBe('0');
    const spoofed = await asReader(async (tx) => {
      await tx`SELECT set_config('app.org_id', ${b.orgId}, true)`;
      return (await tx.unsafe("SELECT count(*) AS n FROM accounts WHERE name LIKE 'B %'"))[0].n;
    });
    expect(spoofed).toBe('0');
    // A forged token for B, with app.org_id of B: nothing.
    const forged = await asReader(async (tx) => {
      await tx`SELECT set_config('app.org_id', ${b.orgId}, true), set_config('analytics.org_token', ${`${b.orgId}.${'0'.repeat(64)}`}, true)`;
      return (await tx.unsafe('SELECT count(*) AS n FROM accounts'))[0].n;
    });
    expect(forged).toBe('0');
    // The custom-data row store, readable because its views are security_invoker: A's rows only.
    const rows = await count('SELECT count(*) AS n FROM public.custom_data_rows');
    expect(rows).toBe('3');
  });

  it('is still bounded by the statement limit (pg_sleep reaches the role: canceled)', async () => {
    expect(await refusedCode('SELECT pg_sleep(5)')).toBe('57014');
  });

  it('runs a spoofing SELECT the guard would refuse, through the same runner, over A’s rows only', async () => {
    const res = await runStatement(
      { sql: ctx.deps.sql, config: ctx.config },
      a.orgId,
      `SELECT name FROM accounts WHERE set_config('app.org_id', '${b.orgId}', true) IS NOT NULL`,
    );
    for (const [name] of res.rows) expect(String(name)).toMatch(/^A /);
  });
});
