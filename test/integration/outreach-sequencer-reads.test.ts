import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

// What the sequencer's reads say, on the real sender workflow: an enrollment held by a closed sending
// window shows the window's opening and why, and a reply from the unibox takes its text as `body`, as
// sequence steps do (or as `text`, its earlier name).

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: Tenant & { orgId: string };

const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({ worker: true, env: { OUTREACH_POLL_INTERVAL_MS: '300' } });
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  t = { ...x, orgId: await orgUuid(ctx, x) };
});
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

const isoWeekday = (d: Date) => ((d.getUTCDay() + 6) % 7) + 1;

describe("an enrollment's next send", () => {
  it("held by a closed sending window: next_send_at is the window's next opening and next_send_reason says why", async () => {
    // Closed all of today (UTC), open from 09:00 every other day.
    const now = new Date();
    const today = isoWeekday(now);
    const mailbox = await insertSmtpMailbox(ctx, t.orgId, smtp.port, {
      window_start: '09:00',
      window_end: '17:00',
      window_days: [1, 2, 3, 4, 5, 6, 7].filter((d) => d !== today),
      timezone: 'UTC',
    });
    const email = uniqueEmail('ada');
    const contact = await createContact(ctx, t, { first_name: 'Ada', email });
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    // Before activation the step is due now; the sequence is what waits.
    expect(enrollment).toMatchObject({ next_send_reason: 'sequence_not_active' });
    await activate(seq.id);

    const opening = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 9)).toISOString();
    await expect
      .poll(async () => {
        const read = await enrollmentOf(seq.id, enrollment!.id);
        return { status: read.status, next_send_at: read.next_send_at, next_send_reason: read.next_send_reason };
      })
      .toEqual({ status: 'active', next_send_at: opening, next_send_reason: 'sending_window' });
    const listed = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/enrollments`, { token: t.session });
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: enrollment!.id, next_send_at: opening, next_send_reason: 'sending_window' }),
    ]);
    expect(smtp.to(email)).toEqual([]);

    // Opened by hand: the step goes out and, the sequence done, no reason is left.
    await ctx.deps
      .sql`UPDATE outreach_mailboxes SET window_days = ${[1, 2, 3, 4, 5, 6, 7]}, window_start = '00:00', window_end = '24:00' WHERE id = ${mailbox}`;
    // The sender looks again within OUTREACH_POLL_INTERVAL_MS.
    await smtp.waitForMail(email, 1, 30_000);
    await expect.poll(async () => (await enrollmentOf(seq.id, enrollment!.id)).status, { timeout: 30_000 }).toBe('completed');
    expect(await enrollmentOf(seq.id, enrollment!.id)).toMatchObject({ next_send_at: null, next_send_reason: null });

    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const reason = doc.components.schemas.OutreachEnrollment.properties.next_send_reason;
    expect(reason.enum).toEqual(expect.arrayContaining(['sending_window', 'daily_limit', 'send_gap', 'due', 'scheduled']));
  });
});

describe('a reply from the unibox', () => {
  /** A thread with one step sent to a new contact. */
  async function thread() {
    const mailbox = await insertSmtpMailbox(ctx, t.orgId, smtp.port);
    const email = uniqueEmail('grace');
    const contact = await createContact(ctx, t, { first_name: 'Grace', email });
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    await smtp.waitForMail(email, 1);
    const threadId = await waitFor(
      async () => (await enrollmentOf(seq.id, enrollment!.id)).thread_id as string | null,
      30_000,
      'the thread',
    );
    return { email, path: `/outreach/sequencer/unibox/threads/${threadId}/reply` };
  }

  it('takes body (and body_html) as sequence steps do, or text (and html); exactly one of body and text', async () => {
    const { email, path } = await thread();
    const sent = await ctx.request('POST', path, {
      token: t.session,
      body: { body: 'Following up by hand', body_html: '<p>Following up</p>' },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({ kind: 'reply', status: 'sent', text: 'Following up by hand', error: null });
    const [, mail] = await smtp.waitForMail(email, 2);
    expect(mail!.mail.text?.trim()).toBe('Following up by hand');
    expect(mail!.mail.html).toContain('<p>Following up</p>');

    const old = await ctx.request('POST', path, { token: t.session, body: { text: 'Under the earlier name' } });
    expect(old.status, old.text).toBe(200);
    expect(old.body.text).toBe('Under the earlier name');

    for (const bad of [{}, { body: 'a', text: 'b' }, { body: 'a', html: '<p>a</p>', body_html: '<p>b</p>' }, { body: '' }]) {
      const res = await ctx.request('POST', path, { token: t.session, body: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect(smtp.to(email)).toHaveLength(3);

    // Read-only keys cannot reply; another organization's thread is not found.
    const readOnly = await createOrgKey(ctx, t.session, { scopes: ['outreach:read'] });
    expect((await ctx.request('POST', path, { token: readOnly, body: { body: 'x' } })).status).toBe(403);
    const other = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
    expect((await ctx.request('POST', path, { token: other.session, body: { body: 'x' } })).status).toBe(404);

    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const schema = doc.components.schemas.OutreachReply;
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['body', 'body_html', 'text', 'html']));
    // One object for generators; the rule as the bodies it refuses: neither or both of body and text, two HTML texts.
    expect(schema.oneOf).toBeUndefined();
    expect(schema.not.anyOf).toEqual([
      { properties: { body: { not: {} }, text: { not: {} } } },
      { required: ['body', 'text'], properties: { body: {}, text: {} } },
      { properties: { body_html: { type: 'string' }, html: { type: 'string' } }, required: ['body_html', 'html'] },
    ]);
  });
});
