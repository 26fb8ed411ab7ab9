import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/core/ids';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
// Tenant A does the work; B is "another organization"; readOnly is an ak_ key of A with api:read only.
let a: Tenant;
let b: Tenant;
let readOnly: string;

beforeAll(async () => {
  ctx = await createTestContext();
  a = await newTenant(ctx, ['api:read', 'api:manage']);
  b = await newTenant(ctx, ['api:read', 'api:manage']);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
});
afterAll(() => ctx?.close());

async function createAccount(t: Tenant, body: Record<string, unknown>) {
  const res = await ctx.request('POST', '/accounts', { token: t.session, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Many accounts at once, straight into the table (one multi-row INSERT). */
async function bulkAccounts(orgId: string, names: string[], extra: (i: number) => Record<string, unknown> = () => ({})) {
  const rows = names.map((name, i) => ({ id: newId(), org_id: orgId, name, ...extra(i) }));
  await ctx.deps.sql`INSERT INTO accounts ${ctx.deps.sql(rows)}`;
  return rows;
}

const FULL_FIELDS = [
  'created_at',
  'description',
  'domain',
  'employee_count',
  'health_score',
  'id',
  'industry',
  'name',
  'owner_id',
  'tags',
  'updated_at',
  'website',
];

describe('POST /accounts', () => {
  it('creates an account and returns the full row with 200', async () => {
    const res = await ctx.request('POST', '/accounts', {
      token: a.session,
      body: {
        name: 'Initech',
        domain: 'Initech.COM',
        industry: 'software',
        website: 'https://initech.com',
        description: 'TPS reports',
        owner_id: 'user_42',
        employee_count: 120,
        tags: ['vip', 'emea', 'vip'],
      },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(FULL_FIELDS);
    expect(res.body).toMatchObject({
      name: 'Initech',
      domain: 'initech.com',
      industry: 'software',
      website: 'https://initech.com',
      description: 'TPS reports',
      owner_id: 'user_42',
      employee_count: 120,
      health_score: null,
      tags: ['vip', 'emea'],
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
  });

  it('needs only a name; the rest defaults to null and no tags', async () => {
    const body = await createAccount(a, { name: 'Bare' });
    expect(body).toMatchObject({
      domain: null,
      industry: null,
      website: null,
      description: null,
      owner_id: null,
      employee_count: null,
      health_score: null,
      tags: [],
    });
  });

  it.each([
    ['an invalid industry', { name: 'x', industry: 'space_piracy' }, 'industry', 'enum'],
    ['a non-http website', { name: 'x', website: 'ftp://files.example.com' }, 'website', 'url_parsing'],
    ['a missing name', {}, 'name', 'missing'],
    ['a blank name', { name: '  ' }, 'name', 'string_too_short'],
    ['a negative employee_count', { name: 'x', employee_count: -1 }, 'employee_count', 'greater_than_equal'],
    ['a health_score (computed, never set)', { name: 'x', health_score: 90 }, 'health_score', 'extra_forbidden'],
    ['a domain with a scheme', { name: 'x', domain: 'https://acme.com' }, 'domain', 'string_pattern_mismatch'],
  ])('refuses %s with 422', async (_name, body, field, type) => {
    const res = await ctx.request('POST', '/accounts', { token: a.session, body });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc: ['body', field] });
  });

  it('refuses a read-only key with 403', async () => {
    const res = await ctx.request('POST', '/accounts', { token: readOnly, body: { name: 'Nope' } });
    expect(res).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
  });
});

describe('GET /accounts/{account_id}', () => {
  it('returns the full row', async () => {
    const created = await createAccount(a, { name: 'Readable', industry: 'retail' });
    const res = await ctx.request('GET', `/accounts/${created.id}`, { token: readOnly });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it("is 404 for another organization's account and for an unknown id", async () => {
    const theirs = await createAccount(b, { name: 'Theirs' });
    expect(await ctx.request('GET', `/accounts/${theirs.id}`, { token: a.session })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
    expect((await ctx.request('GET', `/accounts/${newId()}`, { token: a.session })).status).toBe(404);
  });

  it('is 422 for an id that is not a uuid', async () => {
    const res = await ctx.request('GET', '/accounts/nope', { token: a.session });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'account_id'] });
  });
});

describe('PATCH /accounts/{account_id}', () => {
  it('changes only the fields sent; an explicit null clears', async () => {
    const created = await createAccount(a, { name: 'Patchable', domain: 'patch.io', industry: 'media', owner_id: 'u1', tags: ['a'] });
    const res = await ctx.request('PATCH', `/accounts/${created.id}`, {
      token: a.session,
      body: { industry: 'education', domain: null, tags: ['b', 'c'] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Patchable', domain: null, industry: 'education', owner_id: 'u1', tags: ['b', 'c'] });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect((await ctx.request('GET', `/accounts/${created.id}`, { token: a.session })).body).toEqual(res.body);
  });

  it('refuses an empty body with 400', async () => {
    const created = await createAccount(a, { name: 'Empty patch' });
    expect(await ctx.request('PATCH', `/accounts/${created.id}`, { token: a.session, body: {} })).toMatchObject({
      status: 400,
      body: { detail: 'No fields to update' },
    });
  });

  it('refuses a null name and an invalid industry with 422', async () => {
    const created = await createAccount(a, { name: 'Strict' });
    expect((await ctx.request('PATCH', `/accounts/${created.id}`, { token: a.session, body: { name: null } })).status).toBe(422);
    const bad = await ctx.request('PATCH', `/accounts/${created.id}`, { token: a.session, body: { industry: 'nope' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'industry'] });
  });

  it("is 404 for another organization's account, which stays unchanged", async () => {
    const theirs = await createAccount(b, { name: 'Untouchable' });
    expect((await ctx.request('PATCH', `/accounts/${theirs.id}`, { token: a.session, body: { name: 'Mine now' } })).status).toBe(404);
    expect((await ctx.request('GET', `/accounts/${theirs.id}`, { token: b.session })).body.name).toBe('Untouchable');
  });

  it('refuses a read-only key with 403', async () => {
    const created = await createAccount(a, { name: 'RO patch' });
    expect((await ctx.request('PATCH', `/accounts/${created.id}`, { token: readOnly, body: { name: 'x' } })).status).toBe(403);
  });
});

describe('DELETE /accounts/{account_id}', () => {
  it("answers 204 and sets account_id to null on the account's contacts and deals", async () => {
    const account = await createAccount(a, { name: 'Doomed' });
    const orgId = await orgUuid(ctx, a);
    const contactId = newId();
    await ctx.deps.sql`INSERT INTO contacts (id, org_id, account_id, first_name) VALUES (${contactId}, ${orgId}, ${account.id}, 'Cleo')`;
    const deal = await ctx.request('POST', '/deals', { token: a.session, body: { name: 'Doomed deal', account_id: account.id } });
    expect(deal.status).toBe(200);

    const res = await ctx.request('DELETE', `/accounts/${account.id}`, { token: a.session });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await ctx.request('GET', `/accounts/${account.id}`, { token: a.session })).status).toBe(404);
    const [contact] = await ctx.deps.sql`SELECT account_id FROM contacts WHERE id = ${contactId}`;
    expect(contact).toEqual({ account_id: null });
    const after = await ctx.request('GET', `/deals/${deal.body.id}`, { token: a.session });
    expect(after.status).toBe(200);
    expect(after.body.account_id).toBeNull();
  });

  it("is 404 for another organization's account, which survives", async () => {
    const theirs = await createAccount(b, { name: 'Survivor' });
    expect((await ctx.request('DELETE', `/accounts/${theirs.id}`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', `/accounts/${theirs.id}`, { token: b.session })).status).toBe(200);
  });

  it('refuses a read-only key with 403', async () => {
    const created = await createAccount(a, { name: 'RO delete' });
    expect((await ctx.request('DELETE', `/accounts/${created.id}`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('GET', `/accounts/${created.id}`, { token: a.session })).status).toBe(200);
  });
});

describe('GET /accounts', () => {
  // A tenant of its own, so counts and orderings are exact.
  let t: Tenant;
  let key: string;
  beforeAll(async () => {
    t = await newTenant(ctx, ['api:read', 'api:manage', 'companies:read']);
    key = await createOrgKey(ctx, t.session, { scopes: ['companies:read'] });
    for (const body of [
      { name: 'Globex', domain: 'globex.com', industry: 'energy' },
      { name: 'acme corp', domain: 'acme.io' },
      { name: 'Umbrella', domain: 'umbrella-health.com', industry: 'pharmaceuticals' },
      { name: 'Acme (EMEA)', domain: 'acme.eu' },
      { name: 'Acme  Inc', domain: 'acme-inc.com' },
      { name: 'Hooli', domain: 'hooli.xyz' },
      { name: '100% Pure_Juice', domain: 'juice.com' },
    ]) {
      await createAccount(t, body);
    }
    await createAccount(b, { name: 'Acme of B', domain: 'acme.b' });
  });

  const names = (body: { name: string }[]) => body.map((r) => r.name);

  it('returns a bare array of the five list-item fields, without a total', async () => {
    const res = await ctx.request('GET', '/accounts', { token: key });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(7);
    for (const item of res.body) expect(Object.keys(item).sort()).toEqual(['domain', 'health_score', 'id', 'industry', 'name']);
    expect(res.body.find((r: { name: string }) => r.name === 'Globex')).toMatchObject({
      industry: 'energy',
      health_score: null,
      domain: 'globex.com',
    });
    expect(res.headers.get('x-total-count')).toBeNull();
  });

  it('orders by name ascending, ties broken by id', async () => {
    const orgId = await orgUuid(ctx, t);
    const res = await ctx.request('GET', '/accounts', { token: key });
    const [expected] = [await ctx.deps.sql`SELECT name FROM accounts WHERE org_id = ${orgId} ORDER BY name COLLATE "und-x-icu", id`];
    expect(names(res.body)).toEqual(expected!.map((r) => r.name));
    expect(names(res.body)).not.toContain('Acme of B');

    // As people read names, whatever the database's collation: case does not split the alphabet.
    const mixed = await newTenant(ctx, ['api:read', 'api:manage']);
    await bulkAccounts(await orgUuid(ctx, mixed), ['Zeta', 'beta', 'Alpha', 'acme']);
    expect(names((await ctx.request('GET', '/accounts', { token: mixed.session })).body)).toEqual(['acme', 'Alpha', 'beta', 'Zeta']);

    const tie = await newTenant(ctx, ['api:read', 'api:manage']);
    const rows = await bulkAccounts(await orgUuid(ctx, tie), ['Same', 'Same', 'Same', 'Alpha']);
    const tied = await ctx.request('GET', '/accounts', { token: tie.session });
    const sameIds = rows
      .filter((r) => r.name === 'Same')
      .map((r) => r.id)
      .sort();
    expect(tied.body.map((r: { id: string }) => r.id)).toEqual([rows[3]!.id, ...sameIds]);
  });

  describe('search', () => {
    it('matches a case-insensitive substring of the name', async () => {
      const res = await ctx.request('GET', '/accounts?search=ACME', { token: key });
      expect(names(res.body).sort()).toEqual(['Acme  Inc', 'Acme (EMEA)', 'acme corp'].sort());
    });

    it('matches a substring of the domain', async () => {
      const res = await ctx.request('GET', '/accounts?search=HEALTH.c', { token: key });
      expect(names(res.body)).toEqual(['Umbrella']);
    });

    it('removes parentheses from the term', async () => {
      const res = await ctx.request('GET', `/accounts?search=${encodeURIComponent('(emea)')}`, { token: key });
      expect(names(res.body)).toEqual(['Acme (EMEA)']);
      const inner = await ctx.request('GET', `/accounts?search=${encodeURIComponent('acme (emea')}`, { token: key });
      expect(names(inner.body)).toEqual([]);
    });

    it('replaces each comma by a space, so a comma term normally matches nothing', async () => {
      const comma = await ctx.request('GET', `/accounts?search=${encodeURIComponent('Acme, Inc')}`, { token: key });
      expect(comma.status).toBe(200);
      // "acme, inc" becomes "acme  inc" (two spaces): only the name that really has two spaces matches.
      expect(names(comma.body)).toEqual(['Acme  Inc']);
      const noComma = await ctx.request('GET', `/accounts?search=${encodeURIComponent('Globex, Corp')}`, { token: key });
      expect(noComma.body).toEqual([]);
      const single = await ctx.request('GET', `/accounts?search=${encodeURIComponent('acme,corp')}`, { token: key });
      expect(names(single.body)).toEqual(['acme corp']);
    });

    it('treats % and _ literally', async () => {
      expect(names((await ctx.request('GET', `/accounts?search=${encodeURIComponent('%')}`, { token: key })).body)).toEqual([
        '100% Pure_Juice',
      ]);
      expect(names((await ctx.request('GET', `/accounts?search=${encodeURIComponent('e_j')}`, { token: key })).body)).toEqual([
        '100% Pure_Juice',
      ]);
      // Unescaped, "_" would match the space of "acme corp" and "acme  inc".
      expect((await ctx.request('GET', `/accounts?search=${encodeURIComponent('acme_')}`, { token: key })).body).toEqual([]);
      expect((await ctx.request('GET', `/accounts?search=${encodeURIComponent('\\')}`, { token: key })).body).toEqual([]);
    });

    it('matches every account when nothing is left of the term', async () => {
      const res = await ctx.request('GET', `/accounts?search=${encodeURIComponent('()')}`, { token: key });
      expect(res.body).toHaveLength(7);
    });

    it("never returns another organization's accounts", async () => {
      const res = await ctx.request('GET', '/accounts?search=acme.b', { token: key });
      expect(res.body).toEqual([]);
    });
  });

  describe('limit and offset', () => {
    let big: Tenant;
    beforeAll(async () => {
      big = await newTenant(ctx, ['api:read', 'api:manage']);
      const orgId = await orgUuid(ctx, big);
      await bulkAccounts(
        orgId,
        Array.from({ length: 510 }, (_, i) => `Bulk ${String(i).padStart(4, '0')}`),
      );
    });

    it('defaults to 200', async () => {
      const res = await ctx.request('GET', '/accounts', { token: big.session });
      expect(res.body).toHaveLength(200);
      expect(res.body[0].name).toBe('Bulk 0000');
    });

    it('caps at 500 whatever is sent (clamped, not refused)', async () => {
      const res = await ctx.request('GET', '/accounts?limit=100000', { token: big.session });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(500);
      expect((await ctx.request('GET', '/accounts?limit=500', { token: big.session })).body).toHaveLength(500);
    });

    it('pages with offset until a page is shorter than limit', async () => {
      const seen: string[] = [];
      for (let offset = 0; ; offset += 200) {
        const page = await ctx.request('GET', `/accounts?limit=200&offset=${offset}`, { token: big.session });
        seen.push(...names(page.body));
        if (page.body.length < 200) break;
      }
      expect(seen).toHaveLength(510);
      expect(new Set(seen).size).toBe(510);
      expect(seen[509]).toBe('Bulk 0509');
    });

    it('refuses a limit below 1 and a negative offset with 422', async () => {
      expect((await ctx.request('GET', '/accounts?limit=0', { token: big.session })).status).toBe(422);
      const neg = await ctx.request('GET', '/accounts?offset=-1', { token: big.session });
      expect(neg.status).toBe(422);
      expect(neg.body.detail[0]).toMatchObject({ loc: ['query', 'offset'] });
    });
  });

  it('needs a CRM read scope', async () => {
    const none = await newTenant(ctx, ['agents:read']);
    expect(await ctx.request('GET', '/accounts', { token: none.session })).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
  });
});
