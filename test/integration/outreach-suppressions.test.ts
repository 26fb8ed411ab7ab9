import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, type Tenant } from '../support/identity';

// The suppression list by API: list (search, reason, cursor), add (idempotent, case-insensitive),
// remove; outreach read to read, outreach manage to write; another organization's entry is 404.

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let readOnly: string;

beforeAll(async () => {
  ctx = await createTestContext();
  [a, b] = await Promise.all([
    newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']),
    newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']),
  ]);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['outreach:read'] });
});
afterAll(() => ctx?.close());

const add = (token: string, body: unknown) => ctx.request('POST', '/outreach/suppressions', { token, body });

describe('the suppression list', () => {
  it('adds an address once, whatever its case, keeping the first reason', async () => {
    const first = await add(a.session, { email: 'Gone@Example.com', reason: 'complaint', note: 'marked as spam' });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      email: 'Gone@Example.com',
      reason: 'complaint',
      note: 'marked as spam',
      created_by: `user:${a.user}`,
    });
    const again = await add(a.session, { email: 'gone@example.com' });
    expect(again.body).toEqual(first.body);
    const manual = await add(a.session, { email: 'someone@example.com' });
    expect(manual.body.reason).toBe('manual');
  });

  it('lists newest first, searches and filters by reason, pages with a cursor', async () => {
    for (const email of ['p1@list.example', 'p2@list.example', 'p3@list.example']) await add(a.session, { email, reason: 'unsubscribe' });
    const page = await ctx.request('GET', '/outreach/suppressions?search=LIST.example&limit=2', { token: readOnly });
    expect(page.status).toBe(200);
    expect(page.body.data.map((s: { email: string }) => s.email)).toEqual(['p3@list.example', 'p2@list.example']);
    expect(page.body.pagination).toMatchObject({ limit: 2, total: 3, next_cursor: expect.any(String) });
    const next = await ctx.request('GET', `/outreach/suppressions?search=list.example&limit=2&cursor=${page.body.pagination.next_cursor}`, {
      token: readOnly,
    });
    expect(next.body.data.map((s: { email: string }) => s.email)).toEqual(['p1@list.example']);
    const complaints = await ctx.request('GET', '/outreach/suppressions?reason=complaint', { token: a.session });
    expect(complaints.body.data.every((s: { reason: string }) => s.reason === 'complaint')).toBe(true);
    expect((await ctx.request('GET', '/outreach/suppressions?reason=annoyed', { token: a.session })).status).toBe(400);
  });

  it('removes an entry; is 404 across organizations, 403 for read-only callers, 422 for a bad address', async () => {
    const entry = (await add(a.session, { email: 'back@example.com' })).body;
    expect((await add(readOnly, { email: 'x@example.com' })).status).toBe(403);
    expect((await ctx.request('DELETE', `/outreach/suppressions/${entry.id}`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('DELETE', `/outreach/suppressions/${entry.id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', '/outreach/suppressions?search=back@example.com', { token: b.session })).body.data).toEqual([]);
    expect((await ctx.request('DELETE', `/outreach/suppressions/${entry.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('DELETE', `/outreach/suppressions/${entry.id}`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', '/outreach/suppressions?search=back@example.com', { token: a.session })).body.data).toEqual([]);
    expect((await add(a.session, { email: 'not an address' })).status).toBe(422);
    expect((await add(a.session, { email: 'x@example.com', reason: 'bored' })).status).toBe(422);
  });
});
