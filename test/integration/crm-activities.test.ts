import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/core/ids';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
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

async function newAccount(t: Tenant, name = 'Account'): Promise<string> {
  const res = await ctx.request('POST', '/accounts', { token: t.session, body: { name } });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function newDeal(t: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await ctx.request('POST', '/deals', { token: t.session, body: { name: 'Deal', ...body } });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function post(t: Tenant | string, path: string, body: Record<string, unknown>) {
  return ctx.request('POST', path, { token: typeof t === 'string' ? t : t.session, body });
}

const FULL = {
  summary: 'Quarterly review',
  body: 'Went through the roadmap.',
  due_at: '2024-03-01T15:00:00.000Z',
  duration_minutes: 45,
  attendees: [
    { name: 'Ann', email: 'ann@example.com' },
    { name: 'Bob', email: 'bob@example.com' },
  ],
  transcript: 'ANN: hello\nBOB: hi',
  recording_url: 'https://recordings.example.com/r/1',
  location: 'https://zoom.us/j/123',
  provider: 'zoom',
};

const ACTIVITY_FIELDS = [
  'account_id',
  'attendees',
  'body',
  'contact_id',
  'created_at',
  'deal_id',
  'due_at',
  'duration_minutes',
  'effective_time',
  'id',
  'location',
  'provider',
  'recording_url',
  'summary',
  'transcript',
  'type',
];

describe('POST /accounts/{account_id}/activities', () => {
  it('answers 200 with only the new id', async () => {
    const accountId = await newAccount(a);
    const res = await post(a, `/accounts/${accountId}/activities`, { type: 'note', summary: 'hi' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id']);
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it('rule 1: type is any string, not an enumeration', async () => {
    const accountId = await newAccount(a);
    const res = await post(a, `/accounts/${accountId}/activities`, { type: 'linkedin-voice-memo ✨' });
    expect(res.status).toBe(200);
    const [row] = await ctx.deps.sql`SELECT type FROM activities WHERE id = ${res.body.id}`;
    expect(row!.type).toBe('linkedin-voice-memo ✨');
  });

  it('rule 2: direction is accepted but never stored', async () => {
    const accountId = await newAccount(a);
    const res = await post(a, `/accounts/${accountId}/activities`, { type: 'call', direction: 'outbound' });
    expect(res.status).toBe(200);
    const [row] = await ctx.deps.sql`SELECT direction, metadata FROM activities WHERE id = ${res.body.id}`;
    expect(row!.direction).toBeNull();
    expect(JSON.stringify(row!.metadata)).not.toContain('outbound');
    const feed = await ctx.request('GET', `/accounts/${accountId}/activities`, { token: a.session });
    expect(feed.body[0]).not.toHaveProperty('direction');
  });

  it.each(['note', 'call', 'meeting', 'email', 'task', 'sms'])(
    'rule 3: due_at, duration_minutes and the metadata fields persist for type %s',
    async (type) => {
      const accountId = await newAccount(a);
      const res = await post(a, `/accounts/${accountId}/activities`, { type, ...FULL });
      expect(res.status).toBe(200);
      const [row] = await ctx.deps.sql`SELECT subject, due_at, duration_minutes, metadata FROM activities WHERE id = ${res.body.id}`;
      expect(row!.subject).toBe(FULL.summary);
      expect(row!.due_at.toISOString()).toBe(FULL.due_at);
      expect(row!.duration_minutes).toBe(45);
      expect(row!.metadata).toEqual({
        attendees: FULL.attendees,
        transcript: FULL.transcript,
        recording_url: FULL.recording_url,
        location: FULL.location,
        provider: FULL.provider,
      });
      const feed = await ctx.request('GET', `/accounts/${accountId}/activities`, { token: a.session });
      expect(feed.body).toHaveLength(1);
      expect(feed.body[0]).toMatchObject({
        id: res.body.id,
        type,
        ...FULL,
        account_id: accountId,
        deal_id: null,
        contact_id: null,
        effective_time: FULL.due_at,
      });
    },
  );

  it('rule 4: the account is not touched (no last-activity timestamp)', async () => {
    const accountId = await newAccount(a);
    const before = await ctx.request('GET', `/accounts/${accountId}`, { token: a.session });
    expect((await post(a, `/accounts/${accountId}/activities`, { type: 'meeting', ...FULL })).status).toBe(200);
    const after = await ctx.request('GET', `/accounts/${accountId}`, { token: a.session });
    expect(after.body).toEqual(before.body);
  });

  it("links a contact of the organization; another organization's contact is 404 and nothing is written", async () => {
    const accountId = await newAccount(a);
    const mine = newId();
    const theirs = newId();
    await ctx.deps
      .sql`INSERT INTO contacts (id, org_id, first_name) VALUES (${mine}, ${await orgUuid(ctx, a)}, 'Mine'), (${theirs}, ${await orgUuid(ctx, b)}, 'Theirs')`;
    const ok = await post(a, `/accounts/${accountId}/activities`, { type: 'email', contact_id: mine });
    expect(ok.status).toBe(200);
    const bad = await post(a, `/accounts/${accountId}/activities`, { type: 'email', contact_id: theirs });
    expect(bad).toMatchObject({ status: 404, body: { detail: 'Contact not found' } });
    expect((await post(a, `/accounts/${accountId}/activities`, { type: 'email', contact_id: newId() })).status).toBe(404);
    const feed = await ctx.request('GET', `/accounts/${accountId}/activities`, { token: a.session });
    expect(feed.body.map((r: { contact_id: string }) => r.contact_id)).toEqual([mine]);
  });

  it.each([
    ['a relative recording_url', { recording_url: '/r/1' }, 'recording_url', 'url_parsing'],
    ['an ftp recording_url', { recording_url: 'ftp://example.com/r.mp3' }, 'recording_url', 'url_parsing'],
    ['a missing type', { type: undefined }, 'type', 'missing'],
    ['an empty type', { type: '' }, 'type', 'string_too_short'],
    ['a malformed due_at', { due_at: 'tomorrow' }, 'due_at', 'datetime_parsing'],
    ['a fractional duration', { duration_minutes: 1.5 }, 'duration_minutes', 'int_type'],
    ['an attendee without email', { attendees: [{ name: 'x' }] }, 'attendees', 'missing'],
  ])('refuses %s with 422', async (_name, extra, field, type) => {
    const accountId = await newAccount(a);
    const res = await post(a, `/accounts/${accountId}/activities`, { type: 'call', ...extra });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc: expect.arrayContaining(['body', field]) });
  });

  it("is 404 for another organization's account and for an unknown one", async () => {
    const theirs = await newAccount(b);
    expect(await post(a, `/accounts/${theirs}/activities`, { type: 'note' })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
    expect((await post(a, `/accounts/${newId()}/activities`, { type: 'note' })).status).toBe(404);
    const [counted] = await ctx.deps.sql`SELECT count(*)::int AS count FROM activities WHERE account_id = ${theirs}`;
    expect(counted!.count).toBe(0);
  });

  it('refuses a read-only key with 403', async () => {
    const accountId = await newAccount(a);
    expect(await post(readOnly, `/accounts/${accountId}/activities`, { type: 'note' })).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
  });
});

describe('POST /deals/{deal_id}/activities', () => {
  it("attaches the activity to the deal and to the deal's account", async () => {
    const accountId = await newAccount(a);
    const dealId = await newDeal(a, { account_id: accountId });
    const res = await post(a, `/deals/${dealId}/activities`, { type: 'meeting', direction: 'inbound', ...FULL });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id']);
    const dealFeed = await ctx.request('GET', `/deals/${dealId}/activities`, { token: a.session });
    const accountFeed = await ctx.request('GET', `/accounts/${accountId}/activities`, { token: a.session });
    expect(dealFeed.body).toEqual(accountFeed.body);
    expect(dealFeed.body[0]).toMatchObject({ id: res.body.id, account_id: accountId, deal_id: dealId, ...FULL });
    const [row] = await ctx.deps.sql`SELECT direction FROM activities WHERE id = ${res.body.id}`;
    expect(row!.direction).toBeNull();
  });

  it('leaves account_id null for a deal without an account', async () => {
    const dealId = await newDeal(a);
    const res = await post(a, `/deals/${dealId}/activities`, { type: 'task' });
    const feed = await ctx.request('GET', `/deals/${dealId}/activities`, { token: a.session });
    expect(feed.body[0]).toMatchObject({ id: res.body.id, account_id: null, deal_id: dealId });
  });

  it("is 404 for another organization's deal", async () => {
    const theirs = await newDeal(b);
    expect(await post(a, `/deals/${theirs}/activities`, { type: 'note' })).toMatchObject({
      status: 404,
      body: { detail: 'Deal not found' },
    });
  });

  it('refuses a read-only key with 403', async () => {
    const dealId = await newDeal(a);
    expect((await post(readOnly, `/deals/${dealId}/activities`, { type: 'note' })).status).toBe(403);
  });
});

describe('activity feeds', () => {
  it('orders by effective_time descending: due_at when present, otherwise created_at', async () => {
    const accountId = await newAccount(a);
    const ids: Record<string, string> = {};
    for (const [key, due_at] of [
      ['old', '2020-01-01T00:00:00Z'],
      ['now', null],
      ['future', '2999-01-01T00:00:00Z'],
      ['mid', '2022-06-01T12:00:00Z'],
    ] as const) {
      ids[key] = (
        await post(a, `/accounts/${accountId}/activities`, { type: 'note', summary: key, ...(due_at ? { due_at } : {}) })
      ).body.id;
    }
    const feed = await ctx.request('GET', `/accounts/${accountId}/activities`, { token: readOnly });
    expect(feed.status).toBe(200);
    expect(feed.body.map((r: { summary: string }) => r.summary)).toEqual(['future', 'now', 'mid', 'old']);
    for (const item of feed.body) expect(Object.keys(item).sort()).toEqual(ACTIVITY_FIELDS);
    const undated = feed.body.find((r: { summary: string }) => r.summary === 'now');
    expect(undated.due_at).toBeNull();
    expect(undated.effective_time).toBe(undated.created_at);
  });

  it('exclude_future=true drops rows whose effective_time is in the future', async () => {
    const accountId = await newAccount(a);
    const dealId = await newDeal(a, { account_id: accountId });
    await post(a, `/deals/${dealId}/activities`, { type: 'task', summary: 'later', due_at: '2999-01-01T00:00:00Z' });
    await post(a, `/deals/${dealId}/activities`, { type: 'task', summary: 'done', due_at: '2001-01-01T00:00:00Z' });
    await post(a, `/deals/${dealId}/activities`, { type: 'note', summary: 'today' });
    for (const path of [`/accounts/${accountId}/activities`, `/deals/${dealId}/activities`]) {
      const all = await ctx.request('GET', path, { token: readOnly });
      expect(all.body.map((r: { summary: string }) => r.summary)).toEqual(['later', 'today', 'done']);
      const past = await ctx.request('GET', `${path}?exclude_future=true`, { token: a.session });
      expect(past.body.map((r: { summary: string }) => r.summary)).toEqual(['today', 'done']);
      const explicit = await ctx.request('GET', `${path}?exclude_future=false`, { token: a.session });
      expect(explicit.body).toHaveLength(3);
      expect((await ctx.request('GET', `${path}?exclude_future=yes`, { token: a.session })).status).toBe(400);
    }
  });

  describe('with many rows', () => {
    let accountId: string;
    let dealId: string;
    let rows: { id: string; due_at: Date }[];
    beforeAll(async () => {
      accountId = await newAccount(a, 'Busy');
      dealId = await newDeal(a, { account_id: accountId });
      const orgId = await orgUuid(ctx, a);
      const base = Date.parse('2021-01-01T00:00:00Z');
      // 205 activities, every pair sharing one due_at so ties need the id.
      rows = Array.from({ length: 205 }, (_, i) => ({
        id: newId(),
        org_id: orgId,
        account_id: accountId,
        deal_id: dealId,
        type: 'note',
        subject: `n${i}`,
        due_at: new Date(base + Math.floor(i / 2) * 60_000),
      }));
      await ctx.deps.sql`INSERT INTO activities ${ctx.deps.sql(rows)}`;
    });

    const expectedOrder = () =>
      [...rows].sort((x, y) => y.due_at.getTime() - x.due_at.getTime() || (x.id < y.id ? 1 : -1)).map((r) => r.id);

    it('breaks effective_time ties by id descending', async () => {
      const feed = await ctx.request('GET', `/accounts/${accountId}/activities?limit=200`, { token: a.session });
      expect(feed.body.map((r: { id: string }) => r.id)).toEqual(expectedOrder().slice(0, 200));
    });

    it('defaults to 50, caps at 200 whatever is sent, and pages with offset', async () => {
      for (const path of [`/accounts/${accountId}/activities`, `/deals/${dealId}/activities`]) {
        expect((await ctx.request('GET', path, { token: a.session })).body).toHaveLength(50);
        const capped = await ctx.request('GET', `${path}?limit=9999`, { token: a.session });
        expect(capped.status).toBe(200);
        expect(capped.body).toHaveLength(200);
        const tail = await ctx.request('GET', `${path}?limit=10&offset=200`, { token: a.session });
        expect(tail.body.map((r: { id: string }) => r.id)).toEqual(expectedOrder().slice(200));
      }
    });
  });

  it("is 404 for another organization's account or deal", async () => {
    const theirAccount = await newAccount(b);
    const theirDeal = await newDeal(b, { account_id: theirAccount });
    await post(b, `/deals/${theirDeal}/activities`, { type: 'note' });
    expect(await ctx.request('GET', `/accounts/${theirAccount}/activities`, { token: a.session })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
    expect(await ctx.request('GET', `/deals/${theirDeal}/activities`, { token: a.session })).toMatchObject({
      status: 404,
      body: { detail: 'Deal not found' },
    });
  });

  it('needs a CRM read scope', async () => {
    const accountId = await newAccount(a);
    const none = await createOrgKey(ctx, (await newTenant(ctx, ['agents:read', 'organizations:manage'])).session, {
      scopes: ['agents:read'],
    });
    expect((await ctx.request('GET', `/accounts/${accountId}/activities`, { token: none })).status).toBe(403);
  });
});

describe('POST /activities/{activity_id}/unlink-account', () => {
  it('clears account_id and deal_id together and answers {id, account_id: null, deal_id: null}', async () => {
    const accountId = await newAccount(a);
    const dealId = await newDeal(a, { account_id: accountId });
    const { id } = (await post(a, `/deals/${dealId}/activities`, { type: 'call', summary: 'linked' })).body;
    const res = await ctx.request('POST', `/activities/${id}/unlink-account`, { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, account_id: null, deal_id: null });
    const [row] = await ctx.deps.sql`SELECT account_id, deal_id, subject FROM activities WHERE id = ${id}`;
    expect(row).toEqual({ account_id: null, deal_id: null, subject: 'linked' });
    expect((await ctx.request('GET', `/accounts/${accountId}/activities`, { token: a.session })).body).toEqual([]);
    expect((await ctx.request('GET', `/deals/${dealId}/activities`, { token: a.session })).body).toEqual([]);
    // Unlinking again is harmless.
    expect((await ctx.request('POST', `/activities/${id}/unlink-account`, { token: a.session })).body).toEqual({
      id,
      account_id: null,
      deal_id: null,
    });
  });

  it("is 404 for another organization's activity, which stays linked", async () => {
    const theirAccount = await newAccount(b);
    const { id } = (await post(b, `/accounts/${theirAccount}/activities`, { type: 'note' })).body;
    expect(await ctx.request('POST', `/activities/${id}/unlink-account`, { token: a.session })).toMatchObject({
      status: 404,
      body: { detail: 'Activity not found' },
    });
    expect((await ctx.request('POST', `/activities/${newId()}/unlink-account`, { token: a.session })).status).toBe(404);
    const [row] = await ctx.deps.sql`SELECT account_id FROM activities WHERE id = ${id}`;
    expect(row!.account_id).toBe(theirAccount);
  });

  it('refuses a read-only key with 403', async () => {
    const accountId = await newAccount(a);
    const { id } = (await post(a, `/accounts/${accountId}/activities`, { type: 'note' })).body;
    expect((await ctx.request('POST', `/activities/${id}/unlink-account`, { token: readOnly })).status).toBe(403);
  });
});
