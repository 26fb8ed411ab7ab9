import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOFT_BOUNCE_LIMIT } from '../../domain/outreach/dsn';
import { signWebhook } from '../../platform/adapters/meetings/webhooks';
import { relayPending } from '../../services/notifications/relay';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { orgUuid } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp-server';

// Received mail that tells the truth, on the real sender workflow, a real SMTP server and the signed
// inbound webhook: a temporary failure (4.x.x) is recorded and the sequence goes on, until repeated
// ones suppress the address as soft_bounce; a permanent one suppresses at once; an out-of-office answer
// in another language pauses the enrollment until its return date and says so; and each notice names the
// contact, the sequence and the mailbox, with a link to the thread, in the feed and in the email.

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: { org: string; session: string; user: string; email: string; orgId: string };

const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({
    worker: true,
    env: {
      OUTREACH_INBOUND_SECRETS: SECRET,
      OUTREACH_POLL_INTERVAL_MS: '300',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'CRM <notify@crm.test>',
    },
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

/** A two-step sequence (the second step three days later) to a new contact; what it sent first. */
async function sendOne(name = 'Ada') {
  const mailbox = await insertSmtpMailbox(ctx, t.orgId, smtp.port);
  const email = uniqueEmail(name.toLowerCase());
  const contact = await createContact(ctx, t, { first_name: name, last_name: 'Lovelace', email });
  const seq = await sequence({
    name: `Founders ${name}`,
    steps: [
      { delay_days: 0, subject: 'Hello', body: 'Hi' },
      { delay_days: 3, body: 'Again' },
    ],
    mailbox_ids: [mailbox],
  });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [mail] = await smtp.waitForMail(email, 1);
  const [box] = await ctx.deps.sql<{ email_address: string }[]>`SELECT email_address FROM outreach_mailboxes WHERE id = ${mailbox}`;
  return { seq, enrollment: enrollment!, email, mail: mail!, mailboxAddress: box!.email_address };
}

function postInbound(raw: string) {
  const headers = signWebhook(SECRET, `msg_${crypto.randomUUID()}`, raw);
  return ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822', ...headers } });
}

/** A delivery report about `sent`, as Postfix writes one. */
function dsn(sent: ReceivedMail, to: string, fields: { action: string; status: string; diagnostic: string }) {
  return [
    'From: MAILER-DAEMON@mx.prospects.test (Mail Delivery System)',
    `To: ${sent.mail.from!.value[0]!.address}`,
    `Subject: ${fields.action === 'delayed' ? 'Delayed Mail (still being retried)' : 'Undelivered Mail Returned to Sender'}`,
    `Message-ID: <dsn-${crypto.randomUUID()}@mx.prospects.test>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;',
    '\tboundary="B0UND"',
    '',
    '--B0UND',
    'Content-Description: Notification',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.prospects.test.',
    '',
    '--B0UND',
    'Content-Description: Delivery report',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.prospects.test',
    'Arrival-Date: Mon,  3 Nov 2026 10:00:00 +0000 (UTC)',
    '',
    `Final-Recipient: rfc822; ${to}`,
    `Original-Recipient: rfc822;${to}`,
    `Action: ${fields.action}`,
    `Status: ${fields.status}`,
    'Remote-MTA: dns; in.prospects.test',
    `Diagnostic-Code: smtp; ${fields.diagnostic}`,
    '',
    '--B0UND',
    'Content-Description: Undelivered Message Headers',
    'Content-Type: text/rfc822-headers',
    '',
    `Message-ID: ${sent.mail.messageId}`,
    'Subject: Hello',
    '',
    '--B0UND--',
    '',
  ].join('\r\n');
}

const DELAYED = { action: 'delayed', status: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' };

/** A message from `from` answering `sent`, with extra headers. */
function answer(sent: ReceivedMail, from: string, subject: string, text: string, extra: string[] = []) {
  const id = sent.mail.messageId!;
  return [
    `From: ${from}`,
    `To: ${sent.mail.from!.value[0]!.address}`,
    `Subject: ${subject}`,
    `Message-ID: <a-${crypto.randomUUID()}@prospects.test>`,
    `In-Reply-To: ${id}`,
    `References: ${id}`,
    ...extra,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    text,
    '',
  ].join('\r\n');
}

const suppressionOf = (email: string) =>
  ctx.deps.sql<{ reason: string; note: string | null }[]>`
    SELECT reason, note FROM outreach_suppressions WHERE org_id = ${t.orgId} AND lower(email) = lower(${email})`;
const eventsOf = (threadId: string) =>
  ctx.deps.sql<{ event_type: string; payload: any }[]>`SELECT event_type, payload FROM notification_outbox WHERE entity_id = ${threadId}`;
const sentOf = (enrollmentId: string) =>
  ctx.deps.sql<
    { soft_bounces: number; delivery_status: string | null; delivery_action: string | null; delivery_diagnostic: string | null }[]
  >`
    SELECT soft_bounces, delivery_status, delivery_action, delivery_diagnostic FROM outreach_messages
    WHERE enrollment_id = ${enrollmentId} AND direction = 'outbound' ORDER BY created_at`;

/** The enrollment's next step becomes due now, as when its time comes. */
const dueNow = (id: string) => ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now() WHERE id = ${id}`;

describe('delivery reports', () => {
  it('a delayed 4.2.2 is a soft bounce: recorded on the message, not suppressed, the sequence goes on', async () => {
    const { seq, enrollment, email, mail } = await sendOne();
    const res = await postInbound(dsn(mail, email, DELAYED));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ matched: true, kind: 'soft_bounce', stored: true });

    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'active' });
    expect(await suppressionOf(email)).toEqual([]);
    expect(await sentOf(enrollment.id)).toEqual([
      { soft_bounces: 1, delivery_status: '4.2.2', delivery_action: 'delayed', delivery_diagnostic: '452 4.2.2 Mailbox full' },
    ]);
    expect(await eventsOf(res.body.thread_id)).toEqual([]);
    const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${res.body.thread_id}`, { token: t.session })).body;
    expect(thread.needs_reply).toBe(false);
    expect(thread.messages.map((m: { classification: string | null }) => m.classification)).toEqual([null, 'soft_bounce']);

    // The next step still goes out.
    await dueNow(enrollment.id);
    await smtp.waitForMail(email, 2, 30_000);
  });

  it(`${SOFT_BOUNCE_LIMIT} soft bounces of one address suppress it as soft_bounce, stop the enrollment and notify`, async () => {
    const { seq, enrollment, email, mail } = await sendOne('Grace');
    for (let i = 1; i < SOFT_BOUNCE_LIMIT; i++) {
      expect((await postInbound(dsn(mail, email, DELAYED))).body).toMatchObject({ kind: 'soft_bounce', stored: true });
      expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('active');
      expect(await suppressionOf(email)).toEqual([]);
    }
    const last = await postInbound(dsn(mail, email, { ...DELAYED, status: '4.2.2', diagnostic: '452 4.2.2 Quota exceeded' }));
    expect(last.body).toMatchObject({ kind: 'soft_bounce', stored: true });
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('bounced');
    const [entry] = await suppressionOf(email);
    expect(entry).toMatchObject({ reason: 'soft_bounce' });
    expect(entry!.note).toContain(`${SOFT_BOUNCE_LIMIT} soft bounces within 30 days`);
    expect(entry!.note).toContain('4.2.2 Quota exceeded');
    expect((await sentOf(enrollment.id))[0]!.soft_bounces).toBe(SOFT_BOUNCE_LIMIT);
    const listed = await ctx.request('GET', '/outreach/suppressions?reason=soft_bounce', { token: t.session });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { email: string }) => s.email)).toContain(email);
    const events = await eventsOf(last.body.thread_id);
    expect(events).toEqual([
      {
        event_type: 'outreach.message_bounced',
        payload: expect.objectContaining({ contact_email: email, status: '4.2.2', suppressed: true, stage: 'report' }),
      },
    ]);
  });

  it('a failed 5.1.1 suppresses at once and stops the enrollment; its notice names contact, sequence and mailbox', async () => {
    const { seq, enrollment, email, mail, mailboxAddress } = await sendOne('Mary');
    const res = await postInbound(dsn(mail, email, { action: 'failed', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' }));
    expect(res.body).toMatchObject({ kind: 'bounce', stored: true });
    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'bounced', next_send_at: null });
    expect(await suppressionOf(email)).toEqual([{ reason: 'bounce', note: 'bounce report: 550 5.1.1 User unknown' }]);
    expect(await sentOf(enrollment.id)).toEqual([
      { soft_bounces: 0, delivery_status: '5.1.1', delivery_action: 'failed', delivery_diagnostic: '550 5.1.1 User unknown' },
    ]);
    const [event] = await eventsOf(res.body.thread_id);
    expect(event!.payload).toMatchObject({
      contact_name: 'Mary Lovelace',
      contact_email: email,
      sequence_id: seq.id,
      sequence_name: 'Founders Mary',
      mailbox_address: mailboxAddress,
      subject: 'Hello',
      status: '5.1.1',
      enrollment_stopped: true,
      suppressed: true,
    });
  });

  it('an action failed with a 4.x.x (the retries ran out) is permanent', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Alan');
    const res = await postInbound(dsn(mail, email, { action: 'failed', status: '4.4.7', diagnostic: '421 4.4.7 Message expired' }));
    expect(res.body).toMatchObject({ kind: 'bounce' });
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('bounced');
    expect((await suppressionOf(email))[0]).toMatchObject({ reason: 'bounce' });
  });
});

describe('automatic answers', () => {
  it("an Exchange out-of-office in German pauses until the day after its return date, says why, doesn't notify, then resumes", async () => {
    const { seq, enrollment, email, mail } = await sendOne('Lise');
    const back = new Date(Date.now() + 10 * 86_400_000);
    const dd = String(back.getUTCDate()).padStart(2, '0');
    const mm = String(back.getUTCMonth() + 1).padStart(2, '0');
    const res = await postInbound(
      answer(
        mail,
        `Lise Lovelace <${email}>`,
        'Automatische Antwort: Hello',
        `Vielen Dank für Ihre Nachricht.\nIch bin bis zum ${dd}.${mm}.${back.getUTCFullYear()} nicht im Büro und habe keinen Zugriff auf meine E-Mails.`,
        [
          'Thread-Topic: Hello',
          'Auto-Submitted: auto-generated',
          'X-Auto-Response-Suppress: All',
          `X-MS-Exchange-Inbox-Rules-Loop: ${email}`,
          'X-MS-Exchange-Generated-Message-Source: Mailbox Rules Agent',
          'Content-Language: de-DE',
        ],
      ),
    );
    expect(res.body).toMatchObject({ matched: true, kind: 'auto_reply', stored: true });
    const resumeAt = new Date(Date.UTC(back.getUTCFullYear(), back.getUTCMonth(), back.getUTCDate() + 1)).toISOString();
    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({
      status: 'active',
      next_send_at: resumeAt,
      paused_until: resumeAt,
      pause_reason: 'out_of_office',
    });
    // Not a reply: no notice, no reply on the contact, nothing waiting for an answer.
    expect(await eventsOf(res.body.thread_id)).toEqual([]);
    const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${res.body.thread_id}`, { token: t.session })).body;
    expect(thread.needs_reply).toBe(false);
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    expect(Object.keys(doc.components.schemas.OutreachEnrollment.properties)).toEqual(
      expect.arrayContaining(['paused_until', 'pause_reason']),
    );

    // Its time comes: the next step goes out and the enrollment no longer says it waits.
    await ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now(), paused_until = now() WHERE id = ${enrollment.id}`;
    await smtp.waitForMail(email, 2, 30_000);
    // The mail reaches the SMTP server before the step's transaction records it: wait for that commit.
    await expect.poll(async () => (await enrollmentOf(seq.id, enrollment.id)).status, { timeout: 30_000 }).toBe('completed');
    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'completed', paused_until: null, pause_reason: null });
  });

  it('a Gmail vacation answer with a plain subject pauses for the default days as auto_reply', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Emmy');
    const before = Date.now();
    const res = await postInbound(
      answer(mail, email, 'Re: Hello', 'Thanks for your note, I will read it when I can.', [
        'Auto-Submitted: auto-replied',
        'Precedence: bulk',
        'X-Autoreply: yes',
      ]),
    );
    expect(res.body).toMatchObject({ kind: 'auto_reply', stored: true });
    const read = await enrollmentOf(seq.id, enrollment.id);
    expect(read).toMatchObject({ status: 'active', pause_reason: 'auto_reply' });
    const until = new Date(read.paused_until).getTime();
    expect(until).toBeGreaterThanOrEqual(before + 3 * 86_400_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3 * 86_400_000 + 1000);
  });

  it('a Spanish out-of-office without auto headers is read from its subject', async () => {
    const { seq, enrollment, email, mail } = await sendOne('Rosa');
    const res = await postInbound(answer(mail, email, 'Respuesta automática: Hello', 'Estoy fuera de la oficina.'));
    expect(res.body).toMatchObject({ kind: 'auto_reply' });
    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'active', pause_reason: 'out_of_office' });
  });
});

describe('notices', () => {
  it('a reply reaches the owner in the feed and by email, naming contact, sequence and mailbox, with the thread link', async () => {
    const { seq, enrollment, email, mail, mailboxAddress } = await sendOne('Ada');
    const res = await postInbound(answer(mail, `Ada Lovelace <${email}>`, 'Re: Hello', 'Sounds interesting, tell me more.'));
    expect(res.body).toMatchObject({ kind: 'reply', stored: true });
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('replied');
    const link = `${ctx.config.PUBLIC_BASE_URL}/outreach/sequencer/unibox/threads/${res.body.thread_id}`;

    const item = await waitFor(
      async () => {
        await relayPending(ctx.deps);
        const feed = await ctx.request('GET', '/notifications?limit=200', { token: t.session });
        return (feed.body.data as any[]).find((i) => i.event_type === 'outreach.reply_received' && i.entity_id === res.body.thread_id);
      },
      30_000,
      'the reply notice in the feed',
    );
    expect(item.title).toBe(`Reply from Ada Lovelace <${email}>`);
    expect(item.body).toBe(
      `Ada Lovelace <${email}> answered “Re: Hello” in sequence “Founders Ada” through mailbox Sam Sender <${mailboxAddress}>. ` +
        `Open the thread in the unibox: ${link}`,
    );
    expect(item.payload.link).toEqual({ label: 'Open the thread in the unibox', url: link });

    const [notice] = await smtp.waitForMail(t.email, 1, 30_000);
    expect(notice!.mail.subject).toBe(`Reply from Ada Lovelace <${email}>`);
    expect(notice!.mail.text).toContain('in sequence “Founders Ada”');
    expect(notice!.mail.text).toContain(link);
    expect(String(notice!.mail.html)).toContain(`<a href="${link}">Open the thread in the unibox</a>`);
  });
});
