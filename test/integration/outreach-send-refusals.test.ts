import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { SOFT_BOUNCE_LIMIT } from '../../domain/outreach/dsn';
import { SEND_ATTEMPTS, retryDelayMs } from '../../domain/outreach/smtp-failures';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { orgUuid } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

// What the server says when a step is sent, on the real sender workflow and a real SMTP server that
// refuses some recipients: a 554 is a bounce (the owner hears of it, the thread shows the server's
// words, analytics count it), a 4xx is tried again a bounded number of times, and 4xx refusals of the
// recipient count toward the soft-bounce rule.

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: { org: string; session: string; user: string; email: string; orgId: string };

const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  smtp = await startSmtpServer({
    refuse: (address) =>
      address.startsWith('relay-')
        ? { code: 554, message: '5.7.1 Relay access denied' }
        : address.startsWith('full-')
          ? { code: 452, message: '4.2.2 Mailbox full' }
          : null,
    refuseData: (to) => (to.some((a) => a.startsWith('spam-')) ? { code: 554, message: '5.7.1 Message rejected as spam' } : null),
  });
  ctx = await createTestContext({ worker: true, env: { OUTREACH_POLL_INTERVAL_MS: '300' } });
  const user = `user-${crypto.randomUUID()}`;
  const org = `org-${crypto.randomUUID()}`;
  const session = await ctx.session({
    sub: user,
    org_id: org,
    org_ids: [org],
    permissions: ['api:read', 'api:manage', 'outreach:manage'],
    email: `${user}@owners.test`,
  });
  t = { org, session, user, email: `${user}@owners.test`, orgId: await orgUuid(ctx, { session }) };
}, 60_000);
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

/** A two-step sequence to a new contact at `email`, through a mailbox on `port` (the test server's by default). */
async function start(email: string, port = smtp.port) {
  const mailbox = await insertSmtpMailbox(ctx, t.orgId, port);
  const contact = await createContact(ctx, t, { first_name: 'Ada', last_name: 'Lovelace', email });
  const seq = await sequence({
    name: `Q4 ${email.split('@')[0]}`,
    steps: [
      { delay_days: 0, subject: 'Hello', body: 'Hi' },
      { delay_days: 2, body: 'Again' },
    ],
    mailbox_ids: [mailbox],
  });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [box] = await ctx.deps.sql<{ email_address: string }[]>`SELECT email_address FROM outreach_mailboxes WHERE id = ${mailbox}`;
  return { seq, enrollment: enrollment!, contact, mailbox, mailboxAddress: box!.email_address };
}

const attempts = (enrollmentId: string) =>
  ctx.deps.sql<{ status: string; error: string | null; soft_bounces: number; delivery_status: string | null }[]>`
    SELECT status, error, soft_bounces, delivery_status FROM outreach_messages
    WHERE enrollment_id = ${enrollmentId} AND direction = 'outbound' ORDER BY created_at`;
const eventsOf = (threadId: string) =>
  ctx.deps.sql<{ event_type: string; payload: any }[]>`SELECT event_type, payload FROM notification_outbox WHERE entity_id = ${threadId}`;
const suppressionOf = (email: string) =>
  ctx.deps.sql<{ reason: string; note: string | null }[]>`
    SELECT reason, note FROM outreach_suppressions WHERE org_id = ${t.orgId} AND lower(email) = lower(${email})`;
const threadOf = (threadId: string) => ctx.request('GET', `/outreach/sequencer/unibox/threads/${threadId}`, { token: t.session });

/** Waits for the n-th refused attempt to be recorded, checks the retry's wait, and makes the step due again. */
async function nextAttempt(seqId: string, enrollmentId: string, n: number) {
  await waitFor(async () => (await attempts(enrollmentId)).length >= n, 30_000, `attempt ${n}`);
  const read = await waitFor(
    async () => {
      const e = await enrollmentOf(seqId, enrollmentId);
      return e.status !== 'active' || (e.next_send_at && new Date(e.next_send_at).getTime() > Date.now() + 60_000) ? e : false;
    },
    30_000,
    `the outcome of attempt ${n}`,
  );
  return read;
}

describe('a 554 at send time is a bounce the owner hears of', () => {
  for (const [stage, prefix, words] of [
    ['after DATA', 'spam', '554 5.7.1 Message rejected as spam'],
    ['at RCPT TO', 'relay', '554 5.7.1 Relay access denied'],
  ] as const) {
    it(`${stage}: enrollment bounced, address suppressed, the server's words on the thread and in the notice, counted in analytics`, async () => {
      const email = `${prefix}-${crypto.randomBytes(4).toString('hex')}@prospects.test`;
      const { seq, enrollment, contact, mailbox, mailboxAddress } = await start(email);
      const read = await waitFor(async () => {
        const e = await enrollmentOf(seq.id, enrollment.id);
        return e.status !== 'active' && e;
      });
      expect(read).toMatchObject({ status: 'bounced', next_send_at: null });
      expect(smtp.to(email)).toEqual([]);
      expect(await suppressionOf(email)).toEqual([{ reason: 'bounce', note: words }]);

      const thread = (await threadOf(read.thread_id)).body;
      expect(thread.messages).toEqual([expect.objectContaining({ status: 'failed', error: words, step: 0 })]);

      const [event] = await eventsOf(read.thread_id);
      expect(event).toMatchObject({
        event_type: 'outreach.message_bounced',
        payload: expect.objectContaining({
          contact_id: contact.id,
          contact_name: 'Ada Lovelace',
          contact_email: email,
          sequence_id: seq.id,
          sequence_name: `Q4 ${prefix}-${email.split('@')[0]!.split('-')[1]}`,
          mailbox_id: mailbox,
          mailbox_address: mailboxAddress,
          stage: 'smtp',
          status: '5.7.1',
          diagnostic: words,
          enrollment_stopped: true,
          suppressed: true,
        }),
      });

      const analytics = (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session })).body;
      expect(analytics).toMatchObject({ sent: 1, bounced: 1, delivered: 0 });
    });
  }
});

describe('a 4xx at send time is tried again, a bounded number of times', () => {
  it(`a 452 of the recipient counts as a soft bounce: retried with a growing wait, the ${SOFT_BOUNCE_LIMIT}rd suppresses and notifies`, async () => {
    const email = `full-${crypto.randomBytes(4).toString('hex')}@prospects.test`;
    const { seq, enrollment } = await start(email);
    for (let n = 1; n < SOFT_BOUNCE_LIMIT; n++) {
      const read = await nextAttempt(seq.id, enrollment.id, n);
      expect(read.status).toBe('active');
      const wait = new Date(read.next_send_at).getTime() - Date.now();
      expect(wait).toBeGreaterThan(retryDelayMs(n) - 60_000);
      expect(wait).toBeLessThanOrEqual(retryDelayMs(n));
      expect(await suppressionOf(email)).toEqual([]);
      await ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now() WHERE id = ${enrollment.id}`;
    }
    const read = await waitFor(async () => {
      const e = await enrollmentOf(seq.id, enrollment.id);
      return e.status !== 'active' && e;
    });
    expect(read.status).toBe('bounced');
    const rows = await attempts(enrollment.id);
    expect(rows).toHaveLength(SOFT_BOUNCE_LIMIT);
    for (const row of rows)
      expect(row).toMatchObject({ status: 'failed', error: '452 4.2.2 Mailbox full', soft_bounces: 1, delivery_status: '4.2.2' });
    const [entry] = await suppressionOf(email);
    expect(entry).toMatchObject({ reason: 'soft_bounce' });
    expect(entry!.note).toBe(`${SOFT_BOUNCE_LIMIT} soft bounces within 30 days; last: 452 4.2.2 Mailbox full`);
    const events = await eventsOf(read.thread_id);
    expect(events).toEqual([
      {
        event_type: 'outreach.message_bounced',
        payload: expect.objectContaining({
          contact_email: email,
          stage: 'smtp',
          status: '4.2.2',
          suppressed: true,
          enrollment_stopped: true,
        }),
      },
    ]);
    // The thread shows each refusal with the server's words; analytics count the step once.
    const thread = (await threadOf(read.thread_id)).body;
    expect(thread.messages.map((m: { error: string | null }) => m.error)).toEqual(Array(SOFT_BOUNCE_LIMIT).fill('452 4.2.2 Mailbox full'));
    const analytics = (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session })).body;
    expect(analytics).toMatchObject({ sent: 1, bounced: 1 });
  });

  it(`a server that cannot be reached is tried ${SEND_ATTEMPTS} times, then the step fails and the owner hears why`, async () => {
    const email = uniqueEmail('ada');
    const closed = await freePort();
    const { seq, enrollment, mailboxAddress } = await start(email, closed);
    for (let n = 1; n < SEND_ATTEMPTS; n++) {
      const read = await nextAttempt(seq.id, enrollment.id, n);
      expect(read.status).toBe('active');
      expect(new Date(read.next_send_at).getTime() - Date.now()).toBeGreaterThan(retryDelayMs(n) - 60_000);
      await ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now() WHERE id = ${enrollment.id}`;
    }
    const read = await waitFor(async () => {
      const e = await enrollmentOf(seq.id, enrollment.id);
      return e.status !== 'active' && e;
    });
    expect(read).toMatchObject({ status: 'failed', next_send_at: null });
    expect(await attempts(enrollment.id)).toHaveLength(SEND_ATTEMPTS);
    // Not the recipient's fault: the address stays mailable.
    expect(await suppressionOf(email)).toEqual([]);
    const [event] = await eventsOf(read.thread_id);
    expect(event!.payload).toMatchObject({ contact_email: email, mailbox_address: mailboxAddress, stage: 'smtp', suppressed: false });
    expect(event!.payload.diagnostic).toBe(
      `No connection to the mailbox's mail server (ECONNREFUSED) (refused ${SEND_ATTEMPTS} times; not tried again)`,
    );
  });
});
