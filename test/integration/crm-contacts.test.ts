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

const CONTACT_KEYS = [
  'account_id',
  'company',
  'company_domain',
  'created_at',
  'department',
  'email',
  'first_name',
  'id',
  'last_name',
  'linkedin_url',
  'notes',
  'owner_id',
  'phone',
  'source',
  'stage',
  'stage_changed_at',
  'tags',
  'title',
  'updated_at',
];

const unique = () => Math.random().toString(36).slice(2, 10);
const email = () => `c-${unique()}@example.com`;
const get = (t: CrmTenant, id: string) => ctx.request('GET', `/contacts/${id}`, { token: t.session });
const patch = (t: CrmTenant, id: string, body: unknown) => ctx.request('PATCH', `/contacts/${id}`, { token: t.session, body });

describe('POST /contacts', () => {
  it('creates a contact at stage new with the given fields and deduplicated tags', async () => {
    const account = await insertAccount(ctx, a.orgId);
    const address = email();
    const res = await ctx.request('POST', '/contacts', {
      token: a.session,
      body: {
        first_name: 'Grace',
        last_name: 'Hopper',
        email: address,
        title: 'Rear Admiral',
        phone: '+1 555 0100',
        linkedin_url: 'https://linkedin.com/in/grace',
        company: 'Navy',
        company_domain: 'navy.mil',
        source: 'event',
        notes: 'met at a conference',
        owner_id: 'rep_1',
        account_id: account,
        tags: ['vip', ' vip ', 'cobol'],
      },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CONTACT_KEYS);
    expect(res.body).toMatchObject({
      first_name: 'Grace',
      last_name: 'Hopper',
      email: address,
      title: 'Rear Admiral',
      department: null,
      account_id: account,
      stage: 'new',
      stage_changed_at: null,
      tags: ['vip', 'cobol'],
      owner_id: 'rep_1',
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it('refuses department on create as an extra field (422), and stage likewise', async () => {
    for (const field of ['department', 'stage']) {
      const res = await ctx.request('POST', '/contacts', { token: a.session, body: { first_name: 'X', [field]: 'Sales' } });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ type: 'extra_forbidden', loc: ['body', field] })]);
    }
  });

  it('needs a name or an email, and a valid email', async () => {
    expect((await ctx.request('POST', '/contacts', { token: a.session, body: { title: 'CEO' } })).status).toBe(422);
    const bad = await ctx.request('POST', '/contacts', { token: a.session, body: { email: 'not-an-email' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'email']);
  });

  it("answers 404 for another organization's account_id and writes nothing", async () => {
    const foreign = await insertAccount(ctx, b.orgId);
    const address = email();
    const res = await ctx.request('POST', '/contacts', { token: a.session, body: { email: address, account_id: foreign } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Account not found' });
    const { n } = (await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM contacts WHERE email = ${address}`)[0]!;
    expect(n).toBe(0);
  });

  it('refuses a second contact with the same email in the organization, whatever its case (409)', async () => {
    const address = email();
    await createContact(ctx, a, { email: address });
    const res = await ctx.request('POST', '/contacts', { token: a.session, body: { email: address.toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: 'A contact with this email already exists' });
    // Another organization may hold the same email.
    expect((await ctx.request('POST', '/contacts', { token: b.session, body: { email: address } })).status).toBe(200);
  });
});

describe('GET /contacts/{contact_id}', () => {
  it('returns the full row', async () => {
    const created = await createContact(ctx, a, { email: email() });
    const res = await get(a, created.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it("is 404 for a missing contact and for another organization's", async () => {
    const theirs = await createContact(ctx, b);
    for (const id of [MISSING_ID, theirs.id]) {
      const res = await get(a, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Contact not found' });
    }
  });

  it('is 422 for an id that is not a uuid', async () => {
    expect((await get(a, 'nope')).status).toBe(422);
  });
});

describe('PATCH /contacts/{contact_id}', () => {
  it('rule 1: clears first_name, last_name and email together (the name rule is for create only)', async () => {
    const created = await createContact(ctx, a, { first_name: 'Only', email: 'only@example.com' });
    const res = await patch(a, created.id, { first_name: null, last_name: null, email: null });
    expect(res.status).toBe(200);
    expect((await ctx.request('GET', `/contacts/${created.id}`, { token: a.session })).body).toMatchObject({
      first_name: null,
      last_name: null,
      email: null,
    });
  });

  it('rule 1: changes only the fields present, and an explicit null clears one', async () => {
    const created = await createContact(ctx, a, { email: email(), title: 'CTO', phone: '123', notes: 'keep me' });
    const res = await patch(a, created.id, { title: 'CEO', phone: null, department: 'Engineering' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created,
      title: 'CEO',
      phone: null,
      department: 'Engineering',
      updated_at: expect.any(String),
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(created.updated_at).getTime());
    expect((await get(a, created.id)).body).toEqual(res.body);
  });

  it('rule 1: tags are replaced when given, and null clears them', async () => {
    const created = await createContact(ctx, a, { tags: ['a', 'b'] });
    expect((await patch(a, created.id, { tags: ['c', 'c', 'a'] })).body.tags).toEqual(['c', 'a']);
    expect((await patch(a, created.id, { tags: null })).body.tags).toEqual([]);
  });

  it('rule 2: stage is not accepted (422) and nothing changes', async () => {
    const created = await createContact(ctx, a);
    const res = await patch(a, created.id, { stage: 'converted', title: 'Boss' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ type: 'extra_forbidden', loc: ['body', 'stage'] })]);
    expect((await get(a, created.id)).body).toEqual(created);
  });

  it("rule 3: a non-null account_id must be the organization's, otherwise 404 and nothing changes", async () => {
    const created = await createContact(ctx, a);
    const foreign = await insertAccount(ctx, b.orgId);
    const res = await patch(a, created.id, { account_id: foreign, title: 'Changed' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Account not found' });
    expect((await patch(a, created.id, { account_id: MISSING_ID })).status).toBe(404);
    expect((await get(a, created.id)).body).toEqual(created);

    const own = await insertAccount(ctx, a.orgId);
    expect((await patch(a, created.id, { account_id: own })).body.account_id).toBe(own);
    // null unlinks, and needs no check.
    expect((await patch(a, created.id, { account_id: null })).body.account_id).toBeNull();
  });

  it('rule 4: an empty body is 400', async () => {
    const created = await createContact(ctx, a);
    const res = await patch(a, created.id, {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Empty patch body: send at least one field' });
    const bare = await ctx.request('PATCH', `/contacts/${created.id}`, { token: a.session });
    expect(bare.status).toBe(400);
  });

  it('rule 5: a nonexistent contact id returns 200 {} and changes nothing', async () => {
    const res = await patch(a, MISSING_ID, { title: 'Ghost' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    const { n } = (await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM contacts WHERE id = ${MISSING_ID}`)[0]!;
    expect(n).toBe(0);
  });

  it("rule 5: another organization's contact id returns 200 {} and that contact is untouched", async () => {
    const theirs = await createContact(ctx, b, { title: 'Theirs' });
    const res = await patch(a, theirs.id, { title: 'Hijacked' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await get(b, theirs.id)).body).toEqual(theirs);
  });

  it('checks the account before the contact: a nonexistent contact with a foreign account_id is 404', async () => {
    const foreign = await insertAccount(ctx, b.orgId);
    expect((await patch(a, MISSING_ID, { account_id: foreign })).status).toBe(404);
  });

  it('refuses an email another contact of the organization has (409)', async () => {
    const address = email();
    await createContact(ctx, a, { email: address });
    const other = await createContact(ctx, a, { email: email() });
    const res = await patch(a, other.id, { email: address.toUpperCase() });
    expect(res.status).toBe(409);
    expect((await get(a, other.id)).body.email).toBe(other.email);
  });

  it('validates field types and lengths (422)', async () => {
    const created = await createContact(ctx, a);
    expect((await patch(a, created.id, { first_name: 42 })).status).toBe(422);
    expect((await patch(a, created.id, { notes: 'x'.repeat(10_001) })).status).toBe(422);
    expect((await patch(a, created.id, { account_id: 'not-a-uuid' })).status).toBe(422);
  });
});

describe('GET /contacts', () => {
  let l: CrmTenant;
  let account: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    l = await crmTenant(ctx);
    account = await insertAccount(ctx, l.orgId);
    // Created in this order, so newest first is the reverse.
    ids.ada = (
      await createContact(ctx, l, {
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@analytical.org',
        tags: ['math'],
        owner_id: 'rep_1',
      })
    ).id;
    ids.grace = (
      await createContact(ctx, l, {
        first_name: 'Grace',
        last_name: 'Hopper',
        email: 'grace@navy.mil',
        company: 'US Navy',
        account_id: account,
      })
    ).id;
    ids.alan = (
      await createContact(ctx, l, {
        first_name: 'Alan',
        last_name: 'Turing',
        email: 'alan@bletchley.uk',
        tags: ['math', 'crypto'],
        owner_id: 'rep_2',
      })
    ).id;
    ids.percent = (
      await createContact(ctx, l, { first_name: 'Per', last_name: 'Cent', company: '100% Corp', company_domain: 'hundred-percent.example' })
    ).id;
    await ctx.request('POST', `/contacts/${ids.alan}/respond`, { token: l.session });
  });

  const list = (query = '', token = l.session) => ctx.request('GET', `/contacts${query}`, { token });
  const names = (body: { first_name: string }[]) => body.map((c) => c.first_name);

  it('returns a bare array, newest first, with the total match count in X-Total-Count', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Per', 'Alan', 'Grace', 'Ada']);
    expect(res.headers.get('x-total-count')).toBe('4');
    expect(Object.keys(res.body[0]).sort()).toEqual(CONTACT_KEYS);
  });

  it('pages with limit and offset; the count stays the total', async () => {
    const page = await list('?limit=2&offset=1');
    expect(names(page.body)).toEqual(['Alan', 'Grace']);
    expect(page.headers.get('x-total-count')).toBe('4');
    const beyond = await list('?offset=10');
    expect(beyond.body).toEqual([]);
    expect(beyond.headers.get('x-total-count')).toBe('4');
    expect((await list('?limit=0')).status).toBe(422);
    expect((await list('?offset=-1')).status).toBe(422);
  });

  it('searches name, email and company case-insensitively, taking wildcards literally', async () => {
    expect(names((await list('?search=LOVE')).body)).toEqual(['Ada']);
    expect(names((await list('?search=grace%20hop')).body)).toEqual(['Grace']);
    expect(names((await list('?search=bletchley')).body)).toEqual(['Alan']);
    expect(names((await list('?search=navy')).body)).toEqual(['Grace']);
    expect(names((await list('?search=hundred-PERCENT')).body)).toEqual(['Per']);
    expect(names((await list('?search=100%25')).body)).toEqual(['Per']);
    expect((await list('?search=_')).body).toEqual([]);
  });

  it('filters by stage, account_id, tag and owner_id, and the count follows', async () => {
    const responded = await list('?stage=responded');
    expect(names(responded.body)).toEqual(['Alan']);
    expect(responded.headers.get('x-total-count')).toBe('1');
    expect(names((await list(`?account_id=${account}`)).body)).toEqual(['Grace']);
    expect(names((await list('?tag=math')).body)).toEqual(['Alan', 'Ada']);
    expect(names((await list('?owner_id=rep_1')).body)).toEqual(['Ada']);
    expect(names((await list('?tag=math&owner_id=rep_2')).body)).toEqual(['Alan']);
  });

  it('answers 400 for an unknown filter or an invalid stage', async () => {
    const unknown = await list('?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ detail: 'Unknown filter: colour' });
    const stage = await list('?stage=won');
    expect(stage.status).toBe(400);
    expect(stage.body.detail).toMatch(/^Invalid stage 'won'/);
  });

  it('caps limit at 200', async () => {
    const big = await crmTenant(ctx);
    await ctx.deps.sql`
      INSERT INTO contacts (id, org_id, first_name) SELECT gen_random_uuid(), ${big.orgId}, 'n' || g FROM generate_series(1, 205) g`;
    const res = await list('?limit=1000', big.session);
    expect(res.body).toHaveLength(200);
    expect(res.headers.get('x-total-count')).toBe('205');
  });

  it("never shows another organization's contacts", async () => {
    const res = await list('?search=a', b.session);
    expect(res.body.map((c: { id: string }) => c.id)).not.toContain(ids.ada);
  });
});

describe('DELETE /contacts/{contact_id}', () => {
  it('deletes with 204; a second delete is 404', async () => {
    const created = await createContact(ctx, a);
    const res = await ctx.request('DELETE', `/contacts/${created.id}`, { token: a.session });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await get(a, created.id)).status).toBe(404);
    expect((await ctx.request('DELETE', `/contacts/${created.id}`, { token: a.session })).status).toBe(404);
  });

  it("is 404 for another organization's contact, which stays", async () => {
    const theirs = await createContact(ctx, b);
    expect((await ctx.request('DELETE', `/contacts/${theirs.id}`, { token: a.session })).status).toBe(404);
    expect((await get(b, theirs.id)).status).toBe(200);
  });
});

describe('funnel: respond, disqualify, convert', () => {
  // The state table of docs/decisions/crm.md ("Contact funnel"): [current stage, operation, next stage or 409].
  const TABLE: [string, string, string | 409][] = [
    ['new', 'respond', 'responded'],
    ['new', 'disqualify', 'disqualified'],
    ['new', 'convert', 'converted'],
    ['contacted', 'respond', 'responded'],
    ['contacted', 'disqualify', 'disqualified'],
    ['contacted', 'convert', 'converted'],
    ['responded', 'respond', 409],
    ['responded', 'disqualify', 'disqualified'],
    ['responded', 'convert', 'converted'],
    ['converted', 'respond', 409],
    ['converted', 'disqualify', 409],
    ['converted', 'convert', 409],
    ['disqualified', 'respond', 'responded'],
    ['disqualified', 'disqualify', 409],
    ['disqualified', 'convert', 409],
  ];

  it.each(TABLE)('%s --%s--> %s', async (from, operation, next) => {
    const created = await createContact(ctx, a);
    await ctx.deps.sql`UPDATE contacts SET stage = ${from} WHERE id = ${created.id}`;
    const res = await ctx.request('POST', `/contacts/${created.id}/${operation}`, { token: a.session });
    if (next === 409) {
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(new RegExp(`^Cannot ${operation} a contact in stage ${from}`));
      expect((await get(a, created.id)).body.stage).toBe(from);
    } else {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, stage: next, stage_changed_at: expect.any(String) });
      expect((await get(a, created.id)).body.stage).toBe(next);
    }
  });

  it('covers every stage and operation', () => {
    expect(new Set(TABLE.map(([from]) => from))).toEqual(new Set(['new', 'contacted', 'responded', 'converted', 'disqualified']));
    expect(TABLE).toHaveLength(15);
  });

  it.each(['respond', 'disqualify', 'convert'])("%s is 404 for a missing contact and for another organization's", async (operation) => {
    const theirs = await createContact(ctx, b);
    for (const id of [MISSING_ID, theirs.id]) {
      const res = await ctx.request('POST', `/contacts/${id}/${operation}`, { token: a.session });
      expect(res.status).toBe(404);
    }
    expect((await get(b, theirs.id)).body.stage).toBe('new');
  });
});

describe('scopes', () => {
  let key: string;
  let contactId: string;
  beforeAll(async () => {
    key = await readOnlyKey(ctx, a);
    contactId = (await createContact(ctx, a)).id;
  });

  it('a CRM read key reads the list and one contact', async () => {
    expect((await ctx.request('GET', '/contacts', { token: key })).status).toBe(200);
    expect((await ctx.request('GET', `/contacts/${contactId}`, { token: key })).status).toBe(200);
  });

  it.each([
    ['POST', '/contacts', { first_name: 'No' }],
    ['PATCH', '/contacts/{id}', { title: 'No' }],
    ['DELETE', '/contacts/{id}', undefined],
    ['POST', '/contacts/{id}/respond', undefined],
    ['POST', '/contacts/{id}/disqualify', undefined],
    ['POST', '/contacts/{id}/convert', undefined],
    ['POST', '/contacts/import', { csv: 'email\nx@example.com\n' }],
  ])('a CRM read key gets 403 on %s %s', async (method, path, body) => {
    const res = await ctx.request(method, path.replace('{id}', contactId), { token: key, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'Insufficient permissions' });
  });

  it('nothing changed through the read-only key', async () => {
    const res = await get(a, contactId);
    expect(res.body).toMatchObject({ stage: 'new', title: null });
  });
});

describe('notification: contact.assigned', () => {
  const outbox = (orgId: string, contactId: string) =>
    ctx.deps.sql<{ event_type: string; entity_type: string; payload: any; actor_user_id: string | null; recipient_user_ids: string[] }[]>`
      SELECT event_type, entity_type, payload, actor_user_id, recipient_user_ids FROM notification_outbox
      WHERE org_id = ${orgId} AND entity_id = ${contactId} ORDER BY created_at, id`;
  const userId = async (ext: string) => (await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${ext}`)[0]!.id;

  it('is written with the change when an owner is set or changed, to the new owner when a member', async () => {
    // A colleague in the same organization, known to the service once it has signed in.
    const colleague = `user-${unique()}`;
    const session = await ctx.session({ sub: colleague, org_id: a.org, org_ids: [a.org], permissions: ['api:read', 'api:manage'] });
    expect((await ctx.request('GET', '/me', { token: session })).status).toBe(200);
    const [colleagueId, actorId] = await Promise.all([userId(colleague), userId(a.user)]);

    const unowned = await createContact(ctx, a, { email: email() });
    expect(await outbox(a.orgId, unowned.id)).toEqual([]);

    const contact = await createContact(ctx, a, { email: email(), owner_id: colleague });
    expect(await outbox(a.orgId, contact.id)).toEqual([
      {
        event_type: 'contact.assigned',
        entity_type: 'contact',
        actor_user_id: actorId,
        recipient_user_ids: [colleagueId],
        payload: { contact_id: contact.id, name: 'Ada Lovelace', owner_id: colleague, previous_owner_id: null },
      },
    ]);

    // The same owner again, other fields, or no owner: nothing new.
    expect((await patch(a, contact.id, { owner_id: colleague, title: 'CTO' })).status).toBe(200);
    expect((await patch(a, unowned.id, { owner_id: null })).status).toBe(200);
    expect(await outbox(a.orgId, contact.id)).toHaveLength(1);
    expect(await outbox(a.orgId, unowned.id)).toEqual([]);

    // Handed to someone who is not a member: the event, with no named recipient.
    expect((await patch(a, contact.id, { owner_id: 'rep_outside' })).status).toBe(200);
    const rows = await outbox(a.orgId, contact.id);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({
      event_type: 'contact.assigned',
      recipient_user_ids: [],
      payload: { owner_id: 'rep_outside', previous_owner_id: colleague },
    });
  });

  it('is not written when the change is refused', async () => {
    const contact = await createContact(ctx, a, { email: email() });
    const res = await patch(a, contact.id, { owner_id: 'rep_9', account_id: await insertAccount(ctx, b.orgId) });
    expect(res.status).toBe(404);
    expect(await outbox(a.orgId, contact.id)).toEqual([]);
  });
});
