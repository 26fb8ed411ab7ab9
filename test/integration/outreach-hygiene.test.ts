import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';
import { signWebhook } from '../../platform/adapters/meetings/webhooks';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp-server';

// Sending hygiene on the real sender workflow and a real SMTP server: the one-click unsubscribe link of
// every step (RFC 8058) and its public endpoints, DKIM signatures with the sending domain's key, and
// the analytics of a sequence with the class of each received message.

const UNSUBSCRIBE_LIMIT = 40;
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

/** The unfolded value of a header in the raw message as received. */
function rawHeader(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw
    .toString('utf8')
    .split(/\r?\n\r?\n/)[0]!
    .replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** One mail of a one-step sequence to a new contact; its sequence, enrollment, contact address and the mail. */
async function sendOne(
  steps: Record<string, unknown>[] = [
    { delay_days: 0, subject: 'Hello', body: 'Hi' },
    { delay_days: 3, body: 'Again' },
  ],
) {
  const mailbox = await insertMailbox(t.orgId);
  const email = uniqueEmail('ada');
  const contact = await createContact(ctx, t, { first_name: 'Ada', email });
  const seq = await sequence({ steps, mailbox_ids: [mailbox] });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [mail] = await smtp.waitForMail(email, 1);
  return { seq, enrollment: enrollment!, email, mail: mail!, mailbox };
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({
    worker: true,
    env: {
      OUTREACH_INBOUND_SECRETS: SECRET,
      OUTREACH_POLL_INTERVAL_MS: '300',
      PUBLIC_BASE_URL: 'https://crm.example.test',
      OUTREACH_UNSUBSCRIBE_PER_TOKEN: String(UNSUBSCRIBE_LIMIT),
    },
  });
  t = await tenant();
});
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

describe('one-click unsubscribe (RFC 8058)', () => {
  it('every step carries List-Unsubscribe and List-Unsubscribe-Post; {{unsubscribe_url}} names the same link', async () => {
    const { mail } = await sendOne([
      {
        delay_days: 0,
        subject: 'Hello',
        body: 'Hi\n\nNot for you? {{unsubscribe_url}}',
        body_html: '<p><a href="{{unsubscribe_url}}">unsubscribe</a></p>',
      },
    ]);
    const header = rawHeader(mail, 'List-Unsubscribe');
    expect(header).toMatch(/^<https:\/\/crm\.example\.test\/outreach\/unsubscribe\/[0-9a-f]{64}>$/);
    expect(rawHeader(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const url = header!.slice(1, -1);
    expect(mail.mail.text).toContain(url);
    expect(mail.mail.html).toContain(`href="${url}"`);
  });

  it('a GET shows a page and changes nothing; the POST lists the address and stops the enrollment, idempotently', async () => {
    const { seq, enrollment, email, mail } = await sendOne();
    const path = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    const token = path.split('/').pop()!;

    const page = await ctx.request('GET', path, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(page.text).toContain(`<form method="post" action="/outreach/unsubscribe/${token}">`);
    expect(page.text).toContain('name="List-Unsubscribe" value="One-Click"');
    // A prefetching scanner's GET unsubscribes nobody.
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('active');
    expect(await ctx.deps.sql`SELECT 1 FROM outreach_suppressions WHERE org_id = ${t.orgId} AND email = ${email}`).toHaveLength(0);

    const oneClick = () =>
      ctx.request('POST', path, {
        rawBody: 'List-Unsubscribe=One-Click',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    const first = await oneClick();
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ unsubscribed: true });
    const again = await oneClick();
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ unsubscribed: true });

    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'suppressed', next_send_at: null });
    const listed = await ctx.deps.sql<
      { reason: string }[]
    >`SELECT reason FROM outreach_suppressions WHERE org_id = ${t.orgId} AND lower(email) = ${email}`;
    expect(listed).toEqual([{ reason: 'unsubscribe' }]);
    const [row] = await ctx.deps.sql<
      { unsubscribed_at: Date | null }[]
    >`SELECT unsubscribed_at FROM outreach_enrollments WHERE id = ${enrollment.id}`;
    expect(row!.unsubscribed_at).toBeInstanceOf(Date);

    // The page's own button (a browser) gets a page back; the page now says it is done.
    const browser = await ctx.request('POST', path, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
    });
    expect(browser.status).toBe(200);
    expect(browser.text).toContain('You are unsubscribed');
    expect((await ctx.request('GET', path)).text).toContain('You are unsubscribed');
  });

  it('an unknown or malformed token is the same 404; a large body is 413 and changes nothing', async () => {
    for (const token of ['0'.repeat(64), 'nope', crypto.randomBytes(32).toString('hex')]) {
      const get = await ctx.request('GET', `/outreach/unsubscribe/${token}`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ detail: 'Unsubscribe link not found' });
      const post = await ctx.request('POST', `/outreach/unsubscribe/${token}`, {
        rawBody: 'List-Unsubscribe=One-Click',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(post.status).toBe(404);
      expect(post.body).toEqual({ detail: 'Unsubscribe link not found' });
    }
    const { seq, enrollment, mail } = await sendOne();
    const path = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    const big = await ctx.request('POST', path, {
      rawBody: `List-Unsubscribe=One-Click&pad=${'x'.repeat(2000)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(big.status).toBe(413);
    expect((await enrollmentOf(seq.id, enrollment.id)).status).toBe('active');
  });

  it('the routes are public in the document, with their statuses', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const ops = doc.paths['/outreach/unsubscribe/{token}'];
    expect(ops.get.security).toEqual([]);
    expect(ops.post.security).toEqual([]);
    expect(Object.keys(ops.get.responses)).toEqual(expect.arrayContaining(['200', '404', '429']));
    expect(Object.keys(ops.post.responses)).toEqual(expect.arrayContaining(['200', '404', '413', '429']));
    expect(Object.keys(ops.post.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
  });
});

describe('DKIM', () => {
  /** Verifies the raw message against the domain's published DKIM record, as a receiving server would. */
  async function verify(raw: Buffer, domain: { name: string; records: { purpose: string; host: string; value: string }[] }) {
    const record = domain.records.find((r) => r.purpose === 'dkim')!;
    const resolver = async (name: string, type: string) => {
      if (type === 'TXT' && name === record.host) return [[record.value]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    };
    return (await dkimVerify(raw, { resolver })).results;
  }

  it('signs every sequence step and every unibox reply with the sending domain key and selector; the signature verifies', async () => {
    const name = `mail-${crypto.randomBytes(4).toString('hex')}.example`;
    const added = await ctx.request('POST', '/outreach/domains', { token: t.session, body: { name } });
    expect(added.status, added.text).toBe(200);
    const mailbox = await insertMailbox(t.orgId, { email_address: `sam@${name}` });
    const email = uniqueEmail('grace');
    const contact = await createContact(ctx, t, { first_name: 'Grace', email });
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi {{first_name}}' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    const [step] = await smtp.waitForMail(email, 1);
    expect(rawHeader(step!, 'DKIM-Signature')).toMatch(new RegExp(`(^|;\\s*)d=${name.replace(/\./g, '\\.')};.*\\bs=outreach;`));
    const [result] = await verify(step!.raw, added.body);
    expect(result).toMatchObject({ signingDomain: name, selector: 'outreach', status: { result: 'pass' } });

    // A tampered message fails: the signature covers the body.
    const tampered = Buffer.from(step!.raw.toString('utf8').replace('Hi Grace', 'Hi Mallory'));
    expect((await verify(tampered, added.body))[0]!.status.result).not.toBe('pass');

    const threadId = (await enrollmentOf(seq.id, enrollment!.id)).thread_id;
    const reply = await ctx.request('POST', `/outreach/sequencer/unibox/threads/${threadId}/reply`, {
      token: t.session,
      body: { text: 'Following up by hand' },
    });
    expect(reply.status, reply.text).toBe(200);
    const [, manual] = await smtp.waitForMail(email, 2);
    const [replyResult] = await verify(manual!.raw, added.body);
    expect(replyResult).toMatchObject({ signingDomain: name, selector: 'outreach', status: { result: 'pass' } });
  });
});

function postInbound(raw: string) {
  const headers = signWebhook(SECRET, `msg_${crypto.randomUUID()}`, raw);
  return ctx.request('POST', '/outreach/inbound-mail', { rawBody: raw, headers: { 'Content-Type': 'message/rfc822', ...headers } });
}

/** A message from `from` answering `sent`, with extra headers. */
function answer(sent: ReceivedMail, from: string, text: string, extra: string[] = [], subject = 'Re: Hello') {
  const id = sent.mail.messageId!;
  return [
    `From: ${from}`,
    `To: ${sent.mail.from!.value[0]!.address}`,
    `Subject: ${subject}`,
    `Message-ID: <a-${crypto.randomUUID()}@prospects.test>`,
    `In-Reply-To: ${id}`,
    `References: ${id}`,
    ...extra,
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '',
  ].join('\r\n');
}

function bounceReport(sent: ReceivedMail, to: string) {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.prospects.test>',
    `To: ${sent.mail.from!.value[0]!.address}`,
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
    `Final-Recipient: rfc822; ${to}`,
    'Action: failed',
    'Status: 5.1.1',
    '--B',
    'Content-Type: text/rfc822-headers',
    '',
    `Message-ID: ${sent.mail.messageId}`,
    'Subject: Hello',
    '--B--',
    '',
  ].join('\r\n');
}

describe('sequence analytics and reply classes', () => {
  it('counts sent, delivered, bounced, replied by class, automatic answers and unsubscribes per sequence, step and variant', async () => {
    const mailbox = await insertMailbox(t.orgId);
    const people = await Promise.all(
      ['ivy', 'oscar', 'uma', 'bo'].map(async (n) => {
        const email = uniqueEmail(n);
        return { email, contact: await createContact(ctx, t, { first_name: n, email }) };
      }),
    );
    const seq = await sequence({
      steps: [
        { delay_days: 0, subject: 'Hello', body: 'Hi A', variants: [{ subject: 'Hello', body: 'Hi B', body_html: null }] },
        { delay_days: 5, body: 'Again' },
      ],
      mailbox_ids: [mailbox],
    });
    const enrolled = await enroll(
      seq.id,
      people.map((p) => p.contact.id),
    );
    await activate(seq.id);
    const mails = await Promise.all(people.map(async (p) => (await smtp.waitForMail(p.email, 1))[0]!));
    const [ivy, oscar, uma, bo] = mails;

    expect(
      (await postInbound(answer(ivy!, people[0]!.email, "Sounds interesting, let's talk next week.\n\nOn Monday Sam wrote:\n> Hi A")))
        .status,
    ).toBe(200);
    expect(
      (
        await postInbound(
          answer(oscar!, people[1]!.email, 'I am out of the office.', ['Auto-Submitted: auto-replied'], 'Out of Office: Hello'),
        )
      ).status,
    ).toBe(200);
    const unsubscribePath = new URL(rawHeader(uma!, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    expect(
      (
        await ctx.request('POST', unsubscribePath, {
          rawBody: 'List-Unsubscribe=One-Click',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        })
      ).status,
    ).toBe(200);
    expect((await postInbound(bounceReport(bo!, people[3]!.email))).status).toBe(200);

    const res = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session });
    expect(res.status, res.text).toBe(200);
    const whole = { sent: 4, delivered: 3, bounced: 1, replied: 1, interested: 1, not_interested: 0, auto_replies: 1, unsubscribed: 1 };
    const rates = { delivery: 0.75, bounce: 0.25, reply: 0.3333, interested: 0.3333, unsubscribe: 0.3333 };
    expect(res.body).toMatchObject({ sequence_id: seq.id, ...whole, rates });
    expect(res.body.steps).toHaveLength(2);
    expect(res.body.steps[0]).toMatchObject({ step: 0, ...whole, rates });
    // The follow-up sent nothing yet: zeros, and no rate at all.
    expect(res.body.steps[1]).toMatchObject({
      step: 1,
      sent: 0,
      delivered: 0,
      rates: { delivery: null, bounce: null, reply: null, interested: null, unsubscribe: null },
    });
    expect(res.body.steps[1].variants).toEqual([expect.objectContaining({ variant: 0, sent: 0 })]);

    // Each variant counts its own messages: the one Ivy got has her interest.
    const variants = res.body.steps[0].variants as { variant: number; sent: number; interested: number; bounced: number }[];
    expect(variants.map((v) => v.variant)).toEqual([0, 1]);
    const sentVariants = await ctx.deps.sql<{ enrollment_id: string; variant: number }[]>`
      SELECT enrollment_id, variant FROM outreach_messages WHERE enrollment_id = ANY(${enrolled.map((e) => e.id)}::uuid[]) AND direction = 'outbound'`;
    const variantOf = (contactId: string) =>
      sentVariants.find((m) => m.enrollment_id === enrolled.find((e) => e.contact_id === contactId)!.id)!.variant;
    for (const v of variants) expect(v.sent).toBe(sentVariants.filter((m) => m.variant === v.variant).length);
    expect(variants[variantOf(people[0]!.contact.id)]!.interested).toBe(1);
    expect(variants[variantOf(people[3]!.contact.id)]!.bounced).toBe(1);

    // The unibox shows each received message's class.
    const threadOf = async (i: number) =>
      (await enrollmentOf(seq.id, enrolled.find((e) => e.contact_id === people[i]!.contact.id)!.id)).thread_id;
    const classes = async (i: number) =>
      (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${await threadOf(i)}`, { token: t.session })).body.messages.map(
        (m: { classification: string | null }) => m.classification,
      );
    expect(await classes(0)).toEqual([null, 'interested']);
    expect(await classes(1)).toEqual([null, 'out_of_office']);
    expect(await classes(3)).toEqual([null, 'bounce']);
  });

  it('is readable with outreach read; another organization, or a bad id, gets 404 / 422', async () => {
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi' }], mailbox_ids: [await insertMailbox(t.orgId)] });
    const readOnly = await createOrgKey(ctx, t.session, { scopes: ['outreach:read'] });
    const empty = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: readOnly });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ sent: 0, delivered: 0, rates: { reply: null, bounce: null } });
    const other = await tenant();
    expect((await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: other.session })).status).toBe(404);
    expect((await ctx.request('GET', '/outreach/sequencer/sequences/nope/analytics', { token: t.session })).status).toBe(422);
  });
});

describe('spacing between sends of one mailbox', () => {
  it('is set per mailbox by API (default 60-180 s); a minimum above the maximum is 422 and changes nothing', async () => {
    const id = crypto.randomUUID();
    await ctx.deps.sql`
      INSERT INTO outreach_mailboxes ${ctx.deps.sql({ id, org_id: t.orgId, email_address: `d-${id.slice(0, 8)}@outreach.test`, kind: 'simulated', created_by: 'user:test' } as never)}`;
    const path = `/outreach/mailboxes/${id}`;
    expect((await ctx.request('GET', path, { token: t.session })).body.send_gap).toEqual({ min_seconds: 60, max_seconds: 180 });
    const set = await ctx.request('PATCH', path, { token: t.session, body: { send_gap: { min_seconds: 5, max_seconds: 9 } } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.send_gap).toEqual({ min_seconds: 5, max_seconds: 9 });
    const bad = await ctx.request('PATCH', path, { token: t.session, body: { send_gap: { min_seconds: 10, max_seconds: 9 } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'send_gap', 'max_seconds'] });
    expect((await ctx.request('GET', path, { token: t.session })).body.send_gap).toEqual({ min_seconds: 5, max_seconds: 9 });
  });

  it('never sends two messages of one mailbox closer than its minimum gap; the hold after the last send is within [min, max]', async () => {
    const spaced = await insertMailbox(t.orgId, { send_gap_min_seconds: 2, send_gap_max_seconds: 3 });
    const people = await Promise.all(
      [1, 2, 3].map(async (i) => {
        const email = uniqueEmail(`gap${i}`);
        return { email, contact: await createContact(ctx, t, { first_name: `G${i}`, email }) };
      }),
    );
    const seq = await sequence({ steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi' }], mailbox_ids: [spaced] });
    await enroll(
      seq.id,
      people.map((p) => p.contact.id),
    );
    await activate(seq.id);
    for (const p of people) await smtp.waitForMail(p.email, 1, 30_000);
    // Recorded once the server has taken it: wait for the third record.
    const times = await waitFor(async () => {
      const rows = await ctx.deps.sql<{ sent_at: Date }[]>`
        SELECT sent_at FROM outreach_messages WHERE mailbox_id = ${spaced} AND direction = 'outbound' AND sent_at IS NOT NULL ORDER BY sent_at`;
      return rows.length === 3 && rows;
    });
    for (let i = 1; i < times.length; i++) {
      const gap = times[i]!.sent_at.getTime() - times[i - 1]!.sent_at.getTime();
      expect(gap).toBeGreaterThanOrEqual(2000);
    }
    const [row] = await ctx.deps.sql<
      { next_send_not_before: Date }[]
    >`SELECT next_send_not_before FROM outreach_mailboxes WHERE id = ${spaced}`;
    const held = row!.next_send_not_before.getTime() - times[2]!.sent_at.getTime();
    expect(held).toBeGreaterThanOrEqual(2000);
    expect(held).toBeLessThanOrEqual(3000);
  });
});

describe('the unsubscribe endpoints under load', () => {
  it('limits requests per link (429 with Retry-After), not per client address: other links from the same address still answer', async () => {
    const { mail } = await sendOne();
    const path = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    let limited: Awaited<ReturnType<typeof ctx.request>> | undefined;
    for (let i = 0; i <= UNSUBSCRIBE_LIMIT && !limited; i++) {
      const res = await ctx.request('GET', path);
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(200);
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    // A mailbox provider posting its users' one-click unsubscribes from one server is never refused for that.
    for (let i = 0; i <= UNSUBSCRIBE_LIMIT; i++) {
      const other = await ctx.request('GET', `/outreach/unsubscribe/${crypto.randomBytes(32).toString('hex')}`);
      expect(other.status).toBe(404);
    }
    const { mail: next } = await sendOne();
    const fresh = await ctx.request('POST', new URL(rawHeader(next, 'List-Unsubscribe')!.slice(1, -1)).pathname, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(fresh.status).toBe(200);
  });
});
