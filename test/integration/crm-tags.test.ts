import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, createContact, crmTenant, insertAccount, readOnlyKey, type CrmTenant } from '../support/crm-contacts';

let ctx: TestContext;
let a: CrmTenant;
let b: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext();
  [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
});
afterAll(() => ctx?.close());

const createTag = (t: CrmTenant, body: Record<string, unknown>) => ctx.request('POST', '/tags', { token: t.session, body });
const listTags = (t: CrmTenant, token = t.session) => ctx.request('GET', '/tags', { token });
const contactTags = async (t: CrmTenant, id: string) => (await ctx.request('GET', `/contacts/${id}`, { token: t.session })).body.tags;

async function taggedDeal(orgId: string, tags: string[]): Promise<string> {
  const [row] = await ctx.deps.sql<{ id: string }[]>`
    INSERT INTO deals (id, org_id, name, stage, tags) VALUES (gen_random_uuid(), ${orgId}, 'Deal', 'prospecting', ${tags}) RETURNING id`;
  return row!.id;
}
const dealTags = async (id: string) => (await ctx.deps.sql`SELECT tags FROM deals WHERE id = ${id}`)[0]!.tags;
const accountTags = async (id: string) => (await ctx.deps.sql`SELECT tags FROM accounts WHERE id = ${id}`)[0]!.tags;

describe('GET /tags and POST /tags', () => {
  it('lists the organization’s tags by name ascending, with schema_version 1', async () => {
    const t = await crmTenant(ctx);
    for (const name of ['prospect', 'cold', 'vip']) expect((await createTag(t, { name })).status).toBe(200);
    await createTag(b, { name: 'another-orgs' });
    const res = await listTags(t);
    expect(res.status).toBe(200);
    expect(res.body.schema_version).toBe(1);
    expect(res.body.tags.map((tag: { name: string }) => tag.name)).toEqual(['cold', 'prospect', 'vip']);
    expect(Object.keys(res.body).sort()).toEqual(['schema_version', 'tags']);
  });

  it('orders names as people read them, case aside', async () => {
    const t = await crmTenant(ctx);
    for (const name of ['Zeta', 'beta', 'Alpha', 'acme']) expect((await createTag(t, { name })).status).toBe(200);
    expect((await listTags(t)).body.tags.map((tag: { name: string }) => tag.name)).toEqual(['acme', 'Alpha', 'beta', 'Zeta']);
  });

  it('is an empty list for an organization without tags', async () => {
    const t = await crmTenant(ctx);
    expect((await listTags(t)).body).toEqual({ tags: [], schema_version: 1 });
  });

  it('creates a tag {id, org_id, name, color}; color is null when never set', async () => {
    const res = await createTag(a, { name: '  Enterprise ', color: '#1A2b3c' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(String), org_id: a.orgId, name: 'Enterprise', color: '#1A2b3c' });
    const plain = await createTag(a, { name: 'plain' });
    expect(plain.body.color).toBeNull();
    expect((await listTags(a)).body.tags).toContainEqual(res.body);
  });

  it('refuses a duplicate name in the organization (409); another organization may use it', async () => {
    expect((await createTag(a, { name: 'dup' })).status).toBe(200);
    const again = await createTag(a, { name: 'dup' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'A tag with this name already exists' });
    expect((await createTag(b, { name: 'dup' })).status).toBe(200);
  });

  it('validates name and color (422)', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 'ok', color: 'red' },
      { name: 'ok', color: '#12345' },
      { name: 'ok', extra: 1 },
    ]) {
      expect((await createTag(a, body)).status, JSON.stringify(body)).toBe(422);
    }
  });
});

describe('PATCH /tags/{tag_id}', () => {
  it('recolors, and null clears the color', async () => {
    const tag = (await createTag(a, { name: 'recolor-me', color: '#000000' })).body;
    const res = await ctx.request('PATCH', `/tags/${tag.id}`, { token: a.session, body: { color: '#ffffff' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...tag, color: '#ffffff' });
    const cleared = await ctx.request('PATCH', `/tags/${tag.id}`, { token: a.session, body: { color: null } });
    expect(cleared.body.color).toBeNull();
  });

  it("renames the tag and the plain name on the organization's contacts, deals and accounts only", async () => {
    const tag = (await createTag(a, { name: 'old-name' })).body;
    const contact = await createContact(ctx, a, { tags: ['first', 'old-name', 'last'] });
    const both = await createContact(ctx, a, { tags: ['new-name', 'old-name'] }); // already carries the new name
    const other = await createContact(ctx, b, { tags: ['old-name'] });
    const deal = await taggedDeal(a.orgId, ['old-name']);
    const otherDeal = await taggedDeal(b.orgId, ['old-name']);
    const account = await insertAccount(ctx, a.orgId);
    await ctx.deps.sql`UPDATE accounts SET tags = '{old-name}' WHERE id = ${account}`;

    const res = await ctx.request('PATCH', `/tags/${tag.id}`, { token: a.session, body: { name: 'new-name' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...tag, name: 'new-name' });
    expect(await contactTags(a, contact.id)).toEqual(['first', 'new-name', 'last']);
    expect(await contactTags(a, both.id)).toEqual(['new-name']);
    expect(await dealTags(deal)).toEqual(['new-name']);
    expect(await accountTags(account)).toEqual(['new-name']);
    expect(await contactTags(b, other.id)).toEqual(['old-name']);
    expect(await dealTags(otherDeal)).toEqual(['old-name']);
  });

  it('refuses a rename onto an existing name (409) and renames nothing', async () => {
    const taken = (await createTag(a, { name: 'taken' })).body;
    const tag = (await createTag(a, { name: 'wants-taken' })).body;
    const contact = await createContact(ctx, a, { tags: ['wants-taken'] });
    const res = await ctx.request('PATCH', `/tags/${tag.id}`, { token: a.session, body: { name: 'taken' } });
    expect(res.status).toBe(409);
    expect(await contactTags(a, contact.id)).toEqual(['wants-taken']);
    expect((await listTags(a)).body.tags).toEqual(expect.arrayContaining([taken, tag]));
  });

  it('answers 400 for an empty body', async () => {
    const tag = (await createTag(a, { name: 'empty-patch' })).body;
    const res = await ctx.request('PATCH', `/tags/${tag.id}`, { token: a.session, body: {} });
    expect(res.status).toBe(400);
  });

  it("is 404 for a missing tag and for another organization's", async () => {
    const theirs = (await createTag(b, { name: 'theirs-patch' })).body;
    for (const id of [MISSING_ID, theirs.id]) {
      const res = await ctx.request('PATCH', `/tags/${id}`, { token: a.session, body: { name: 'mine' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Tag not found' });
    }
    expect((await listTags(b)).body.tags).toContainEqual(theirs);
  });
});

describe('DELETE /tags/{tag_id}', () => {
  it("deletes the tag (204) and removes its name from the organization's contacts, deals and accounts", async () => {
    const tag = (await createTag(a, { name: 'doomed' })).body;
    const contact = await createContact(ctx, a, { tags: ['keep', 'doomed'] });
    const other = await createContact(ctx, b, { tags: ['doomed'] });
    const deal = await taggedDeal(a.orgId, ['doomed', 'keep']);
    const account = await insertAccount(ctx, a.orgId);
    await ctx.deps.sql`UPDATE accounts SET tags = '{doomed}' WHERE id = ${account}`;

    const res = await ctx.request('DELETE', `/tags/${tag.id}`, { token: a.session });
    expect(res.status).toBe(204);
    expect((await listTags(a)).body.tags.map((t: { name: string }) => t.name)).not.toContain('doomed');
    expect(await contactTags(a, contact.id)).toEqual(['keep']);
    expect(await dealTags(deal)).toEqual(['keep']);
    expect(await accountTags(account)).toEqual([]);
    expect(await contactTags(b, other.id)).toEqual(['doomed']);
    expect((await ctx.request('DELETE', `/tags/${tag.id}`, { token: a.session })).status).toBe(404);
  });

  it("is 404 for another organization's tag, which stays", async () => {
    const theirs = (await createTag(b, { name: 'theirs-delete' })).body;
    expect((await ctx.request('DELETE', `/tags/${theirs.id}`, { token: a.session })).status).toBe(404);
    expect((await listTags(b)).body.tags).toContainEqual(theirs);
  });
});

describe('scopes', () => {
  let key: string;
  let tagId: string;
  beforeAll(async () => {
    key = await readOnlyKey(ctx, a);
    tagId = (await createTag(a, { name: 'scoped' })).body.id;
  });

  it('a CRM read key lists tags', async () => {
    expect((await listTags(a, key)).status).toBe(200);
  });

  it.each([
    ['POST', '/tags', { name: 'nope' }],
    ['PATCH', '/tags/{id}', { name: 'nope' }],
    ['DELETE', '/tags/{id}', undefined],
  ])('a CRM read key gets 403 on %s %s', async (method, path, body) => {
    const res = await ctx.request(method, path.replace('{id}', tagId), { token: key, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'Insufficient permissions' });
  });

  it('nothing changed through the read-only key', async () => {
    const names = (await listTags(a)).body.tags.map((t: { name: string }) => t.name);
    expect(names).toContain('scoped');
    expect(names).not.toContain('nope');
  });
});
