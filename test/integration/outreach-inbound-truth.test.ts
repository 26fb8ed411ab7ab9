import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../platform/adapters/meetings/webhooks';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { orgUuid } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp-server';

// Received mail read truthfully, end to end (the real sender workflow, a real SMTP server, the signed
// inbound webhook): a person's answer whose subject only repeats ours is a reply (it stops the
// sequence and notifies), a header-less French out-of-office is one, a follow-up answers our own step
// and never a delivery report, and a bounce lands on the step it returns.

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: { org: string; session: string; user: string; email: string; orgId: string };

const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({
    worker: true,
    env: { OUTREACH_INBOUND_SECRETS: SECRET, OUTREACH_POLL_INTERVAL_MS: '300' },
  });
  const user = `user-${crypto.randomUUID()}`;
  const org = `org-${crypto.randomUUID()}`;
  const email = `${user}@owners.test`;
  const session = await ctx.session({
    sub: user,
    org_id: org,
    org_ids: [org],
    permissions: ['api:read', 'api:manage', 'outreach:manage'],
    email,
  });
  t = { org, session, user, email, orgId: await orgUuid(ctx, { session }) };
}, 60_000);
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

/** A three-step sequence (a day between steps) to a new contact; what it sent first. */
async function sendOne(subject: string, body = 'Hi Ada,\nwould a short call about your team make sense next week?\nSam') {
  const mailbox = await insertSmtpMailbox(ctx, t.orgId, smtp.port);
  const email = uniqueEmail('ada');
  const contact = await createContact(ctx, t, { first_name: 'Ada', last_name: 'Lovelace', email });
  const seq = await sequence({
    name: `Seq ${subject}`,
    steps: [
      { delay_days: 0, subject, body },
      { delay_days: 1, body: 'Just following up.' },
      { delay_days: 1, body: 'Last note.' },
    ],
    mailbox_ids: [mailbox],
  });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [mail] = await smtp.waitForMail(email, 1);
  // Recorded once the server has taken it.
  await expect.poll(async () => (await enrollmentOf(seq.id, enrollment!.id)).next_step, { timeout: 30_000 }).toBe(1);
  return { seq, enrollment: enrollment!, email, mail: mail!, mailbox };
}

function postInbound(raw: string) {
  const headers = signWebhook(SECRET, `msg_${crypto.randomUUID()}`, raw);
  return ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822', ...headers } });
}

/** A plain message (no automatic-answer header) from `from` answering `sent`. */
function answer(sent: ReceivedMail, from: string, subject: string, text: string) {
  const id = sent.mail.messageId!;
  return [
    `From: ${from}`,
    `To: ${sent.mail.from!.value[0]!.address}`,
    `Subject: ${subject}`,
    `Message-ID: <a-${crypto.randomUUID()}@prospects.test>`,
    `In-Reply-To: ${id}`,
    `References: ${id}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    text,
    '',
  ].join('\r\n');
}

/** The header block of a received message, as a server returns it with a report. */
const headersOf = (mail: ReceivedMail) => mail.raw.toString('utf8').split(/\r?\n\r?\n/)[0]!;

/**
 * A delivery report about the message whose headers are `returned`, as Postfix writes one; the original
 * comes back as `message/rfc822` (headers and a line of body) or `text/rfc822-headers`.
 */
function dsn(
  from: string,
  to: string,
  returned: string,
  fields: { action: string; status: string; diagnostic: string },
  part: 'message/rfc822' | 'text/rfc822-headers' = 'text/rfc822-headers',
) {
  const delayed = fields.action === 'delayed';
  return [
    'From: MAILER-DAEMON@mx.prospects.test (Mail Delivery System)',
    `To: ${from}`,
    `Subject: ${delayed ? 'Delayed Mail (still being retried)' : 'Undelivered Mail Returned to Sender'}`,
    `Message-ID: <dsn-${crypto.randomUUID()}@mx.prospects.test>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B0UND"',
    '',
    '--B0UND',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.prospects.test.',
    '',
    '--B0UND',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.prospects.test',
    '',
    `Final-Recipient: rfc822; ${to}`,
    `Action: ${fields.action}`,
    `Status: ${fields.status}`,
    `Diagnostic-Code: smtp; ${fields.diagnostic}`,
    '',
    '--B0UND',
    `Content-Type: ${part}`,
    '',
    returned,
    ...(part === 'message/rfc822' ? ['', 'Just following up.'] : []),
    '',
    '--B0UND--',
    '',
  ].join('\r\n');
}

const DELAYED = { action: 'delayed', status: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' };
const sentRows = (enrollmentId: string) =>
  ctx.deps.sql<{ step: number; message_id: string; subject: string; soft_bounces: number; delivery_status: string | null }[]>`
    SELECT step, message_id, subject, soft_bounces, delivery_status FROM outreach_messages
    WHERE enrollment_id = ${enrollmentId} AND direction = 'outbound' ORDER BY step`;
const dueNow = (id: string) => ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now() WHERE id = ${id}`;

const eventsOf = (threadId: string) =>
  ctx.deps.sql<{ event_type: string; payload: any }[]>`SELECT event_type, payload FROM notification_outbox WHERE entity_id = ${threadId}`;

describe('a person answering is a reply, whatever our subject says', () => {
  for (const subject of ['Absence management for Acme', 'Plans while on holiday?', 'Fuera de la oficina: ideas']) {
    it(`"Re: ${subject}" stops the sequence, notifies, and no follow-up goes out`, async () => {
      const { seq, enrollment, email, mail } = await sendOne(subject);
      const res = await postInbound(answer(mail, `Ada Lovelace <${email}>`, `Re: ${subject}`, 'Sounds interesting, tell me more.'));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ matched: true, kind: 'reply', stored: true });
      // Stopped with nothing left due: no follow-up goes out.
      expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({
        status: 'replied',
        next_send_at: null,
        paused_until: null,
        pause_reason: null,
      });
      expect((await eventsOf(res.body.thread_id)).map((e) => e.event_type)).toEqual(['outreach.reply_received']);
      const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${res.body.thread_id}`, { token: t.session })).body;
      expect(thread.needs_reply).toBe(true);
      expect(thread.messages.map((m: { classification: string | null }) => m.classification)).toEqual([null, 'interested']);
    });
  }

  it('a person announcing an absence above a quote of our mail is a reply too', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Quick question');
    const text = [
      "I'm on holiday until Monday, but yes, let's talk then.",
      '',
      'On Mon, 1 Dec 2026 at 10:00, Sam <sam@outreach.test> wrote:',
      '> Hi Ada,',
      '> would a short call about your team make sense next week?',
      '> Sam',
    ].join('\n');
    const res = await postInbound(answer(mail, email, 'Re: Quick question', text));
    expect(res.body).toMatchObject({ kind: 'reply', stored: true });
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('replied');
  });
});

describe('a header-less out-of-office is read from its body', () => {
  it('French "je suis actuellement en congés, de retour le …" pauses until the day after and tells nobody', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Bonjour');
    const back = new Date(Date.now() + 9 * 86_400_000);
    const months = [
      'janvier',
      'février',
      'mars',
      'avril',
      'mai',
      'juin',
      'juillet',
      'août',
      'septembre',
      'octobre',
      'novembre',
      'décembre',
    ];
    const text = `Bonjour,\n\nje suis actuellement en congés, de retour le ${back.getUTCDate()} ${months[back.getUTCMonth()]}.\n\nCordialement,\nAda`;
    const res = await postInbound(answer(mail, email, 'RE: Bonjour', text));
    expect(res.body).toMatchObject({ kind: 'auto_reply', stored: true });
    const resumeAt = new Date(Date.UTC(back.getUTCFullYear(), back.getUTCMonth(), back.getUTCDate() + 1)).toISOString();
    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({
      status: 'active',
      next_send_at: resumeAt,
      paused_until: resumeAt,
      pause_reason: 'out_of_office',
    });
    expect(await eventsOf(res.body.thread_id)).toEqual([]);
  });
});

describe('a follow-up answers our own step, never a delivery report', () => {
  it('after a 4.x.x report the next step threads on the step the recipient saw; its own report lands on it', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Hello');
    const from = mail.mail.from!.value[0]!.address!;
    const delayed = await postInbound(dsn(from, email, headersOf(mail), DELAYED));
    expect(delayed.body).toMatchObject({ kind: 'soft_bounce', stored: true });

    await dueNow(enrollment.id);
    const [, second] = await smtp.waitForMail(email, 2, 30_000);
    // Threaded on step 1 (what the recipient has), not on the mailer-daemon's report.
    expect(second!.mail.inReplyTo).toBe(mail.mail.messageId);
    expect([second!.mail.references].flat()).toEqual([mail.mail.messageId]);
    await expect.poll(async () => (await enrollmentOf(seq.id, enrollment.id)).next_step, { timeout: 30_000 }).toBe(2);
    const stored = await sentRows(enrollment.id);
    expect(stored[1]!.message_id).toBe(second!.mail.messageId);

    // Two more delays, now of step 2 (its headers returned as received): recorded on step 2; the third
    // report of the address suppresses it, and the notice names our step, not "Delayed Mail".
    for (let i = 0; i < 2; i++) {
      const res = await postInbound(dsn(from, email, headersOf(second!), DELAYED));
      expect(res.body).toMatchObject({ kind: 'soft_bounce', stored: true });
    }
    const after = await sentRows(enrollment.id);
    expect(after.map((r) => r.soft_bounces)).toEqual([1, 2]);
    expect(after[1]!.delivery_status).toBe('4.2.2');
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('bounced');
    const threadId = (await enrollmentOf(seq.id, enrollment.id)).thread_id;
    const [event] = await eventsOf(threadId);
    expect(event).toMatchObject({ event_type: 'outreach.message_bounced' });
    expect(event!.payload.subject).toBe('Re: Hello');
    expect(event!.payload.subject).not.toMatch(/Delayed Mail/);
  });
});

describe('a bounce lands on the step it returns', () => {
  for (const part of ['message/rfc822', 'text/rfc822-headers'] as const) {
    it(`a 5.1.1 of step 2 (${part}, In-Reply-To step 1 before its own Message-ID) is step 2's`, async () => {
      const { seq, enrollment, email, mail } = await sendOne('Hello');
      await dueNow(enrollment.id);
      const [, second] = await smtp.waitForMail(email, 2, 30_000);
      await expect.poll(async () => (await enrollmentOf(seq.id, enrollment.id)).next_step, { timeout: 30_000 }).toBe(2);
      const returned = [
        `From: ${second!.mail.from!.text}`,
        `To: ${email}`,
        'Subject: Re: Hello',
        `In-Reply-To: ${mail.mail.messageId}`,
        `References: ${mail.mail.messageId}`,
        `Message-ID: ${second!.mail.messageId}`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
      ].join('\r\n');
      const from = mail.mail.from!.value[0]!.address!;
      const res = await postInbound(
        dsn(from, email, returned, { action: 'failed', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' }, part),
      );
      expect(res.body).toMatchObject({ kind: 'bounce', stored: true });
      const rows = await sentRows(enrollment.id);
      expect(rows.map((r) => r.delivery_status)).toEqual([null, '5.1.1']);
      const [event] = await eventsOf(res.body.thread_id);
      expect(event!.payload.subject).toBe('Re: Hello');
      const analytics = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session });
      expect(analytics.body.steps.map((s: { bounced: number }) => s.bounced)).toEqual([0, 1, 0]);
    });
  }
});
