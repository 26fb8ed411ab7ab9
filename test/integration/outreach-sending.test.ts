import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../platform/adapters/meetings/webhooks';
import { idempotencyKey, runSequenceCycle } from '../../services/outreach/sending';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { keepHistory } from '../support/histories';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

// Sending through the sender workflow on the real dev server, to a real SMTP server: steps in order
// with their delays, threading headers, templates, limits, windows, rotation, replies, bounces, the
// unibox and its reply. Delays of days are crossed by moving times in Postgres, as the campaigns do.

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: Tenant & { orgId: string };

async function tenant() {
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  return { ...x, orgId: await orgUuid(ctx, x) };
}

const insertMailbox = (orgId: string, values: Record<string, unknown> = {}) => insertSmtpMailbox(ctx, orgId, smtp.port, values);
const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));
/** Makes the enrollment's next step due now (the delay of days, crossed in Postgres). */
const dueNow = (enrollmentId: string) => ctx.deps.sql`UPDATE outreach_enrollments SET next_send_at = now() WHERE id = ${enrollmentId}`;

function postInbound(raw: string) {
  const headers = signWebhook(SECRET, `msg_${crypto.randomUUID()}`, raw);
  return ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822', ...headers } });
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({ worker: true, env: { OUTREACH_INBOUND_SECRETS: SECRET, OUTREACH_POLL_INTERVAL_MS: '300' } });
  t = await tenant();
});
/** Histories to keep (UPDATE_HISTORIES=1), read once every test ran: the CLI call blocks this process, worker included. */
const kept: [string, string][] = [];
afterAll(async () => {
  for (const [id, name] of kept) keepHistory(ctx.config.TEMPORAL_ADDRESS!, id, name);
  await ctx?.close();
  await smtp?.close();
});

describe('sending a sequence', () => {
  it('sends the steps in order with their delays, threaded, templated and escaped, recorded on the contact; the unibox shows the thread', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('grace');
    const contact = await createContact(ctx, t, { first_name: 'Grace <b>', last_name: 'Hopper', company: 'Navy & Co', email });
    const seq = await sequence({
      steps: [
        {
          delay_days: 0,
          subject: 'Idea for {{company}}',
          body: 'Hi {{first_name}},\nquick idea.',
          body_html: '<p>Hi {{first_name}} at {{company}}</p>',
        },
        { delay_days: 3, subject: null, body: 'Bumping this, {{first_name|friend}}' },
      ],
      mailbox_ids: [mailbox],
    });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);

    const [first] = await smtp.waitForMail(email, 1);
    expect(first!.mail.subject).toBe('Idea for Navy & Co');
    expect(first!.mail.text?.trim()).toBe('Hi Grace <b>,\nquick idea.');
    expect(first!.mail.html).toContain('<p>Hi Grace &lt;b&gt; at Navy &amp; Co</p>');
    expect(first!.mail.from?.value[0]).toMatchObject({ name: 'Sam Sender' });
    const firstId = first!.mail.messageId!;
    expect(firstId).toMatch(new RegExp(`^<[0-9a-f-]{36}\\.${t.orgId}@outreach\\.test>$`));

    // The second step waits its three days.
    const afterFirst = await waitFor(async () => {
      const e = await enrollmentOf(seq.id, enrollment!.id);
      return e.next_step === 1 && e;
    });
    expect(Date.parse(afterFirst.next_send_at) - Date.parse(afterFirst.last_sent_at)).toBe(3 * 86_400_000);
    expect(afterFirst.thread_id).toEqual(expect.any(String));

    await dueNow(enrollment!.id);
    const [, second] = await smtp.waitForMail(email, 2);
    expect(second!.mail.subject).toBe('Re: Idea for Navy & Co');
    expect(second!.mail.text?.trim()).toBe('Bumping this, Grace <b>');
    expect(second!.mail.inReplyTo).toBe(firstId);
    expect([second!.mail.references].flat()).toEqual([firstId]);
    const done = await waitFor(async () => {
      const e = await enrollmentOf(seq.id, enrollment!.id);
      return e.status === 'completed' && e;
    });
    expect(done.next_send_at).toBeNull();
    // The sequence completes by itself once no enrollment has a step left.
    await waitFor(
      async () => (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}`, { token: t.session })).body.status === 'completed',
    );

    const activities = await ctx.deps.sql<{ type: string; subject: string; direction: string }[]>`
      SELECT type, subject, direction FROM activities WHERE contact_id = ${contact.id} ORDER BY created_at`;
    expect(activities).toEqual([
      { type: 'email', subject: 'Idea for Navy & Co', direction: 'outbound' },
      { type: 'email', subject: 'Re: Idea for Navy & Co', direction: 'outbound' },
    ]);

    const thread = await ctx.request('GET', `/outreach/sequencer/unibox/threads/${done.thread_id}`, { token: t.session });
    expect(thread.status).toBe(200);
    expect(
      thread.body.messages.map((m: { direction: string; step: number; message_id: string }) => [m.direction, m.step, m.message_id]),
    ).toEqual([
      ['outbound', 0, firstId],
      ['outbound', 1, second!.mail.messageId],
    ]);
    expect(thread.body.context).toMatchObject({
      sequence: { id: seq.id, status: 'completed' },
      step: { index: 1, delay_days: 3 },
      enrollment: { id: enrollment!.id, status: 'completed' },
      contact: { id: contact.id, email },
      mailbox: { id: mailbox, email_address: expect.stringMatching(/@outreach\.test$/) },
    });
    // The sender ends with the sequence.
    expect(await ctx.deps.temporal.workflow.getHandle(`outreach-sequence:${seq.id}`).result()).toBe('completed');
    kept.push([`outreach-sequence:${seq.id}`, 'outreach-sequence-sender']);
  });

  it('a reply stops the enrollment and lands in the thread; the unibox lists it as needing a reply; mark read; reply from the thread, threaded', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('linus');
    const contact = await createContact(ctx, t, { first_name: 'Linus', email });
    const seq = await sequence({
      steps: [
        { delay_days: 0, subject: 'Hello', body: 'Hi' },
        { delay_days: 2, body: 'Again' },
      ],
      mailbox_ids: [mailbox],
    });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    const [sent] = await smtp.waitForMail(email, 1);
    const ourId = sent!.mail.messageId!;
    const ourAddress = sent!.mail.from!.value[0]!.address!;

    const replyId = `<reply-${crypto.randomUUID()}@prospects.test>`;
    const raw = [
      `From: Linus <${email}>`,
      `To: ${ourAddress}`,
      'Subject: Re: Hello',
      `Message-ID: ${replyId}`,
      `In-Reply-To: ${ourId}`,
      `References: ${ourId}`,
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Interested!<script>alert(1)</script><a href="javascript:alert(2)">x</a></p>',
      '',
    ].join('\r\n');
    const res = await postInbound(raw);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ matched: true, kind: 'reply', stored: true });
    expect((await postInbound(raw)).body).toMatchObject({ matched: true, stored: false }); // a redelivery is stored once

    const stopped = await enrollmentOf(seq.id, enrollment!.id);
    expect(stopped).toMatchObject({ status: 'replied', next_send_at: null });
    const threadId = res.body.thread_id;
    expect(stopped.thread_id).toBe(threadId);
    const events = await ctx.deps.sql<{ event_type: string; payload: any; recipient_user_ids: string[] }[]>`
      SELECT event_type, payload, recipient_user_ids FROM notification_outbox WHERE entity_id = ${threadId}`;
    // Addressed to the sequence's owner, who subscribed to nothing.
    const [owner] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${t.user}`;
    expect(events).toEqual([
      {
        event_type: 'outreach.reply_received',
        payload: expect.objectContaining({ thread_id: threadId, enrollment_id: enrollment!.id }),
        recipient_user_ids: [owner!.id],
      },
    ]);

    const needing = await ctx.request('GET', `/outreach/sequencer/unibox/threads?needs_reply=true&sequence_id=${seq.id}`, {
      token: t.session,
    });
    expect(needing.body.data.map((x: { id: string }) => x.id)).toEqual([threadId]);
    expect(needing.body.data[0]).toMatchObject({ unread: true, unread_count: 1, needs_reply: true });
    const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${threadId}`, { token: t.session })).body;
    const inbound = thread.messages[1];
    expect(inbound).toMatchObject({ direction: 'inbound', kind: 'inbound', from: email, in_reply_to: ourId, subject: 'Re: Hello' });
    expect(inbound.html).toContain('Interested!');
    expect(inbound.html).not.toMatch(/script|javascript/);

    const read = await ctx.request('POST', `/outreach/sequencer/unibox/threads/${threadId}/read`, { token: t.session, body: {} });
    expect(read.body).toMatchObject({ unread: false, unread_count: 0 });
    expect(
      (await ctx.request('GET', `/outreach/sequencer/unibox/threads?unread=true&sequence_id=${seq.id}`, { token: t.session })).body.data,
    ).toEqual([]);

    const answer = await ctx.request('POST', `/outreach/sequencer/unibox/threads/${threadId}/reply`, {
      token: t.session,
      body: { text: 'Great, Tuesday?' },
    });
    expect(answer.status, answer.text).toBe(200);
    const [, replied] = await smtp.waitForMail(email, 2);
    expect(replied!.mail.subject).toBe('Re: Hello');
    expect(replied!.mail.inReplyTo).toBe(replyId);
    expect([replied!.mail.references].flat()).toEqual([ourId, replyId]);
    expect(replied!.mail.messageId).toBe(answer.body.message_id);
    const after = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${threadId}`, { token: t.session })).body;
    expect(after).toMatchObject({ needs_reply: false });
    expect(after.messages.map((m: { kind: string }) => m.kind)).toEqual(['sequence', 'inbound', 'reply']);
    // The second step never goes out: only our first step and the reply reached the contact.
    expect(smtp.to(email)).toHaveLength(2);

    const other = await tenant();
    expect((await ctx.request('GET', `/outreach/sequencer/unibox/threads/${threadId}`, { token: other.session })).status).toBe(404);
    expect(
      (await ctx.request('POST', `/outreach/sequencer/unibox/threads/${threadId}/reply`, { token: other.session, body: { text: 'x' } }))
        .status,
    ).toBe(404);
  });

  it('a bounce (delivery status notification) stops the enrollment and counts on the mailbox', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('bounce');
    const contact = await createContact(ctx, t, { first_name: 'B', email });
    const seq = await sequence({
      steps: [
        { delay_days: 0, subject: 'Hi', body: 'Hi' },
        { delay_days: 1, body: 'Again' },
      ],
      mailbox_ids: [mailbox],
    });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    const [sent] = await smtp.waitForMail(email, 1);
    const raw = [
      'From: Mail Delivery System <MAILER-DAEMON@mx.prospects.test>',
      `To: ${sent!.mail.from!.value[0]!.address}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <dsn-${crypto.randomUUID()}@mx.prospects.test>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      'The mail could not be delivered.',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.prospects.test',
      '',
      `Final-Recipient: rfc822; ${email}`,
      'Action: failed',
      'Status: 5.1.1',
      '--B',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${sent!.mail.messageId}`,
      'Subject: Hi',
      '--B--',
      '',
    ].join('\r\n');
    const res = await postInbound(raw);
    expect(res.body).toMatchObject({ matched: true, kind: 'bounce' });
    expect(await enrollmentOf(seq.id, enrollment!.id)).toMatchObject({ status: 'bounced' });
    const [mb] = await ctx.deps.sql<{ bounce_count: number }[]>`SELECT bounce_count FROM outreach_mailboxes WHERE id = ${mailbox}`;
    expect(mb!.bounce_count).toBe(1);
    const events = await ctx.deps.sql<
      { event_type: string }[]
    >`SELECT event_type FROM notification_outbox WHERE entity_id = ${res.body.thread_id}`;
    expect(events.map((e) => e.event_type)).toEqual(['outreach.message_bounced']);

    // The bounced address is suppressed: a new sequence refuses it per row and nothing more is mailed.
    const listed = await ctx.request('GET', `/outreach/suppressions?search=${encodeURIComponent(email)}`, { token: t.session });
    expect(listed.body.data).toEqual([expect.objectContaining({ email, reason: 'bounce', created_by: 'system:outreach' })]);
    const again = await sequence({ steps: [{ delay_days: 0, subject: 'Hi again', body: 'Hi' }], mailbox_ids: [mailbox] });
    const res2 = await ctx.request('POST', `/outreach/sequencer/sequences/${again.id}/enrollments`, {
      token: t.session,
      body: { contact_ids: [contact.id] },
    });
    expect(res2.body).toEqual({ enrolled: [], skipped: [{ contact_id: contact.id, reason: 'suppressed' }] });
  });

  it('an out-of-office answer is not a reply: the enrollment waits until the stated return, then goes on', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('away');
    const contact = await createContact(ctx, t, { first_name: 'Away', email });
    const seq = await sequence({
      steps: [
        { delay_days: 0, subject: 'Hello', body: 'Hi' },
        { delay_days: 1, body: 'Again' },
      ],
      mailbox_ids: [mailbox],
    });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    const [sent] = await smtp.waitForMail(email, 1);
    const back = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const auto = (headers: string[], subject: string, body: string) =>
      [
        `From: Away <${email}>`,
        `To: ${sent!.mail.from!.value[0]!.address}`,
        `Subject: ${subject}`,
        `Message-ID: <ooo-${crypto.randomUUID()}@prospects.test>`,
        `In-Reply-To: ${sent!.mail.messageId}`,
        ...headers,
        '',
        body,
        '',
      ].join('\r\n');
    const res = await postInbound(
      auto(['Auto-Submitted: auto-replied', 'X-Autoreply: yes'], 'Out of Office: Hello', `I am away until ${back}.`),
    );
    expect(res.body).toMatchObject({ matched: true, kind: 'auto_reply', stored: true });
    const paused = await enrollmentOf(seq.id, enrollment!.id);
    expect(paused.status).toBe('active');
    expect(paused.next_send_at.slice(0, 10)).toBe(new Date(Date.parse(back) + 86_400_000).toISOString().slice(0, 10));
    const events = await ctx.deps.sql`SELECT event_type FROM notification_outbox WHERE entity_id = ${res.body.thread_id}`;
    expect(events).toEqual([]);
    const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${res.body.thread_id}`, { token: t.session })).body;
    expect(thread.needs_reply).toBe(false);
    expect(thread.messages).toHaveLength(2);

    // A subject-only out-of-office answer (no header) with no date pauses for the configured days.
    const subjectOnly = await postInbound(auto([], 'Automatic reply: Hello', 'Thanks for your message.'));
    expect(subjectOnly.body.kind).toBe('auto_reply');
    // The return date passes: the sequence goes on with its next step, in the same thread.
    await dueNow(enrollment!.id);
    await smtp.waitForMail(email, 2);
    const outbound = await ctx.deps
      .sql`SELECT step FROM outreach_messages WHERE thread_id = ${res.body.thread_id} AND direction = 'outbound' ORDER BY step`;
    expect(outbound.map((m) => m.step)).toEqual([0, 1]);
    // The last step's mail arrives before the sender records the enrollment's end: await that write.
    await expect.poll(async () => (await enrollmentOf(seq.id, enrollment!.id)).status, { timeout: 30_000 }).toBe('completed');
  });

  it('stops an enrollment whose address was suppressed after it was enrolled, sending nothing', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('unsubscribed');
    const contact = await createContact(ctx, t, { first_name: 'U', email });
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hi', body: 'Hi' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    expect(
      (
        await ctx.request('POST', '/outreach/suppressions', {
          token: t.session,
          body: { email: email.toUpperCase(), reason: 'unsubscribe' },
        })
      ).status,
    ).toBe(200);
    await activate(seq.id);
    await waitFor(
      async () => (await enrollmentOf(seq.id, enrollment!.id)).status === 'suppressed',
      20_000,
      'the enrollment to stop as suppressed',
    );
    expect(smtp.to(email)).toEqual([]);
  });
});

describe('limits, windows, rotation and idempotency', () => {
  it('never sends above a mailbox’s daily limit, rotates across the pool, and sends again on the next local day', async () => {
    const pool = [await insertMailbox(t.orgId, { daily_limit: 2 }), await insertMailbox(t.orgId, { daily_limit: 1 })];
    const contacts = await Promise.all(
      Array.from({ length: 5 }, (_, i) => createContact(ctx, t, { first_name: `L${i}`, email: uniqueEmail(`limit${i}`) })),
    );
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hi', body: 'Hi' }], mailbox_ids: pool });
    await enroll(
      seq.id,
      contacts.map((c) => c.id),
    );
    await activate(seq.id);
    const sentCount = async () =>
      (
        await ctx.deps.sql<{ mailbox_id: string; n: number }[]>`
        SELECT mailbox_id, count(*)::int AS n FROM outreach_messages WHERE org_id = ${t.orgId} AND mailbox_id = ANY(${pool}::uuid[]) AND status = 'sent'
        GROUP BY mailbox_id`
      ).reduce<Record<string, number>>((acc, r) => Object.assign(acc, { [r.mailbox_id]: r.n }), {});
    const statuses = async () =>
      JSON.stringify(
        await ctx.deps
          .sql`SELECT mailbox_id, status, error, local_day::text FROM outreach_messages WHERE mailbox_id = ANY(${pool}::uuid[])`,
      ) +
      JSON.stringify(await ctx.deps.sql`SELECT status, next_send_at, next_step FROM outreach_enrollments WHERE sequence_id = ${seq.id}`) +
      JSON.stringify(await ctx.deps.sql`SELECT status, rotation FROM outreach_sequences WHERE id = ${seq.id}`) +
      ctx.logs
        .filter((l) => /"level":(40|50)/.test(l))
        .slice(-5)
        .join('\n');
    await waitFor(
      async () => {
        const c = await sentCount();
        return (c[pool[0]!] ?? 0) + (c[pool[1]!] ?? 0) === 3;
      },
      30_000,
      'three sends',
    ).catch(async (error) => {
      throw new Error(`${error.message}: ${await statuses()}`);
    });
    // A cycle now finds both mailboxes full: nothing more is sent today.
    const cycle = await runSequenceCycle(ctx.deps, t.orgId, seq.id);
    expect(cycle).toMatchObject({ state: 'active', sent: 0, more: false });
    expect(cycle.nextDueInMs).toBeGreaterThan(0);
    expect(await sentCount()).toEqual({ [pool[0]!]: 2, [pool[1]!]: 1 });

    // The next local day (times moved back in Postgres): the rest go out.
    await ctx.deps
      .sql`UPDATE outreach_messages SET local_day = local_day - 1 WHERE org_id = ${t.orgId} AND mailbox_id = ANY(${pool}::uuid[])`;
    await runSequenceCycle(ctx.deps, t.orgId, seq.id);
    await waitFor(
      async () => {
        const c = await sentCount();
        return (c[pool[0]!] ?? 0) + (c[pool[1]!] ?? 0) === 5;
      },
      30_000,
      'five sends',
    ).catch(async (error) => {
      throw new Error(`${error.message}: ${await statuses()}`);
    });
    const byDay = await ctx.deps.sql<{ mailbox_id: string; local_day: string; n: number }[]>`
      SELECT mailbox_id, local_day::text, count(*)::int AS n FROM outreach_messages WHERE org_id = ${t.orgId} AND mailbox_id = ANY(${pool}::uuid[])
      GROUP BY 1, 2`;
    for (const row of byDay) expect(row.n).toBeLessThanOrEqual(row.mailbox_id === pool[0] ? 2 : 1);
  });

  it('a warming-up mailbox sends its warm-up volume a day, growing day by day to its daily limit; health shows the day and the cap', async () => {
    // Ramp of 1 a day over 4 days towards a limit of 4: day d allows d.
    const mailbox = await insertMailbox(t.orgId, {
      daily_limit: 4,
      warmup_enabled: true,
      warmup_started_at: new Date(),
      warmup_start_per_day: 1,
      warmup_days: 4,
    });
    const contacts = await Promise.all(
      Array.from({ length: 7 }, (_, i) => createContact(ctx, t, { first_name: `W${i}`, email: uniqueEmail(`warm${i}`) })),
    );
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hi', body: 'Hi' }], mailbox_ids: [mailbox] });
    await enroll(
      seq.id,
      contacts.map((c) => c.id),
    );
    await activate(seq.id);
    const sent = async () =>
      (
        await ctx.deps.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM outreach_messages WHERE mailbox_id = ${mailbox} AND status = 'sent'`
      )[0]!.n;
    const health = async () => (await ctx.request('GET', `/outreach/mailboxes/${mailbox}/health`, { token: t.session })).body;
    /** The next local day: what went out counts a day earlier, and warm-up began a day earlier. */
    // In the sender's lock order (the mailbox row first), so a cycle running meanwhile waits instead of deadlocking.
    const nextDay = () =>
      ctx.deps.sql.begin(async (tx) => {
        await tx`SELECT id FROM outreach_mailboxes WHERE id = ${mailbox} FOR UPDATE`;
        await tx`UPDATE outreach_messages SET local_day = local_day - 1 WHERE mailbox_id = ${mailbox}`;
        await tx`UPDATE outreach_mailboxes SET warmup_started_at = warmup_started_at - interval '1 day' WHERE id = ${mailbox}`;
      });

    let total = 0;
    for (const day of [1, 2, 3]) {
      total += day;
      if (day > 1) {
        await nextDay();
        await runSequenceCycle(ctx.deps, t.orgId, seq.id);
      }
      await waitFor(async () => (await sent()) === total, 30_000, `${total} sends by day ${day}`);
      // The day's volume is used up: a cycle sends nothing more.
      expect(await runSequenceCycle(ctx.deps, t.orgId, seq.id)).toMatchObject({ state: 'active', sent: 0 });
      expect(await sent()).toBe(total);
      expect(await health()).toMatchObject({
        daily_limit: 4,
        cap_today: day,
        sent_today: day,
        remaining_today: 0,
        warmup: { day, volume_today: day, complete: false },
      });
    }
    // Day 4 the ramp reaches the daily limit; the last one of seven goes out.
    await nextDay();
    await runSequenceCycle(ctx.deps, t.orgId, seq.id);
    await waitFor(async () => (await sent()) === 7, 30_000, 'seven sends');
    expect(await health()).toMatchObject({ cap_today: 4, sent_today: 1, remaining_today: 3, warmup: { day: 4, complete: true } });
  });

  it('sends nothing outside the mailbox’s window and looks again when it opens', async () => {
    const today = new Date();
    const closedDay = ((today.getUTCDay() + 6) % 7) + 1; // today's ISO weekday (UTC)
    const openDays = [1, 2, 3, 4, 5, 6, 7].filter((d) => d !== closedDay);
    const mailbox = await insertMailbox(t.orgId, { window_days: openDays, window_start: '00:00', window_end: '24:00', timezone: 'UTC' });
    const email = uniqueEmail('window');
    const contact = await createContact(ctx, t, { first_name: 'W', email });
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hi', body: 'Hi' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await ctx.deps.sql`UPDATE outreach_sequences SET status = 'active' WHERE id = ${seq.id}`; // active without its sender: only this cycle runs
    const now = new Date(Math.max(Date.now(), today.getTime()));
    if (now.getUTCDate() !== today.getUTCDate()) return; // midnight passed during the test: the window opened
    const cycle = await runSequenceCycle(ctx.deps, t.orgId, seq.id, now);
    expect(cycle.sent).toBe(0);
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(cycle.nextDueInMs).toBe(midnight - now.getTime());
    expect((await enrollmentOf(seq.id, enrollment!.id)).status).toBe('active');
    const [{ n }] = (await ctx.deps.sql`SELECT count(*)::int AS n FROM outreach_messages WHERE mailbox_id = ${mailbox}`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  });

  it('a reservation left without an outcome is resolved as sent, never sent a second time', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const email = uniqueEmail('doubt');
    const contact = await createContact(ctx, t, { first_name: 'D', email });
    const seq = await sequence({
      steps: [
        { delay_days: 0, subject: 'Hi', body: 'Hi' },
        { delay_days: 1, body: 'Again' },
      ],
      mailbox_ids: [mailbox],
    });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    // An earlier attempt reserved step 0 and was lost before recording what SMTP did.
    const thread = crypto.randomUUID();
    await ctx.deps.sql`
      INSERT INTO outreach_threads (id, org_id, mailbox_id, sequence_id, enrollment_id, contact_id, subject, counterpart)
      VALUES (${thread}, ${t.orgId}, ${mailbox}, ${seq.id}, ${enrollment!.id}, ${contact.id}, 'Hi', ${email})`;
    await ctx.deps.sql`UPDATE outreach_enrollments SET thread_id = ${thread} WHERE id = ${enrollment!.id}`;
    await ctx.deps.sql`
      INSERT INTO outreach_messages (id, org_id, thread_id, mailbox_id, direction, kind, enrollment_id, step, idempotency_key, status, message_id,
        from_address, to_addresses, subject, local_day)
      VALUES (${crypto.randomUUID()}, ${t.orgId}, ${thread}, ${mailbox}, 'outbound', 'sequence', ${enrollment!.id}, 0,
        ${idempotencyKey(enrollment!.id, 0)}, 'reserved', ${`<lost-${crypto.randomUUID()}@outreach.test>`}, 'x@outreach.test', ${[email]}, 'Hi', current_date)`;
    await ctx.deps.sql`UPDATE outreach_sequences SET status = 'active' WHERE id = ${seq.id}`;
    const cycle = await runSequenceCycle(ctx.deps, t.orgId, seq.id);
    expect(cycle.sent).toBe(0);
    const e = await enrollmentOf(seq.id, enrollment!.id);
    expect(e).toMatchObject({ status: 'active', next_step: 1 });
    const [msg] = await ctx.deps.sql<
      { status: string }[]
    >`SELECT status FROM outreach_messages WHERE idempotency_key = ${idempotencyKey(enrollment!.id, 0)}`;
    expect(msg!.status).toBe('unconfirmed');
    expect(smtp.to(email)).toHaveLength(0);
  });

  it('shows no mailbox settings in thread reads and no webhook secret in logs (the IMAP test checks a stored password)', async () => {
    await ctx.deps.sql`UPDATE outreach_mailboxes SET smtp_username = 'sam-login' WHERE org_id = ${t.orgId}`;
    const threads = await ctx.request('GET', '/outreach/sequencer/unibox/threads', { token: t.session });
    expect(threads.status).toBe(200);
    expect(threads.body.data.length).toBeGreaterThan(0);
    for (const th of threads.body.data.slice(0, 3)) {
      const read = await ctx.request('GET', `/outreach/sequencer/unibox/threads/${th.id}`, { token: t.session });
      expect(read.text).not.toContain('sam-login');
      expect(read.text).not.toMatch(/smtp|password|credential/i);
    }
    expect(ctx.logs.join('\n')).not.toContain(SECRET);
  });
});
