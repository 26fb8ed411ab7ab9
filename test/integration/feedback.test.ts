import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, externalId, newTenant, orgUuid, type Tenant } from '../support/identity';

// Feedback: any signed-in user sends it, with or without an active organization; it is limited per
// user; only the service's operators (a session with service:operate) read it, never an org admin.

let ctx: TestContext;
let tenant: Tenant;
let operator: string;

beforeAll(async () => {
  ctx = await createTestContext({ env: { FEEDBACK_PER_USER: '3', FEEDBACK_WINDOW_SECONDS: '600' } });
  tenant = await newTenant(ctx);
  operator = await ctx.session({ sub: externalId('operator'), permissions: ['service:operate'] });
});
afterAll(() => ctx?.close());

const send = (token: string, body: unknown) => ctx.request('POST', '/feedback', { token, body });

describe('sending feedback', () => {
  it('stores feedback with the user and the active organization, or none', async () => {
    const withOrg = await send(tenant.session, {
      message: 'The pipeline view is great',
      category: 'praise',
      rating: 5,
      context: { page: '/deals' },
    });
    expect(withOrg.status, JSON.stringify(withOrg.body)).toBe(200);
    expect(withOrg.body).toEqual({ id: expect.any(String), created_at: expect.any(String) });

    const loner = externalId('user');
    const noOrg = await ctx.session({ sub: loner, permissions: [] });
    const without = await send(noOrg, { message: 'Sign-up page typo', category: 'bug' });
    expect(without.status).toBe(200);

    const list = await ctx.request('GET', '/feedback', { token: operator });
    expect(list.status).toBe(200);
    const mine = list.body.data.find((f: { id: string }) => f.id === withOrg.body.id);
    expect(mine).toMatchObject({
      user: `user:${tenant.user}`,
      organization_id: await orgUuid(ctx, tenant),
      organization_external_id: tenant.org,
      category: 'praise',
      rating: 5,
      context: { page: '/deals' },
      message: 'The pipeline view is great',
    });
    expect(list.body.data.find((f: { id: string }) => f.id === without.body.id)).toMatchObject({
      user: `user:${loner}`,
      organization_id: null,
      rating: null,
    });
    // Newest first.
    expect(list.body.data[0].id).toBe(without.body.id);
  });

  it('works with an organization key too, and refuses unauthenticated callers', async () => {
    const key = await createOrgKey(ctx, tenant.session);
    expect((await send(key, { message: 'From a key', category: 'idea' })).status).toBe(200);
    expect((await ctx.request('POST', '/feedback', { body: { message: 'x', category: 'bug' } })).status).toBe(401);
  });

  it('bounds the message, the category, the rating and the context (422)', async () => {
    const someone = await ctx.session({ sub: externalId('user'), permissions: [] });
    for (const body of [
      { message: '', category: 'bug' },
      { message: '   ', category: 'bug' },
      { message: 'x'.repeat(5001), category: 'bug' },
      { message: 'ok', category: 'rant' },
      { message: 'ok', category: 'bug', rating: 6 },
      { message: 'ok', category: 'bug', rating: 2.5 },
      { message: 'ok', category: 'bug', context: { blob: 'y'.repeat(9000) } },
      { message: 'ok', category: 'bug', extra: true },
    ]) {
      const res = await send(someone, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
    }
  });

  it('limits each user to FEEDBACK_PER_USER per window, with Retry-After', async () => {
    const user = await ctx.session({ sub: externalId('user'), permissions: [] });
    for (let i = 0; i < 3; i++) expect((await send(user, { message: `note ${i}`, category: 'other' })).status).toBe(200);
    const limited = await send(user, { message: 'one too many', category: 'other' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another user is not affected.
    const other = await ctx.session({ sub: externalId('user'), permissions: [] });
    expect((await send(other, { message: 'fine', category: 'other' })).status).toBe(200);
  });
});

describe('reading feedback', () => {
  it('is for operators only: org admins, CRM managers and their keys get 403', async () => {
    expect((await ctx.request('GET', '/feedback', { token: tenant.session })).status).toBe(403);
    const admin = await ctx.session({
      sub: tenant.user,
      org_id: tenant.org,
      org_ids: [tenant.org],
      permissions: ['organizations:manage', 'api:manage'],
    });
    expect((await ctx.request('GET', '/feedback', { token: admin })).body).toEqual({ detail: 'Insufficient permissions' });
    const key = await createOrgKey(ctx, tenant.session);
    expect((await ctx.request('GET', '/feedback', { token: key })).status).toBe(403);
  });

  it('filters by category and organization and pages with a cursor', async () => {
    const bugs = await ctx.request('GET', '/feedback?category=bug', { token: operator });
    expect(bugs.body.data.length).toBeGreaterThan(0);
    expect(bugs.body.data.every((f: { category: string }) => f.category === 'bug')).toBe(true);
    const org = await orgUuid(ctx, tenant);
    const ofOrg = await ctx.request('GET', `/feedback?organization_id=${org}`, { token: operator });
    expect(ofOrg.body.data.every((f: { organization_id: string }) => f.organization_id === org)).toBe(true);
    const first = await ctx.request('GET', '/feedback?limit=1', { token: operator });
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await ctx.request('GET', `/feedback?limit=1&cursor=${first.body.next_cursor}`, { token: operator });
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect((await ctx.request('GET', '/feedback?cursor=bogus', { token: operator })).status).toBe(400);
    expect((await ctx.request('GET', '/feedback?category=rant', { token: operator })).status).toBe(400);
  });
});

describe('answering and triaging feedback', () => {
  it("keeps the submitter's email: the one sent, else the identity provider's", async () => {
    const sub = externalId('user');
    const user = await ctx.session({ sub, permissions: [], email: 'ana@example.com' });
    const given = await send(user, { message: 'Please call me back', category: 'question', email: 'ana.work@example.com' });
    const claimed = await send(user, { message: 'Another one', category: 'idea' });
    const list = (await ctx.request('GET', '/feedback', { token: operator })).body.data;
    expect(list.find((f: { id: string }) => f.id === given.body.id)).toMatchObject({
      submitter_email: 'ana.work@example.com',
      status: 'new',
    });
    expect(list.find((f: { id: string }) => f.id === claimed.body.id)).toMatchObject({
      submitter_email: 'ana@example.com',
      status: 'new',
      status_changed_at: null,
    });
    expect((await send(user, { message: 'x', category: 'bug', email: 'not an address' })).status).toBe(422);
  });

  it('lets operators set new, seen or done, filter by status, and nobody else', async () => {
    const author = await ctx.session({ sub: externalId('user'), permissions: [] });
    const sent = await send(author, { message: 'Export is slow', category: 'bug' });
    const path = `/feedback/${sent.body.id}`;
    expect((await ctx.request('PATCH', path, { token: author, body: { status: 'done' } })).status).toBe(403);
    expect((await ctx.request('PATCH', path, { token: tenant.session, body: { status: 'done' } })).status).toBe(403);
    const seen = await ctx.request('PATCH', path, { token: operator, body: { status: 'seen' } });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: sent.body.id, status: 'seen', status_changed_at: expect.any(String) });
    expect((await ctx.request('PATCH', path, { token: operator, body: { status: 'archived' } })).status).toBe(422);
    expect((await ctx.request('PATCH', `/feedback/${crypto.randomUUID()}`, { token: operator, body: { status: 'done' } })).status).toBe(
      404,
    );
    const seenList = (await ctx.request('GET', '/feedback?status=seen', { token: operator })).body.data;
    expect(seenList.map((f: { id: string }) => f.id)).toContain(sent.body.id);
    expect(seenList.every((f: { status: string }) => f.status === 'seen')).toBe(true);
  });

  it("lists a user's own feedback only, newest first, with its status", async () => {
    const me = await ctx.session({ sub: externalId('user'), permissions: [] });
    const other = await ctx.session({ sub: externalId('user'), permissions: [] });
    const first = await send(me, { message: 'first', category: 'idea' });
    const second = await send(me, { message: 'second', category: 'bug' });
    await send(other, { message: 'not mine', category: 'bug' });
    await ctx.request('PATCH', `/feedback/${first.body.id}`, { token: operator, body: { status: 'done' } });
    const mine = await ctx.request('GET', '/feedback/mine', { token: me });
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((f: { id: string; status: string }) => [f.id, f.status])).toEqual([
      [second.body.id, 'new'],
      [first.body.id, 'done'],
    ]);
    const page = await ctx.request('GET', '/feedback/mine?limit=1', { token: me });
    expect(page.body.data).toHaveLength(1);
    expect((await ctx.request('GET', `/feedback/mine?limit=1&cursor=${page.body.next_cursor}`, { token: me })).body.data[0].id).toBe(
      first.body.id,
    );
    expect((await ctx.request('GET', '/feedback/mine')).status).toBe(401);
  });
});
