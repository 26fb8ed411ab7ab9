import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../platform/adapters/meetings/webhooks';
import { createTestContext, type TestContext } from '../support/context';
import { createContact, MISSING_ID } from '../support/crm-contacts';
import { newTenant, orgUuid, createOrgKey, type Tenant } from '../support/identity';

// Sequences and enrollments through the API: definitions, templates, the lifecycle state table,
// enrollments, scopes and tenancy. Sending is covered by outreach-sending.test.ts.

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;
const SCOPES = ['api:read', 'api:manage', 'outreach:manage'];

let ctx: TestContext;
let a: Tenant & { orgId: string };
let b: Tenant & { orgId: string };

async function tenant(scopes = SCOPES) {
  const t = await newTenant(ctx, scopes);
  return { ...t, orgId: await orgUuid(ctx, t) };
}

/** A mailbox row written straight to the database (the mailboxes API is another area's). */
async function insertMailbox(c: TestContext, orgId: string, values: Record<string, unknown> = {}): Promise<string> {
  const id = crypto.randomUUID();
  await c.deps.sql`
    INSERT INTO outreach_mailboxes ${c.deps.sql({
      id,
      org_id: orgId,
      email_address: `sender-${id.slice(0, 8)}@example.test`,
      kind: 'simulated',
      window_start: '00:00',
      window_end: '24:00',
      window_days: [1, 2, 3, 4, 5, 6, 7],
      send_gap_min_seconds: 0,
      send_gap_max_seconds: 0,
      created_by: 'user:test',
      ...values,
    } as never)}`;
  return id;
}

const step = (over: Record<string, unknown> = {}) => ({
  delay_days: 0,
  subject: 'Hello {{first_name|there}}',
  body: 'Hi {{first_name}}',
  ...over,
});
const create = (t: Tenant, body: Record<string, unknown>, token = t.session) =>
  ctx.request('POST', '/outreach/sequencer/sequences', { token, body });
const move = (t: Tenant, id: string, m: string, token = t.session) =>
  ctx.request('POST', `/outreach/sequencer/sequences/${id}/${m}`, { token });

beforeAll(async () => {
  ctx = await createTestContext({ env: { OUTREACH_INBOUND_SECRETS: SECRET } });
  [a, b] = await Promise.all([tenant(), tenant()]);
});
afterAll(() => ctx?.close());

describe('sequence definitions', () => {
  it('creates a draft with steps, pool and schedule, and reads it back with enrollment counts', async () => {
    const mailbox = await insertMailbox(ctx, a.orgId);
    const res = await create(a, {
      name: '  Q3 founders ',
      steps: [step(), step({ delay_days: 3, subject: null, body: 'Following up', variants: [{ body: 'Bumping this' }] })],
      mailbox_ids: [mailbox, mailbox],
      start_at: '2030-01-01T09:00:00Z',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Q3 founders',
      status: 'draft',
      mailbox_ids: [mailbox],
      stop_on_reply: true,
      start_at: '2030-01-01T09:00:00.000Z',
    });
    expect(res.body.steps).toHaveLength(2);
    expect(res.body.steps[1]).toMatchObject({
      index: 1,
      delay_days: 3,
      subject: null,
      variants: [{ subject: null, body: 'Bumping this', body_html: null }],
    });
    const read = await ctx.request('GET', `/outreach/sequencer/sequences/${res.body.id}`, { token: a.session });
    expect(read.status).toBe(200);
    expect(read.body.enrollment_counts).toEqual({});
  });

  it('refuses an unknown template variable (422 pointing at it) and a first step without a subject', async () => {
    const unknown = await create(a, { name: 'x', steps: [step({ body: 'Hi {{nickname}}' })] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'steps', 0, 'body'], msg: 'Unknown template variable: nickname' });
    const variant = await create(a, { name: 'x', steps: [step(), step({ variants: [{ subject: '{{foo}}', body: 'b' }] })] });
    expect(variant.body.detail[0].loc).toEqual(['body', 'steps', 1, 'variants', 0, 'subject']);
    expect((await create(a, { name: 'x', steps: [step({ subject: null })] })).status).toBe(422);
  });

  it('validates the body (422) and refuses an empty patch (400)', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'x', extra: 1 },
      { name: 'x', steps: [step({ delay_days: -1 })] },
      { name: 'x', mailbox_ids: ['nope'] },
    ]) {
      expect((await create(a, body)).status, JSON.stringify(body)).toBe(422);
    }
    const seq = (await create(a, { name: 'patch me' })).body;
    expect((await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, { token: a.session, body: {} })).status).toBe(400);
    const renamed = await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, {
      token: a.session,
      body: { name: 'renamed', stop_on_reply: false },
    });
    expect(renamed.body).toMatchObject({ name: 'renamed', stop_on_reply: false });
  });

  it("refuses another organization's mailbox in the pool (404)", async () => {
    const theirs = await insertMailbox(ctx, b.orgId);
    expect((await create(a, { name: 'x', mailbox_ids: [theirs] })).status).toBe(404);
  });

  it('lists newest first with cursor pagination and a status filter', async () => {
    const t = await tenant();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await create(t, { name })).body.id);
    const first = await ctx.request('GET', '/outreach/sequencer/sequences?limit=2', { token: t.session });
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.pagination.total).toBe(3);
    const second = await ctx.request('GET', `/outreach/sequencer/sequences?limit=2&cursor=${first.body.pagination.next_cursor}`, {
      token: t.session,
    });
    expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect((await ctx.request('GET', '/outreach/sequencer/sequences?status=bogus', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/outreach/sequencer/sequences?status=active', { token: t.session })).body.data).toEqual([]);
  });
});

describe('mailboxes in a pool', () => {
  it('refuses to delete a mailbox while a sequence that can still send uses it (409), and deletes it once archived', async () => {
    const mailbox = await insertMailbox(ctx, a.orgId);
    const seq = await create(a, { name: 'Pool keeper', steps: [step()], mailbox_ids: [mailbox] });
    const del = () => ctx.request('DELETE', `/outreach/mailboxes/${mailbox}`, { token: a.session });
    const refused = await del();
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('Pool keeper');
    expect((await ctx.request('GET', `/outreach/mailboxes/${mailbox}`, { token: a.session })).status).toBe(200);
    expect((await move(a, seq.body.id, 'archive')).status).toBe(200);
    expect((await del()).status).toBe(204);
  });
});

describe('lifecycle state table', () => {
  it('moves draft → active → paused → active → completed → archived and refuses other moves (409)', async () => {
    const mailbox = await insertMailbox(ctx, a.orgId);
    const empty = (await create(a, { name: 'empty' })).body;
    const refused = await move(a, empty.id, 'activate');
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/at least one step/);

    const seq = (await create(a, { name: 'moves', steps: [step()], mailbox_ids: [mailbox] })).body;
    expect((await move(a, seq.id, 'pause')).status).toBe(409);
    expect((await move(a, seq.id, 'resume')).status).toBe(409);
    const active = await move(a, seq.id, 'activate');
    expect(active.status, active.text).toBe(200);
    expect(active.body.status).toBe('active');
    expect(active.body.activated_at).not.toBeNull();
    expect((await move(a, seq.id, 'activate')).body.detail).toBe('Cannot activate a sequence that is active');
    expect((await move(a, seq.id, 'archive')).status).toBe(409);
    const patchActive = await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, {
      token: a.session,
      body: { steps: [step()] },
    });
    expect(patchActive.status).toBe(409);
    expect((await move(a, seq.id, 'pause')).body.status).toBe('paused');
    expect(
      (await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, { token: a.session, body: { steps: [step({ body: 'v2' })] } }))
        .status,
    ).toBe(200);
    expect((await move(a, seq.id, 'resume')).body.status).toBe('active');
    expect((await move(a, seq.id, 'complete')).body.status).toBe('completed');
    expect((await move(a, seq.id, 'resume')).status).toBe(409);
    const archived = await move(a, seq.id, 'archive');
    expect(archived.body).toMatchObject({ status: 'archived' });
    expect(
      (await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, { token: a.session, body: { name: 'late' } })).status,
    ).toBe(409);
    // The sender workflow was started with the activation.
    const handle = ctx.deps.temporal.workflow.getHandle(`outreach-sequence:${seq.id}`);
    expect((await handle.describe()).workflowId).toBe(`outreach-sequence:${seq.id}`);
  });

  it('is 404 for an unknown sequence and for another organization’s', async () => {
    const theirs = (await create(b, { name: 'theirs' })).body;
    for (const id of [MISSING_ID, theirs.id]) {
      expect((await ctx.request('GET', `/outreach/sequencer/sequences/${id}`, { token: a.session })).status).toBe(404);
      expect((await move(a, id, 'activate')).status).toBe(404);
      expect((await ctx.request('PATCH', `/outreach/sequencer/sequences/${id}`, { token: a.session, body: { name: 'x' } })).status).toBe(
        404,
      );
    }
    expect((await ctx.request('GET', '/outreach/sequencer/sequences/not-a-uuid', { token: a.session })).status).toBe(422);
  });
});

describe('enrollments', () => {
  it('enrolls CRM contacts, skips duplicates and contacts without email, lists status per contact and removes', async () => {
    const seq = (await create(a, { name: 'enroll', steps: [step({ delay_days: 2 })] })).body;
    const ada = await createContact(ctx, a, { email: 'ada@example.test' });
    const noEmail = await createContact(ctx, a, { first_name: 'Nomail' });
    const res = await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
      token: a.session,
      body: { contact_ids: [ada.id, noEmail.id, ada.id] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.enrolled).toHaveLength(1);
    const enrollment = res.body.enrolled[0];
    expect(enrollment).toMatchObject({ contact_id: ada.id, status: 'active', next_step: 0, thread_id: null });
    // The first step's delay counts from enrollment.
    expect(Date.parse(enrollment.next_send_at) - Date.parse(enrollment.created_at)).toBeGreaterThan(2 * 86_400_000 - 5000);
    expect(res.body.skipped).toEqual([{ contact_id: noEmail.id, reason: 'no_email' }]);
    const again = await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
      token: a.session,
      body: { contact_ids: [ada.id] },
    });
    expect(again.body).toEqual({ enrolled: [], skipped: [{ contact_id: ada.id, reason: 'already_enrolled' }] });

    const list = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments`, { token: a.session });
    expect(list.body.data.map((e: { contact_id: string; status: string }) => [e.contact_id, e.status])).toEqual([[ada.id, 'active']]);
    const removed = await ctx.request('DELETE', `/outreach/sequencer/sequences/${seq.id}/enrollments/${enrollment.id}`, {
      token: a.session,
    });
    expect(removed.body).toMatchObject({ status: 'removed', next_send_at: null });
    expect(
      (await ctx.request('DELETE', `/outreach/sequencer/sequences/${seq.id}/enrollments/${enrollment.id}`, { token: a.session })).status,
    ).toBe(409);
    expect(
      (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments?status=removed`, { token: a.session })).body.pagination
        .total,
    ).toBe(1);
    expect((await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}`, { token: a.session })).body.enrollment_counts).toEqual({
      removed: 1,
    });
  });

  it("refuses another organization's contact (404, nothing enrolled) and enrolls into no other organization's sequence", async () => {
    const seq = (await create(a, { name: 'tenancy', steps: [step()] })).body;
    const mine = await createContact(ctx, a, { email: 'mine@example.test' });
    const theirs = await createContact(ctx, b, { email: 'theirs@example.test' });
    const res = await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
      token: a.session,
      body: { contact_ids: [mine.id, theirs.id] },
    });
    expect(res.status).toBe(404);
    expect((await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments`, { token: a.session })).body.data).toEqual([]);
    const other = await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
      token: b.session,
      body: { contact_ids: [theirs.id] },
    });
    expect(other.status).toBe(404);
    expect(
      (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments/${MISSING_ID}`, { token: a.session })).status,
    ).toBe(404);
  });

  it('stops waiting enrollments when the sequence is completed by hand, and refuses new ones (409)', async () => {
    const mailbox = await insertMailbox(ctx, a.orgId);
    const seq = (await create(a, { name: 'done', steps: [step({ delay_days: 5 })], mailbox_ids: [mailbox] })).body;
    const waiting = await createContact(ctx, a, { email: 'waiting@example.test' });
    const [enrollment] = (
      await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
        token: a.session,
        body: { contact_ids: [waiting.id] },
      })
    ).body.enrolled;
    await move(a, seq.id, 'activate');
    await move(a, seq.id, 'complete');
    const after = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments/${enrollment.id}`, { token: a.session });
    expect(after.body).toMatchObject({ status: 'removed', next_send_at: null });
    const c = await createContact(ctx, a, { email: 'late@example.test' });
    expect(
      (
        await ctx.request('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, {
          token: a.session,
          body: { contact_ids: [c.id] },
        })
      ).status,
    ).toBe(409);
  });
});

describe('scopes', () => {
  it('lets outreach:read read and refuses its writes (403); a token without outreach scopes reads nothing', async () => {
    const seq = (await create(a, { name: 'scoped' })).body;
    const reader = await createOrgKey(ctx, a.session, { scopes: ['outreach:read'] });
    expect((await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}`, { token: reader })).status).toBe(200);
    expect((await ctx.request('GET', '/outreach/sequencer/unibox/threads', { token: reader })).status).toBe(200);
    const write = await create(a, { name: 'no' }, reader);
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ detail: 'Insufficient permissions' });
    expect((await move(a, seq.id, 'activate', reader)).status).toBe(403);
    expect((await ctx.request('PATCH', `/outreach/sequencer/sequences/${seq.id}`, { token: reader, body: { name: 'x' } })).status).toBe(
      403,
    );
    const crmOnly = await newTenant(ctx, ['api:read', 'api:manage']);
    expect((await ctx.request('GET', '/outreach/sequencer/sequences', { token: crmOnly.session })).status).toBe(403);
    const provision = await newTenant(ctx, ['outreach:provision']);
    expect((await create(provision, { name: 'provision may manage' })).status).toBe(200);
  });
});

describe('unibox thread read', () => {
  it('is 422 for a malformed thread_id and 404 for an unknown one', async () => {
    expect((await ctx.request('GET', '/outreach/sequencer/unibox/threads/not-a-uuid', { token: a.session })).status).toBe(422);
    expect((await ctx.request('GET', `/outreach/sequencer/unibox/threads/${MISSING_ID}`, { token: a.session })).status).toBe(404);
    expect(
      (await ctx.request('POST', `/outreach/sequencer/unibox/threads/${MISSING_ID}/read`, { token: a.session, body: {} })).status,
    ).toBe(404);
  });
});

describe('inbound-mail webhook', () => {
  const raw = 'From: someone@example.org\r\nTo: x@example.test\r\nSubject: hi\r\nMessage-ID: <m1@example.org>\r\n\r\nhello\r\n';
  it('refuses a missing or wrong signature (400) and ignores verified mail that answers no thread (202)', async () => {
    const unsigned = await ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822' } });
    expect(unsigned.status).toBe(400);
    const wrong = signWebhook(`whsec_${crypto.randomBytes(24).toString('base64')}`, 'msg_1', raw);
    expect(
      (await ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822', ...wrong } }))
        .status,
    ).toBe(400);
    const signed = signWebhook(SECRET, 'msg_2', raw);
    const res = await ctx.request('POST', '/outreach/inbound-mail', {
      rawBody: raw,
      headers: { 'Content-Type': 'message/rfc822', ...signed },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ matched: false, thread_id: null, kind: null, stored: false });
  });
});
