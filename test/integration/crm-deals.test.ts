import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/core/ids';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let readOnly: string;
let account: { id: string };
let theirAccount: { id: string };

beforeAll(async () => {
  ctx = await createTestContext();
  a = await newTenant(ctx, ['api:read', 'api:manage']);
  b = await newTenant(ctx, ['api:read', 'api:manage']);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
  account = (await ctx.request('POST', '/accounts', { token: a.session, body: { name: 'Deal account' } })).body;
  theirAccount = (await ctx.request('POST', '/accounts', { token: b.session, body: { name: 'Their account' } })).body;
});
afterAll(() => ctx?.close());

async function createDeal(t: Tenant, body: Record<string, unknown>) {
  const res = await ctx.request('POST', '/deals', { token: t.session, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function insertContact(t: Tenant): Promise<string> {
  const id = newId();
  await ctx.deps.sql`INSERT INTO contacts (id, org_id, first_name) VALUES (${id}, ${await orgUuid(ctx, t)}, 'Dana')`;
  return id;
}

const DEAL_FIELDS = [
  'account_id',
  'close_date',
  'closed_at',
  'contact_id',
  'created_at',
  'currency',
  'id',
  'name',
  'owner_id',
  'stage',
  'tags',
  'updated_at',
  'value',
];

describe('POST /deals', () => {
  it('creates a deal and returns the full row with 200; value is a number', async () => {
    const contactId = await insertContact(a);
    const res = await ctx.request('POST', '/deals', {
      token: a.session,
      body: {
        name: 'Big one',
        stage: 'proposal',
        value: 12500.5,
        currency: 'EUR',
        owner_id: 'user_7',
        account_id: account.id,
        contact_id: contactId,
        close_date: '2030-06-30',
        tags: ['q3', 'q3', 'upsell'],
      },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(DEAL_FIELDS);
    expect(res.body).toMatchObject({
      name: 'Big one',
      stage: 'proposal',
      value: 12500.5,
      currency: 'EUR',
      owner_id: 'user_7',
      account_id: account.id,
      contact_id: contactId,
      close_date: '2030-06-30',
      tags: ['q3', 'upsell'],
      closed_at: null,
    });
    expect(typeof res.body.value).toBe('number');
  });

  it('defaults to stage prospecting and currency USD; value stays null', async () => {
    const deal = await createDeal(a, { name: 'Minimal' });
    expect(deal).toMatchObject({
      stage: 'prospecting',
      currency: 'USD',
      value: null,
      account_id: null,
      contact_id: null,
      tags: [],
      closed_at: null,
    });
  });

  it('stores value rounded to cents', async () => {
    expect((await createDeal(a, { name: 'Cents', value: 10.456 })).value).toBe(10.46);
  });

  it('stamps closed_at when created in a closed stage', async () => {
    const deal = await createDeal(a, { name: 'Won at once', stage: 'closed_won' });
    expect(Date.parse(deal.closed_at)).not.toBeNaN();
  });

  it.each([
    ['a negative value', { value: -1 }, 'value', 'greater_than_equal'],
    ['a lower-case currency', { currency: 'usd' }, 'currency', 'string_pattern_mismatch'],
    ['an unknown currency', { currency: 'XYZ' }, 'currency', 'value_error'],
    ['an unknown stage', { stage: 'won' }, 'stage', 'enum'],
    ['a missing name', { name: undefined }, 'name', 'missing'],
    ['a malformed close_date', { close_date: '30/06/2030' }, 'close_date', 'date_parsing'],
  ])('refuses %s with 422', async (_name, extra, field, type) => {
    const res = await ctx.request('POST', '/deals', { token: a.session, body: { name: 'x', ...extra } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc: ['body', field] });
  });

  it('is 404 when account_id or contact_id belongs to another organization, and nothing is written', async () => {
    const theirContact = await insertContact(b);
    const before = (await ctx.request('GET', '/deals?limit=200', { token: a.session })).body.length;
    expect(await ctx.request('POST', '/deals', { token: a.session, body: { name: 'x', account_id: theirAccount.id } })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
    expect(await ctx.request('POST', '/deals', { token: a.session, body: { name: 'x', contact_id: theirContact } })).toMatchObject({
      status: 404,
      body: { detail: 'Contact not found' },
    });
    expect((await ctx.request('POST', '/deals', { token: a.session, body: { name: 'x', account_id: newId() } })).status).toBe(404);
    expect((await ctx.request('GET', '/deals?limit=200', { token: a.session })).body.length).toBe(before);
  });

  it('refuses a read-only key with 403', async () => {
    expect(await ctx.request('POST', '/deals', { token: readOnly, body: { name: 'x' } })).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
  });
});

describe('GET /deals/{deal_id}', () => {
  it('returns the deal; another organization gets 404', async () => {
    const deal = await createDeal(a, { name: 'Visible', value: 5 });
    expect((await ctx.request('GET', `/deals/${deal.id}`, { token: readOnly })).body).toEqual(deal);
    expect(await ctx.request('GET', `/deals/${deal.id}`, { token: b.session })).toMatchObject({
      status: 404,
      body: { detail: 'Deal not found' },
    });
  });
});

describe('PATCH /deals/{deal_id}', () => {
  it('changes only the fields sent; an explicit null clears', async () => {
    const deal = await createDeal(a, { name: 'Patch me', value: 100, owner_id: 'u1', account_id: account.id, tags: ['x'] });
    const res = await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { value: 250.25, account_id: null, tags: [] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Patch me', value: 250.25, owner_id: 'u1', account_id: null, tags: [], currency: 'USD' });
  });

  it('stamps closed_at on a move into a closed stage, keeps it on a repeat, clears it on reopening', async () => {
    const deal = await createDeal(a, { name: 'Pipeline' });
    const negotiation = await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { stage: 'negotiation' } });
    expect(negotiation.body.closed_at).toBeNull();
    const won = await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { stage: 'closed_won' } });
    expect(won.body.stage).toBe('closed_won');
    expect(Date.parse(won.body.closed_at)).not.toBeNaN();
    const again = await ctx.request('PATCH', `/deals/${deal.id}`, {
      token: a.session,
      body: { stage: 'closed_won', name: 'Pipeline (won)' },
    });
    expect(again.body.closed_at).toBe(won.body.closed_at);
    const lost = await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { stage: 'closed_lost' } });
    expect(Date.parse(lost.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(won.body.closed_at));
    const reopened = await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { stage: 'qualification' } });
    expect(reopened.body).toMatchObject({ stage: 'qualification', closed_at: null });
  });

  it('refuses an empty body with 400 and a null name or stage with 422', async () => {
    const deal = await createDeal(a, { name: 'Strict' });
    expect(await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: {} })).toMatchObject({
      status: 400,
      body: { detail: 'No fields to update' },
    });
    expect((await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { name: null } })).status).toBe(422);
    expect((await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { stage: null } })).status).toBe(422);
  });

  it("is 404 for another organization's account_id or contact_id, and the deal is unchanged", async () => {
    const deal = await createDeal(a, { name: 'Refs', account_id: account.id });
    const theirContact = await insertContact(b);
    expect(await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { account_id: theirAccount.id } })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
    expect(await ctx.request('PATCH', `/deals/${deal.id}`, { token: a.session, body: { contact_id: theirContact } })).toMatchObject({
      status: 404,
      body: { detail: 'Contact not found' },
    });
    expect((await ctx.request('GET', `/deals/${deal.id}`, { token: a.session })).body.account_id).toBe(account.id);
  });

  it("is 404 for another organization's deal", async () => {
    const theirs = await createDeal(b, { name: 'Theirs' });
    expect(await ctx.request('PATCH', `/deals/${theirs.id}`, { token: a.session, body: { name: 'Mine' } })).toMatchObject({
      status: 404,
      body: { detail: 'Deal not found' },
    });
    expect((await ctx.request('GET', `/deals/${theirs.id}`, { token: b.session })).body.name).toBe('Theirs');
  });

  it('refuses a read-only key with 403', async () => {
    const deal = await createDeal(a, { name: 'RO' });
    expect((await ctx.request('PATCH', `/deals/${deal.id}`, { token: readOnly, body: { name: 'x' } })).status).toBe(403);
  });
});

describe('DELETE /deals/{deal_id}', () => {
  it("answers 204 and sets deal_id to null on the deal's activities, which stay on the account", async () => {
    const deal = await createDeal(a, { name: 'Doomed', account_id: account.id });
    const activity = await ctx.request('POST', `/deals/${deal.id}/activities`, { token: a.session, body: { type: 'call' } });
    expect(activity.status).toBe(200);
    const res = await ctx.request('DELETE', `/deals/${deal.id}`, { token: a.session });
    expect(res.status).toBe(204);
    expect((await ctx.request('GET', `/deals/${deal.id}`, { token: a.session })).status).toBe(404);
    const [row] = await ctx.deps.sql`SELECT account_id, deal_id FROM activities WHERE id = ${activity.body.id}`;
    expect(row).toEqual({ account_id: account.id, deal_id: null });
  });

  it("is 404 for another organization's deal", async () => {
    const theirs = await createDeal(b, { name: 'Survivor' });
    expect((await ctx.request('DELETE', `/deals/${theirs.id}`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', `/deals/${theirs.id}`, { token: b.session })).status).toBe(200);
  });

  it('refuses a read-only key with 403', async () => {
    const deal = await createDeal(a, { name: 'RO delete' });
    expect((await ctx.request('DELETE', `/deals/${deal.id}`, { token: readOnly })).status).toBe(403);
  });
});

describe('GET /deals', () => {
  let t: Tenant;
  let acc1: string;
  let acc2: string;
  const created: { id: string; name: string }[] = [];
  beforeAll(async () => {
    t = await newTenant(ctx, ['api:read', 'api:manage']);
    acc1 = (await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'One' } })).body.id;
    acc2 = (await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Two' } })).body.id;
    for (const body of [
      { name: 'd1', stage: 'prospecting', account_id: acc1, owner_id: 'ann' },
      { name: 'd2', stage: 'proposal', account_id: acc1, owner_id: 'bob' },
      { name: 'd3', stage: 'proposal', account_id: acc2, owner_id: 'ann' },
      { name: 'd4', stage: 'closed_won', owner_id: 'ann' },
    ]) {
      created.push(await createDeal(t, body));
    }
  });

  const names = (body: { name: string }[]) => body.map((r) => r.name);

  it('returns a bare array of deals, newest first, without a total', async () => {
    const res = await ctx.request('GET', '/deals', { token: t.session });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['d4', 'd3', 'd2', 'd1']);
    expect(Object.keys(res.body[0]).sort()).toEqual(DEAL_FIELDS);
    expect(res.headers.get('x-total-count')).toBeNull();
  });

  it('filters by stage, account_id and owner_id, together or apart', async () => {
    expect(names((await ctx.request('GET', '/deals?stage=proposal', { token: t.session })).body)).toEqual(['d3', 'd2']);
    expect(names((await ctx.request('GET', `/deals?account_id=${acc1}`, { token: t.session })).body)).toEqual(['d2', 'd1']);
    expect(names((await ctx.request('GET', '/deals?owner_id=ann', { token: t.session })).body)).toEqual(['d4', 'd3', 'd1']);
    expect(names((await ctx.request('GET', `/deals?owner_id=ann&stage=proposal&account_id=${acc2}`, { token: t.session })).body)).toEqual([
      'd3',
    ]);
  });

  it('refuses an invalid stage filter and an unknown filter with 400', async () => {
    const stage = await ctx.request('GET', '/deals?stage=won', { token: t.session });
    expect(stage.status).toBe(400);
    expect(stage.body.detail).toMatch(/^Invalid stage 'won'/);
    const unknown = await ctx.request('GET', '/deals?colour=red', { token: t.session });
    expect(unknown).toMatchObject({ status: 400, body: { detail: 'Unknown filter: colour' } });
  });

  it("never shows another organization's deals, even filtered by its account", async () => {
    expect((await ctx.request('GET', `/deals?account_id=${acc1}`, { token: b.session })).body).toEqual([]);
  });

  it('breaks created_at ties by id descending', async () => {
    const tie = await newTenant(ctx, ['api:read', 'api:manage']);
    const orgId = await orgUuid(ctx, tie);
    const rows = [newId(), newId(), newId()].map((id) => ({
      id,
      org_id: orgId,
      name: id,
      stage: 'prospecting',
      created_at: new Date('2030-01-01T00:00:00Z'),
    }));
    await ctx.deps.sql`INSERT INTO deals ${ctx.deps.sql(rows)}`;
    const res = await ctx.request('GET', '/deals', { token: tie.session });
    expect(res.body.map((r: { id: string }) => r.id)).toEqual(
      rows
        .map((r) => r.id)
        .sort()
        .reverse(),
    );
  });

  describe('limit and offset', () => {
    let big: Tenant;
    beforeAll(async () => {
      big = await newTenant(ctx, ['api:read', 'api:manage']);
      const orgId = await orgUuid(ctx, big);
      const base = Date.parse('2030-01-01T00:00:00Z');
      const rows = Array.from({ length: 210 }, (_, i) => ({
        id: newId(),
        org_id: orgId,
        name: `deal ${String(i).padStart(3, '0')}`,
        stage: 'prospecting',
        created_at: new Date(base + i * 1000),
      }));
      await ctx.deps.sql`INSERT INTO deals ${ctx.deps.sql(rows)}`;
    });

    it('defaults to 50', async () => {
      const res = await ctx.request('GET', '/deals', { token: big.session });
      expect(res.body).toHaveLength(50);
      expect(res.body[0].name).toBe('deal 209');
    });

    it('caps at 200 whatever is sent', async () => {
      const res = await ctx.request('GET', '/deals?limit=5000', { token: big.session });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(200);
    });

    it('pages with offset', async () => {
      const res = await ctx.request('GET', '/deals?limit=10&offset=205', { token: big.session });
      expect(names(res.body)).toEqual(['deal 004', 'deal 003', 'deal 002', 'deal 001', 'deal 000']);
    });
  });

  it('is readable with a read-only key', async () => {
    expect((await ctx.request('GET', '/deals', { token: readOnly })).status).toBe(200);
  });
});
