import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createContact, crmTenant, insertAccount, readOnlyKey, type CrmTenant } from '../support/crm-contacts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx?.close());

const importCsv = (t: CrmTenant, csv: string, token = t.session) => ctx.request('POST', '/contacts/import', { token, body: { csv } });
const byEmail = async (t: CrmTenant, email: string) => {
  const res = await ctx.request('GET', `/contacts?search=${encodeURIComponent(email)}`, { token: t.session });
  return res.body as Record<string, any>[];
};
const count = async (t: CrmTenant) => {
  const { n } = (await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM contacts WHERE org_id = ${t.orgId}`)[0]!;
  return n as number;
};

describe('POST /contacts/import', () => {
  it('creates new contacts and updates existing ones by email, case-insensitively', async () => {
    const t = await crmTenant(ctx);
    const existing = await createContact(ctx, t, { first_name: 'Old', email: 'Known@Example.com', title: 'Keep', phone: '1' });
    const res = await importCsv(
      t,
      'email,first_name,last_name,department,phone\n' +
        'known@example.com,Updated,Person,Finance,\n' +
        'new1@example.com,New,One,Sales,555\n' +
        'new2@example.com,New,Two,,\n',
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 2, updated: 1, rejected: [] });

    const [updated] = await byEmail(t, 'known@example.com');
    // Present cells change (department too: import is one of its two ways in); empty cells keep the value.
    expect(updated).toMatchObject({
      id: existing.id,
      email: 'Known@Example.com',
      first_name: 'Updated',
      last_name: 'Person',
      department: 'Finance',
      title: 'Keep',
      phone: '1',
      stage: 'new',
    });
    const [one] = await byEmail(t, 'new1@example.com');
    expect(one).toMatchObject({ first_name: 'New', last_name: 'One', department: 'Sales', phone: '555', stage: 'new', tags: [] });
    const [two] = await byEmail(t, 'new2@example.com');
    expect(two).toMatchObject({ department: null, phone: null });
  });

  it("keeps an updated contact's stage", async () => {
    const t = await crmTenant(ctx);
    const existing = await createContact(ctx, t, { email: 'staged@example.com' });
    await ctx.request('POST', `/contacts/${existing.id}/respond`, { token: t.session });
    expect((await importCsv(t, 'email,title\nstaged@example.com,VP\n')).body).toMatchObject({ updated: 1 });
    expect((await byEmail(t, 'staged@example.com'))[0]).toMatchObject({ stage: 'responded', title: 'VP' });
  });

  it('reports bad rows with their row number and reason, skips them, and applies the good ones', async () => {
    const t = await crmTenant(ctx);
    const foreign = await insertAccount(ctx, (await crmTenant(ctx)).orgId);
    const own = await insertAccount(ctx, t.orgId);
    const untouched = await createContact(ctx, t, { email: 'untouched@example.com', title: 'Same' });
    const res = await importCsv(
      t,
      [
        'email,first_name,account_id,title', // row 1
        'good1@example.com,Good,,', // row 2
        'not-an-email,Bad,,', // row 3
        ',No email,,', // row 4
        `untouched@example.com,Changed,${foreign},Changed`, // row 5: foreign account
        'good2@example.com,Short', // row 6: too few fields
        'GOOD1@example.com,Again,,', // row 7: repeats row 2's email
        `good3@example.com,Linked,${own},`, // row 8
        'bad-account@example.com,X,not-a-uuid,', // row 9
      ].join('\n'),
    );
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(2);
    expect(res.body.updated).toBe(0);
    expect(res.body.rejected).toEqual([
      { row: 3, reason: expect.stringMatching(/^email: /) },
      { row: 4, reason: 'email is required' },
      { row: 5, reason: 'account_id: Account not found' },
      { row: 6, reason: 'Expected 4 fields, found 2' },
      { row: 7, reason: 'Duplicate email GOOD1@example.com: already on row 2' },
      { row: 9, reason: expect.stringMatching(/^account_id: /) },
    ]);
    expect((await byEmail(t, 'untouched@example.com'))[0]).toEqual(untouched);
    expect((await byEmail(t, 'good3@example.com'))[0]).toMatchObject({ account_id: own });
    expect(await byEmail(t, 'bad-account@example.com')).toEqual([]);
    expect(await count(t)).toBe(3);
  });

  it('reads quoted cells, a byte-order mark, any header case and blank lines; tags split on ;', async () => {
    const t = await crmTenant(ctx);
    const csv = '\uFEFF Email ,Notes,TAGS\n"quoted@example.com","line one\nline two, with comma","vip; math ;vip"\n\n';
    const res = await importCsv(t, csv);
    expect(res.body).toEqual({ created: 1, updated: 0, rejected: [] });
    expect((await byEmail(t, 'quoted@example.com'))[0]).toMatchObject({ notes: 'line one\nline two, with comma', tags: ['vip', 'math'] });
    // An empty tags cell keeps the tags; a filled one replaces them.
    await importCsv(t, 'email,tags,title\nquoted@example.com,,CTO\n');
    expect((await byEmail(t, 'quoted@example.com'))[0]).toMatchObject({ tags: ['vip', 'math'], title: 'CTO' });
    await importCsv(t, 'email,tags\nquoted@example.com,new\n');
    expect((await byEmail(t, 'quoted@example.com'))[0]!.tags).toEqual(['new']);
  });

  it('refuses the whole file for a bad header or malformed CSV (400), writing nothing', async () => {
    const t = await crmTenant(ctx);
    const cases: [string, RegExp][] = [
      ['email,stage\na@example.com,converted\n', /^Unknown column: "stage"/],
      ['email,favourite_colour\na@example.com,red\n', /^Unknown column: "favourite_colour"/],
      ['first_name\nAda\n', /^The header needs an email column/],
      ['email,Email\na@example.com,b@example.com\n', /^Repeated column: email/],
      ['email,first_name\n"a@example.com,Ada\n', /^Malformed CSV: /],
      ['\n\n', /^The CSV is empty/],
    ];
    for (const [csv, detail] of cases) {
      const res = await importCsv(t, csv);
      expect(res.status, csv).toBe(400);
      expect(res.body.detail).toMatch(detail);
    }
    expect(await count(t)).toBe(0);
  });

  it('takes a header alone as an empty import', async () => {
    const t = await crmTenant(ctx);
    expect((await importCsv(t, 'email,first_name\n')).body).toEqual({ created: 0, updated: 0, rejected: [] });
  });

  it('validates the body: csv is a required non-empty string (422)', async () => {
    const t = await crmTenant(ctx);
    expect((await ctx.request('POST', '/contacts/import', { token: t.session, body: {} })).status).toBe(422);
    expect((await importCsv(t, '')).status).toBe(422);
  });

  it('takes 5000 rows and refuses 5001 with 413, writing nothing', async () => {
    const t = await crmTenant(ctx);
    const rows = (n: number) => ['email', ...Array.from({ length: n }, (_, i) => `r${i}@x.io`)].join('\n');
    const tooMany = await importCsv(t, rows(5001));
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toEqual({ detail: 'Too many rows: at most 5000 per import' });
    expect(await count(t)).toBe(0);
    const most = await importCsv(t, rows(5000));
    expect(most.body).toEqual({ created: 5000, updated: 0, rejected: [] });
    expect(await count(t)).toBe(5000);
  });

  it("matches only the caller's organization: another organization's contact with the email is untouched", async () => {
    const [t, other] = [await crmTenant(ctx), await crmTenant(ctx)];
    const theirs = await createContact(ctx, other, { email: 'shared@example.com', title: 'Theirs' });
    expect((await importCsv(t, 'email,title\nshared@example.com,Mine\n')).body).toMatchObject({ created: 1, updated: 0 });
    expect((await byEmail(other, 'shared@example.com'))[0]).toEqual(theirs);
    expect((await byEmail(t, 'shared@example.com'))[0]).toMatchObject({ title: 'Mine' });
  });

  it('needs CRM manage: a read-only key gets 403 and nothing is written', async () => {
    const t = await crmTenant(ctx);
    const res = await importCsv(t, 'email\nro@example.com\n', await readOnlyKey(ctx, t));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'Insufficient permissions' });
    expect(await count(t)).toBe(0);
  });
});

describe('notification: contact.assigned on import', () => {
  it('is written for each contact whose owner the import sets or changes, to the owner when a member', async () => {
    const t = await crmTenant(ctx);
    const colleague = `user-${Math.random().toString(36).slice(2, 10)}`;
    const session = await ctx.session({ sub: colleague, org_id: t.org, org_ids: [t.org], permissions: ['api:read', 'api:manage'] });
    expect((await ctx.request('GET', '/me', { token: session })).status).toBe(200);
    const colleagueId = (await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${colleague}`)[0]!.id;
    const kept = await createContact(ctx, t, { email: 'kept@example.com', owner_id: 'rep_1' });
    const moved = await createContact(ctx, t, { email: 'moved@example.com', owner_id: 'rep_1' });
    await ctx.deps.sql`DELETE FROM notification_outbox WHERE org_id = ${t.orgId}`;

    const res = await importCsv(
      t,
      'email,first_name,owner_id\n' +
        'KEPT@example.com,Kept,rep_1\n' + // the same owner: nothing
        `moved@example.com,Moved,${colleague}\n` + // a new owner, a member
        'fresh@example.com,Fresh,rep_2\n' + // created with an owner, not a member
        'plain@example.com,Plain,\n', // no owner: nothing
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const fresh = (await byEmail(t, 'fresh@example.com'))[0]!;
    const rows = await ctx.deps.sql<{ entity_id: string; payload: any; recipient_user_ids: string[] }[]>`
      SELECT entity_id, payload, recipient_user_ids FROM notification_outbox
      WHERE org_id = ${t.orgId} AND event_type = 'contact.assigned' ORDER BY entity_id`;
    expect(rows.map((r) => r.entity_id).sort()).toEqual([moved.id, fresh.id].sort());
    expect(rows.map((r) => r.entity_id)).not.toContain(kept.id);
    expect(rows.find((r) => r.entity_id === moved.id)).toMatchObject({
      recipient_user_ids: [colleagueId],
      payload: { owner_id: colleague, previous_owner_id: 'rep_1', name: 'Moved Lovelace' },
    });
    expect(rows.find((r) => r.entity_id === fresh.id)).toMatchObject({
      recipient_user_ids: [],
      payload: { owner_id: 'rep_2', previous_owner_id: null },
    });
  });
});
