import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp-server';

// Sending hygiene on the real sender workflow and a real SMTP server: the one-click unsubscribe link of
// every step (RFC 8058) and its public endpoints, DKIM signatures with the sending domain's key.

const UNSUBSCRIBE_LIMIT = 40;

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: Tenant & { orgId: string };

async function tenant() {
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  return { ...x, orgId: await orgUuid(ctx, x) };
}

/** An SMTP mailbox pointing at the test server, written straight to the database. */
async function insertMailbox(orgId: string, values: Record<string, unknown> = {}): Promise<string> {
  const id = crypto.randomUUID();
  await ctx.deps.sql`
    INSERT INTO outreach_mailboxes ${ctx.deps.sql({
      id,
      org_id: orgId,
      email_address: `sender-${id.slice(0, 8)}@outreach.test`,
      display_name: 'Sam Sender',
      kind: 'smtp',
      smtp_host: '127.0.0.1',
      smtp_port: smtp.port,
      smtp_secure: false,
      window_start: '00:00',
      window_end: '24:00',
      window_days: [1, 2, 3, 4, 5, 6, 7],
      daily_limit: 50,
      send_gap_min_seconds: 0,
      send_gap_max_seconds: 0,
      created_by: 'user:test',
      ...values,
    } as never)}`;
  return id;
}

async function sequence(body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await ctx.request('POST', '/outreach/sequencer/sequences', { token: t.session, body: { name: 'seq', ...body } });
  expect(res.status, res.text).toBe(200);
  return res.body;
}
const activate = async (id: string) => expect((await ctx.request('POST', `/outreach/sequencer/sequences/${id}/activate`, { token: t.session })).status).toBe(200);
async function enroll(seqId: string, contactIds: string[]) {
  const res = await ctx.request('POST', `/outreach/sequencer/sequences/${seqId}/enrollments`, { token: t.session, body: { contact_ids: contactIds } });
  expect(res.status, res.text).toBe(200);
  return res.body.enrolled as { id: string; contact_id: string }[];
}
const enrollmentOf = async (seqId: string, id: string) =>
  (await ctx.request('GET', `/outreach/sequencer/sequences/${seqId}/enrollments/${id}`, { token: t.session })).body;
const uniqueEmail = (name: string) => `${name}-${crypto.randomBytes(4).toString('hex')}@prospects.test`;

/** The unfolded value of a header in the raw message as received. */
function rawHeader(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw.toString('utf8').split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** One mail of a one-step sequence to a new contact; its sequence, enrollment, contact address and the mail. */
async function sendOne(steps: Record<string, unknown>[] = [{ delay_days: 0, subject: 'Hello', body: 'Hi' }, { delay_days: 3, body: 'Again' }]) {
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
    env: { OUTREACH_POLL_INTERVAL_MS: '300', PUBLIC_BASE_URL: 'https://crm.example.test', OUTREACH_UNSUBSCRIBE_PER_ADDRESS: String(UNSUBSCRIBE_LIMIT) },
  });
  t = await tenant();
});
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

describe('one-click unsubscribe (RFC 8058)', () => {
  it('every step carries List-Unsubscribe and List-Unsubscribe-Post; {{unsubscribe_url}} names the same link', async () => {
    const { mail } = await sendOne([{ delay_days: 0, subject: 'Hello', body: 'Hi\n\nNot for you? {{unsubscribe_url}}', body_html: '<p><a href="{{unsubscribe_url}}">unsubscribe</a></p>' }]);
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

    const oneClick = () => ctx.request('POST', path, { rawBody: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    const first = await oneClick();
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ unsubscribed: true });
    const again = await oneClick();
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ unsubscribed: true });

    expect(await enrollmentOf(seq.id, enrollment.id)).toMatchObject({ status: 'suppressed', next_send_at: null });
    const listed = await ctx.deps.sql<{ reason: string }[]>`SELECT reason FROM outreach_suppressions WHERE org_id = ${t.orgId} AND lower(email) = ${email}`;
    expect(listed).toEqual([{ reason: 'unsubscribe' }]);
    const [row] = await ctx.deps.sql<{ unsubscribed_at: Date | null }[]>`SELECT unsubscribed_at FROM outreach_enrollments WHERE id = ${enrollment.id}`;
    expect(row!.unsubscribed_at).toBeInstanceOf(Date);

    // The page's own button (a browser) gets a page back; the page now says it is done.
    const browser = await ctx.request('POST', path, { rawBody: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' } });
    expect(browser.status).toBe(200);
    expect(browser.text).toContain('You are unsubscribed');
    expect((await ctx.request('GET', path)).text).toContain('You are unsubscribed');
  });

  it('an unknown or malformed token is the same 404; a large body is 413 and changes nothing', async () => {
    for (const token of ['0'.repeat(64), 'nope', crypto.randomBytes(32).toString('hex')]) {
      const get = await ctx.request('GET', `/outreach/unsubscribe/${token}`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ detail: 'Unsubscribe link not found' });
      const post = await ctx.request('POST', `/outreach/unsubscribe/${token}`, { rawBody: 'List-Unsubscribe=One-Click', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(post.status).toBe(404);
      expect(post.body).toEqual({ detail: 'Unsubscribe link not found' });
    }
    const { seq, enrollment, mail } = await sendOne();
    const path = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    const big = await ctx.request('POST', path, { rawBody: `List-Unsubscribe=One-Click&pad=${'x'.repeat(2000)}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
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

  // Last in the file: it spends this process's unsubscribe budget for the test client's address.
  it('limits requests per client address (429 with Retry-After), before any lookup', async () => {
    let limited: Awaited<ReturnType<typeof ctx.request>> | undefined;
    for (let i = 0; i <= UNSUBSCRIBE_LIMIT && !limited; i++) {
      const res = await ctx.request('GET', `/outreach/unsubscribe/${crypto.randomBytes(32).toString('hex')}`);
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(404);
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
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
    const reply = await ctx.request('POST', `/outreach/sequencer/unibox/threads/${threadId}/reply`, { token: t.session, body: { text: 'Following up by hand' } });
    expect(reply.status, reply.text).toBe(200);
    const [, manual] = await smtp.waitForMail(email, 2);
    const [replyResult] = await verify(manual!.raw, added.body);
    expect(replyResult).toMatchObject({ signingDomain: name, selector: 'outreach', status: { result: 'pass' } });
  });
});
