import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

const MAX_ROWS = 20_000;
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let aOrg: string;
let bOrg: string;

beforeAll(async () => {
  // A small global body limit: snapshot writes must still take their own, larger one. The row bound is
  // configured below its default (100,000) so the bulk tests stay seconds long beside parallel test files
  // (a 100,000-row merge has outlasted two minutes there); the bound works the same at any value.
  // A large merge on a busy machine can outlast the default 10 s statement bound; deployments that
  // replace tables this large raise it the same way.
  ctx = await createTestContext({
    env: {
      BODY_LIMIT_BYTES: String(1024 * 1024),
      CUSTOM_DATA_REPLACE_MAX_ROWS: String(MAX_ROWS),
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
      DATABASE_RESPONSE_TIMEOUT_MS: '65000',
      REQUEST_TIMEOUT_MS: '120000',
    },
  });
  [a, b] = await Promise.all([newTenant(ctx), newTenant(ctx)]);
  [aOrg, bOrg] = await Promise.all([orgUuid(ctx, a), orgUuid(ctx, b)]);
});
afterAll(() => ctx?.close());

const ORDERS = {
  key: ['id'],
  description: 'Orders from the shop',
  properties: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'string' },
    { name: 'amount', type: 'number' },
    { name: 'paid', type: 'boolean' },
    { name: 'at', type: 'timestamp' },
    { name: 'meta', type: 'json' },
  ],
};

const declare = (t: Tenant, name: string, body: unknown = ORDERS) =>
  ctx.request('PUT', `/core/custom-data/tables/${name}`, { token: t.session, body });
const replace = (t: Tenant, name: string, rows: unknown[]) =>
  ctx.request('POST', `/core/custom-data/tables/${name}/replace`, { token: t.session, body: { rows } });
const upsert = (t: Tenant, name: string, rows: unknown[]) =>
  ctx.request('POST', `/core/custom-data/tables/${name}/upsert`, { token: t.session, body: { rows } });
const rows = async (t: Tenant, name: string, query = '') =>
  (await ctx.request('GET', `/core/custom-data/tables/${name}/rows${query}`, { token: t.session })).body;
const order = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  name: `order ${id}`,
  amount: id * 10.5,
  paid: id % 2 === 0,
  at: '2025-03-01T10:00:00Z',
  meta: { n: id },
  ...extra,
});
const uniqueName = (prefix: string) => `${prefix}_${crypto.randomBytes(3).toString('hex')}`;

describe('table declarations', () => {
  it('declares, reads, lists and deletes a table; the view is named in the answer', async () => {
    const name = uniqueName('orders');
    const res = await declare(a, name);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name,
      description: 'Orders from the shop',
      key: ['id'],
      properties: ORDERS.properties.map((p) => ({ ...p, description: '' })),
      view: `custom_data_${aOrg.replace(/-/g, '')}.${name}`,
      live_rows: 0,
      tombstoned_rows: 0,
      created_by: `user:${a.user}`,
    });
    expect((await ctx.request('GET', `/core/custom-data/tables/${name}`, { token: a.session })).body).toEqual(res.body);
    const list = await ctx.request('GET', '/core/custom-data/tables', { token: a.session });
    expect(list.body.data.map((t: { name: string }) => t.name)).toContain(name);
    expect(list.body.pagination).toMatchObject({ offset: 0, limit: 50 });
    expect((await ctx.request('DELETE', `/core/custom-data/tables/${name}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('GET', `/core/custom-data/tables/${name}`, { token: a.session })).status).toBe(404);
    const [view] = await ctx.deps.sql`SELECT to_regclass(${res.body.view}) AS oid`;
    expect(view!.oid).toBeNull();
  });

  it('validates names (422 with the rule) and the key (400)', async () => {
    const bad = await declare(a, 'Orders');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({
      type: 'string_pattern_mismatch',
      loc: ['path', 'name'],
      msg: expect.stringContaining('lower-case letter'),
    });
    expect((await declare(a, 'x'.repeat(64))).status).toBe(422);
    const badProperty = await declare(a, 'ok_name', { ...ORDERS, properties: [...ORDERS.properties, { name: '_hidden', type: 'string' }] });
    expect(badProperty.status).toBe(422);
    expect(badProperty.body.detail[0].loc).toEqual(['body', 'properties', 6, 'name']);
    expect((await declare(a, 'ok_name', { ...ORDERS, properties: [...ORDERS.properties, { name: 'x', type: 'decimal' }] })).status).toBe(
      422,
    );
    expect((await declare(a, 'ok_name', { ...ORDERS, key: ['missing'] })).status).toBe(400);
    expect((await declare(a, 'ok_name', { ...ORDERS, key: ['meta'] })).status).toBe(400);
    expect((await declare(a, 'ok_name', { ...ORDERS, properties: [...ORDERS.properties, { name: 'id', type: 'string' }] })).status).toBe(
      400,
    );
  });

  it('refuses a key change on a table with rows (409), and takes property changes', async () => {
    const name = uniqueName('keyed');
    await declare(a, name);
    expect((await replace(a, name, [order(1)])).status).toBe(200);
    expect((await declare(a, name, { ...ORDERS, key: ['id', 'name'] })).status).toBe(409);
    const more = await declare(a, name, { ...ORDERS, properties: [...ORDERS.properties, { name: 'region', type: 'string' }] });
    expect(more.status).toBe(200);
    expect(more.body.live_rows).toBe(1);
    const [table] = await ctx.deps.sql`SELECT id FROM custom_data_tables WHERE org_id = ${aOrg} AND name = ${name}`;
    expect((await ctx.request('DELETE', `/core/custom-data/tables/${name}`, { token: a.session })).status).toBe(204);
    const [left] = await ctx.deps.sql`SELECT count(*)::int AS n FROM custom_data_rows WHERE table_id = ${table!.id}`;
    expect(left!.n).toBe(0);
  });
});

describe('POST /core/custom-data/tables/{name}/replace', () => {
  it('reports every field on crafted snapshots: changed, unchanged, gone, revived, duplicated, mistyped, undeclared', async () => {
    const name = uniqueName('report');
    await declare(a, name);
    const first = await replace(
      a,
      name,
      [1, 2, 3, 4, 5].map((id) => order(id)),
    );
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      table: name,
      received: 5,
      written: 5,
      unchanged: 0,
      tombstoned: 0,
      live_before: 0,
      live_after: 5,
      warnings: [],
      type_mismatches: {},
      undeclared_properties: [],
      view: `custom_data_${aOrg.replace(/-/g, '')}.${name}`,
    });

    // 1 and 3 unchanged; 2 changed; 4 and 5 gone; 6 new but sent twice (last wins); one row without a key;
    // 7 new with a mistyped amount and paid, and an undeclared property.
    const second = await replace(a, name, [
      order(1),
      order(2, { name: 'renamed' }),
      order(3),
      order(6, { name: 'first copy' }),
      order(6, { name: 'second copy' }),
      { name: 'no key' },
      order(7, { amount: '12.50', paid: 'yes', coupon: 'SPRING' }),
    ]);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      received: 7,
      written: 3,
      unchanged: 2,
      tombstoned: 2,
      live_before: 5,
      live_after: 5,
      type_mismatches: { amount: 1, paid: 1 },
      undeclared_properties: ['coupon'],
    });
    expect(second.body.warnings).toEqual([
      expect.stringMatching(/^1 row\(s\) repeat a key .*\[6\]/),
      expect.stringMatching(/^1 row\(s\) lack a key property \(id\)/),
      expect.stringContaining('amount, paid'),
      expect.stringContaining('coupon'),
    ]);
    const live = await rows(a, name);
    expect(live.data.map((r: { key: { id: number } }) => r.key.id)).toEqual([1, 2, 3, 6, 7]);
    expect(live.data.find((r: { key: { id: number } }) => r.key.id === 6).data.name).toBe('second copy');
    const gone = await rows(a, name, '?state=tombstoned');
    expect(gone.data.map((r: { key: { id: number }; tombstoned_at: string }) => [r.key.id, typeof r.tombstoned_at])).toEqual([
      [4, 'string'],
      [5, 'string'],
    ]);
    expect((await rows(a, name, '?state=all')).pagination.total).toBe(7);

    // 4 comes back through a later replace (revived counts as written); 5 through a partial upsert.
    const third = await replace(a, name, [
      order(1),
      order(2, { name: 'renamed' }),
      order(3),
      order(4),
      order(6, { name: 'second copy' }),
      order(7, { amount: '12.50', paid: 'yes', coupon: 'SPRING' }),
    ]);
    expect(third.body).toMatchObject({
      received: 6,
      written: 1,
      unchanged: 5,
      tombstoned: 0,
      live_before: 5,
      live_after: 6,
      warnings: expect.any(Array),
    });
    const partial = await upsert(a, name, [order(5)]);
    expect(partial.body).toMatchObject({ received: 1, written: 1, unchanged: 0, tombstoned: 0, live_before: 6, live_after: 7 });
    expect((await rows(a, name, '?state=tombstoned')).data).toEqual([]);
    const table = (await ctx.request('GET', `/core/custom-data/tables/${name}`, { token: a.session })).body;
    expect(table).toMatchObject({ live_rows: 7, tombstoned_rows: 0 });
  });

  it('pages rows by key with an opaque cursor', async () => {
    const name = uniqueName('paged');
    await declare(a, name, { key: ['sku'], properties: [{ name: 'sku', type: 'string' }] });
    await replace(
      a,
      name,
      ['c', 'a', 'e', 'b', 'd'].map((sku) => ({ sku })),
    );
    const first = await rows(a, name, '?limit=2');
    expect(first.data.map((r: { key: { sku: string } }) => r.key.sku)).toEqual(['a', 'b']);
    expect(first.pagination.total).toBe(5);
    const second = await rows(a, name, `?limit=2&cursor=${first.pagination.next_cursor}`);
    expect(second.data.map((r: { key: { sku: string } }) => r.key.sku)).toEqual(['c', 'd']);
    expect((await ctx.request('GET', `/core/custom-data/tables/${name}/rows?state=dead`, { token: a.session })).status).toBe(400);
  });

  it('exposes live rows through a typed view that obeys row-level security', async () => {
    const name = uniqueName('viewed');
    const declared = await declare(a, name);
    await replace(a, name, [order(1), order(2, { amount: 'lots', at: 'yesterday', meta: [1, 2] }), order(3)]);
    await replace(a, name, [order(1), order(2, { amount: 'lots', at: 'yesterday', meta: [1, 2] })]); // 3 is tombstoned
    const [schema, view] = declared.body.view.split('.');
    const columns = await ctx.deps.sql<{ column_name: string; data_type: string }[]>`
      SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = ${view} ORDER BY ordinal_position`;
    expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([
      ['id', 'bigint'],
      ['name', 'text'],
      ['amount', 'numeric'],
      ['paid', 'boolean'],
      ['at', 'timestamp with time zone'],
      ['meta', 'jsonb'],
      ['_created_at', 'timestamp with time zone'],
      ['_updated_at', 'timestamp with time zone'],
    ]);
    const typed = await ctx.deps.sql.unsafe(
      `SELECT id::int AS id, amount::float8 AS amount, paid, at, meta FROM ${declared.body.view} ORDER BY id`,
    );
    expect(typed.map((r) => ({ ...r }))).toEqual([
      { id: 1, amount: 10.5, paid: false, at: new Date('2025-03-01T10:00:00Z'), meta: { n: 1 } },
      { id: 2, amount: null, paid: true, at: null, meta: [1, 2] },
    ]);

    // A least-privilege reader sees only the organization it names in app.org_id.
    const role = `cd_reader_${crypto.randomBytes(4).toString('hex')}`;
    await ctx.deps.sql.unsafe(`CREATE ROLE ${role} NOLOGIN`);
    await ctx.deps.sql.unsafe(
      `GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ${declared.body.view} TO ${role}; GRANT SELECT ON custom_data_rows TO ${role}`,
    );
    const countAs = async (org: string | null) =>
      ctx.deps.sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL ROLE ${role}`);
        if (org) await tx`SELECT set_config('app.org_id', ${org}, true)`;
        const [row] = await tx.unsafe(`SELECT count(*)::int AS n FROM ${declared.body.view}`);
        const [all] = await tx.unsafe(`SELECT count(*)::int AS n FROM custom_data_rows`);
        return [row!.n, all!.n];
      });
    try {
      expect(await countAs(aOrg)).toEqual([2, expect.any(Number)]);
      expect(await countAs(bOrg)).toEqual([0, 0]);
      expect(await countAs(null)).toEqual([0, 0]);
    } finally {
      await ctx.deps.sql.unsafe(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    }
  });

  it('serializes two replaces of one table, so both reports are exact', async () => {
    const name = uniqueName('racing');
    await declare(a, name);
    await replace(
      a,
      name,
      Array.from({ length: 100 }, (_, i) => order(i + 1)),
    );
    const x = Array.from({ length: 3000 }, (_, i) => order(i + 1, { name: 'x' })); // 1..3000
    const y = Array.from({ length: 50 }, (_, i) => order(i + 5000)); // 5000..5049
    const [rx, ry] = await Promise.all([replace(a, name, x), replace(a, name, y)]);
    expect([rx.status, ry.status]).toEqual([200, 200]);
    const [firstRun, secondRun] = rx.body.live_before === 100 ? [rx.body, ry.body] : [ry.body, rx.body];
    expect(firstRun.live_before).toBe(100);
    expect(secondRun.live_before).toBe(firstRun.live_after);
    expect(secondRun.tombstoned).toBe(firstRun.live_after);
    const last = secondRun === ry.body ? 50 : 3000;
    expect(secondRun.live_after).toBe(last);
    expect((await rows(a, name, '?limit=1')).pagination.total).toBe(last);
  });

  it('changes nothing when the write fails midway', async () => {
    const name = uniqueName('atomic');
    await declare(a, name);
    await replace(a, name, [order(1), order(2)]);
    const before = await rows(a, name, '?state=all');
    // The database refuses one row deep inside the merge, after 2,000 others were staged and merged.
    await ctx.deps.sql.unsafe(`
      CREATE FUNCTION refuse_explosive() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.data->>'name' = 'explode' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_explosive BEFORE INSERT OR UPDATE ON custom_data_rows FOR EACH ROW EXECUTE FUNCTION refuse_explosive();`);
    try {
      const res = await replace(a, name, [
        order(3),
        ...Array.from({ length: 2000 }, (_, i) => order(i + 10)),
        order(9999, { name: 'explode' }),
      ]);
      expect(res.status).toBe(500);
    } finally {
      await ctx.deps.sql.unsafe('DROP TRIGGER refuse_explosive ON custom_data_rows; DROP FUNCTION refuse_explosive()');
    }
    expect(await rows(a, name, '?state=all')).toEqual(before);
    // A value Postgres cannot store (U+0000) is refused, naming its field, before anything is written.
    const nul = await replace(a, name, [order(3), order(4, { name: 'bad \u0000 byte' })]);
    expect(nul.status).toBe(422);
    expect(nul.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['body', 'rows', 1, 'name'], msg: expect.stringContaining('U+0000') }),
    ]);
    expect(await rows(a, name, '?state=all')).toEqual(before);
    // The table takes the next write as usual.
    expect((await replace(a, name, [order(1)])).body).toMatchObject({ written: 0, unchanged: 1, tombstoned: 1 });
  });

  // One table and its MAX_ROWS rows (1.6 MB, above the 1 MiB global body limit) serve both bulk tests; each
  // request is bounded by the server's own deadline (REQUEST_TIMEOUT_MS).
  const bulkName = uniqueName('bulk');
  const bulkRows = Array.from({ length: MAX_ROWS }, (_, i) => ({ id: i, v: `value ${i}`.padEnd(64, '.') }));

  it('accepts the configured most rows in one call, above the global body limit', async () => {
    await declare(a, bulkName, {
      key: ['id'],
      properties: [
        { name: 'id', type: 'integer' },
        { name: 'v', type: 'string' },
      ],
    });
    const res = await replace(a, bulkName, bulkRows);
    expect(res.status, res.text.slice(0, 200)).toBe(200);
    expect(res.body).toMatchObject({ received: MAX_ROWS, written: MAX_ROWS, live_after: MAX_ROWS });
  }, 120_000);

  it('refuses one row more with 422 (the maxItems the document states), and the global body limit still holds everywhere else', async () => {
    const tooMany = await replace(a, bulkName, [...bulkRows, { id: -1, v: 'one more' }]);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'rows'], ctx: { max_length: MAX_ROWS } });
    const declareBig = await declare(a, uniqueName('huge'), { ...ORDERS, description: 'x'.repeat(1_100_000) });
    expect(declareBig.status).toBe(413);
  }, 120_000);
});

describe('tenancy and scopes', () => {
  it('hides another organization’s tables (404) and lets it use the same name', async () => {
    const name = uniqueName('shared');
    await declare(a, name);
    await replace(a, name, [order(1)]);
    expect((await ctx.request('GET', `/core/custom-data/tables/${name}`, { token: b.session })).status).toBe(404);
    expect((await replace(b, name, [order(1)])).status).toBe(404);
    expect((await ctx.request('GET', `/core/custom-data/tables/${name}/rows`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/core/custom-data/tables/${name}`, { token: b.session })).status).toBe(404);
    const own = await declare(b, name);
    expect(own.status).toBe(200);
    expect(own.body.live_rows).toBe(0);
    expect(own.body.view).not.toBe((await ctx.request('GET', `/core/custom-data/tables/${name}`, { token: a.session })).body.view);
  });

  it('refuses writes to a read-only key (403)', async () => {
    const t = await newTenant(ctx, ['api:read', 'organizations:manage']);
    const key = await createOrgKey(ctx, t.session, { scopes: ['api:read'] });
    expect((await ctx.request('PUT', '/core/custom-data/tables/ro', { token: key, body: ORDERS })).status).toBe(403);
    expect((await ctx.request('POST', '/core/custom-data/tables/ro/replace', { token: key, body: { rows: [] } })).status).toBe(403);
    expect((await ctx.request('GET', '/core/custom-data/tables', { token: key })).status).toBe(200);
  });
});
