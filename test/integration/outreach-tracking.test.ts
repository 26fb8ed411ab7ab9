import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { BROWSER_USER_AGENT } from '../support/http';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { insertSmtpMailbox, sequencerCalls, uniqueEmail } from '../support/outreach-sequencer';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../support/smtp-server';

// Open and click tracking on the real sender workflow and a real SMTP server: the pixel and rewritten
// links of a tracked step, their public routes (signed tokens, no open redirect), machines counted
// apart, the analytics; nothing added when tracking is off. Then the signed one-click unsubscribe
// headers, the unsubscribe page for people, and a bounce refused at send time.

const UNSUBSCRIBE_LIMIT = 6;

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: Tenant & { orgId: string };

const insertMailbox = (orgId: string, values: Record<string, unknown> = {}) => insertSmtpMailbox(ctx, orgId, smtp.port, values);
const { sequence, activate, enroll, enrollmentOf } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  // Addresses ending in .refused are refused by the receiving server at RCPT TO (550).
  smtp = await startSmtpServer({ refuse: (address) => address.endsWith('.refused') });
  ctx = await createTestContext({
    worker: true,
    env: {
      OUTREACH_POLL_INTERVAL_MS: '300',
      PUBLIC_BASE_URL: 'https://crm.example.test',
      OUTREACH_UNSUBSCRIBE_PER_TOKEN: String(UNSUBSCRIBE_LIMIT),
      // The test client stands in for a proxy forwarding each visitor's address.
      TRUSTED_PROXIES: '127.0.0.1',
    },
  });
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  t = { ...x, orgId: await orgUuid(ctx, x) };
});
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

/** A sending domain of the organization; verified (its DNS checked) when `verified`. */
async function sendingDomain(tracking: boolean, verified = true) {
  const name = `mail-${crypto.randomBytes(4).toString('hex')}.example`;
  const added = await ctx.request('POST', '/outreach/domains', { token: t.session, body: { name, tracking_enabled: tracking } });
  expect(added.status, added.text).toBe(200);
  if (verified) await ctx.deps.sql`UPDATE outreach_domains SET status = 'verified' WHERE id = ${added.body.id}`;
  return added.body as { id: string; name: string; records: { purpose: string; host: string; value: string }[] };
}

const HTML =
  '<html><body><p>Hi {{first_name}}, see <a class="cta" href="https://example.com/pricing?a=1&amp;b=2">pricing</a> and ' +
  '<a href=\'https://docs.example.com/start\'>docs</a>, <a href="mailto:sam@example.com">mail me</a>.</p>' +
  '<p><a href="{{unsubscribe_url}}">unsubscribe</a></p></body></html>';

/** One step with links sent through a mailbox of `domain` to a new contact: the mail as received, and its row. */
async function sendStep(domain: { name: string }, steps?: Record<string, unknown>[]) {
  const mailbox = await insertMailbox(t.orgId, { email_address: `sam-${crypto.randomBytes(3).toString('hex')}@${domain.name}` });
  const email = uniqueEmail('ada');
  const contact = await createContact(ctx, t, { first_name: 'Ada', email });
  const seq = await sequence({
    steps: steps ?? [{ delay_days: 0, subject: 'Hello', body: 'Hi {{first_name}}, see https://example.com/pricing', body_html: HTML }],
    mailbox_ids: [mailbox],
  });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [mail] = await smtp.waitForMail(email, 1);
  // Recorded once the server took it.
  const message = await waitFor(async () => {
    const [row] = await ctx.deps.sql<{ id: string; status: string; html_body: string | null }[]>`
      SELECT id, status, html_body FROM outreach_messages WHERE enrollment_id = ${enrollment!.id} AND direction = 'outbound'`;
    return row?.status === 'sent' && row;
  });
  return { seq, enrollment: enrollment!, email, mail: mail!, message, mailbox };
}

/** The message as received handed "an hour after" its delivery: what follows is not a prefetch. */
const anHourLater = (messageId: string) =>
  ctx.deps.sql`UPDATE outreach_messages SET sent_at = now() - interval '1 hour' WHERE id = ${messageId}`;

const events = (messageId: string) =>
  ctx.deps.sql<{ kind: string; link_index: number | null; bot_reason: string | null }[]>`
    SELECT kind, link_index, bot_reason FROM outreach_tracking_events WHERE message_id = ${messageId} ORDER BY occurred_at, id`;

/** A GET as a browser (or as `userAgent`) from `address`, redirects not followed. */
function visit(path: string, { userAgent = BROWSER_USER_AGENT, address = '198.51.100.7', accept = '*/*', method = 'GET' } = {}) {
  return fetch(`${ctx.baseUrl}${path}`, {
    method,
    redirect: 'manual',
    headers: { 'User-Agent': userAgent, 'X-Forwarded-For': address, Accept: accept },
  });
}

const trackedPaths = (html: string, host: string) => ({
  pixel: [...html.matchAll(new RegExp(`https://${host.replace(/\./g, '\\.')}(/t/o/[A-Za-z0-9_-]+\\.gif)`, 'g'))].map((m) => m[1]!),
  clicks: [...html.matchAll(new RegExp(`href="https://${host.replace(/\./g, '\\.')}(/t/c/[A-Za-z0-9_-]+)"`, 'g'))].map((m) => m[1]!),
});

describe('open and click tracking', () => {
  it('a tracked step gets a pixel and its web links rewritten on the tracking host, in its HTML only; the stored copy stays as written', async () => {
    const domain = await sendingDomain(true);
    const { mail, message } = await sendStep(domain);
    const html = mail.mail.html as string;
    const host = `track.${domain.name}`;
    const { pixel, clicks } = trackedPaths(html, host);
    expect(pixel).toHaveLength(1);
    expect(html).toMatch(/<img src="https:\/\/track\.[^"]+\.gif" width="1" height="1" alt=""[^>]*><\/body>/);
    expect(clicks).toHaveLength(2);
    expect(html).toContain('<a class="cta" href="https://track.');
    // mailto: and the unsubscribe link stay as written; the originals are gone from the HTML.
    expect(html).toContain('href="mailto:sam@example.com"');
    expect(html).toMatch(/href="https:\/\/crm\.example\.test\/outreach\/unsubscribe\/[0-9a-f]{64}"/);
    expect(html).not.toContain('https://example.com/pricing');
    expect(html).not.toContain('https://docs.example.com/start');
    // The text part is never touched.
    expect(mail.mail.text).toContain('https://example.com/pricing');
    // The unibox copy is the HTML as written: a person reading their own thread loads no pixel.
    expect(message.html_body).not.toContain('/t/o/');
    expect(message.html_body).toContain('https://example.com/pricing?a=1&amp;b=2');

    // Each click redirects to the URL recorded for that message and link, whatever the request says.
    const first = await visit(clicks[0]!);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('https://example.com/pricing?a=1&b=2');
    expect(first.headers.get('cache-control')).toContain('no-store');
    expect((await visit(clicks[1]!)).headers.get('location')).toBe('https://docs.example.com/start');
    // No open redirect: a URL in the query is ignored, never followed; the link goes where the step said.
    const steered = await visit(`${clicks[0]}?url=${encodeURIComponent('https://evil.example')}`);
    expect(steered.status).toBe(302);
    expect(steered.headers.get('location')).toBe('https://example.com/pricing?a=1&b=2');

    const open = await visit(pixel[0]!);
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('image/gif');
    expect(
      Buffer.from(await open.arrayBuffer())
        .subarray(0, 6)
        .toString('latin1'),
    ).toBe('GIF89a');
  });

  it('a tampered, made-up or swapped token is 404 (JSON for a client, a page for a browser) and records nothing', async () => {
    const domain = await sendingDomain(true);
    const { mail, message } = await sendStep(domain);
    const { pixel, clicks } = trackedPaths(mail.mail.html as string, `track.${domain.name}`);
    const clickToken = clicks[0]!.slice('/t/c/'.length);
    const openToken = pixel[0]!.slice('/t/o/'.length, -'.gif'.length);
    // A change anywhere in the token: the id it names, the link index, or the signature.
    const flip = (token: string, at: number) => {
      const bytes = Buffer.from(token, 'base64url');
      bytes[at] = bytes[at]! ^ 1;
      return bytes.toString('base64url');
    };
    for (const path of [
      `/t/c/${flip(clickToken, 0)}`,
      `/t/c/${flip(clickToken, 17)}`,
      `/t/c/${flip(clickToken, 30)}`,
      `/t/o/${flip(openToken, 3)}.gif`,
      `/t/c/${openToken}`, // an open token is no click token
      `/t/o/${clickToken}.gif`,
      `/t/c/${crypto.randomBytes(34).toString('base64url')}`,
      '/t/c/nope',
    ]) {
      const res = await visit(path, { accept: 'application/json' });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toEqual({ detail: 'Link not found' });
    }
    const page = await visit(`/t/c/${flip(clickToken, 30)}`, { accept: 'text/html,application/xhtml+xml' });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('This link is not valid');
    expect(await events(message.id)).toEqual([]);
  });

  it('counts people apart from machines: Apple Mail Privacy Protection, prefetches, bots, scanners and HEAD requests', async () => {
    const domain = await sendingDomain(true);
    const { mail, message, seq } = await sendStep(domain);
    const { pixel, clicks } = trackedPaths(mail.mail.html as string, `track.${domain.name}`);

    // Within seconds of delivery: a prefetch, and a scanner's click.
    await ctx.deps.sql`UPDATE outreach_messages SET sent_at = now() WHERE id = ${message.id}`;
    expect((await visit(pixel[0]!)).status).toBe(200);
    expect((await visit(clicks[1]!)).status).toBe(302);
    await anHourLater(message.id);
    await ctx.deps.sql`UPDATE outreach_tracking_events SET occurred_at = occurred_at - interval '1 hour' WHERE message_id = ${message.id}`;
    // Apple's proxies (by address or by their bare User-Agent), a bot, a HEAD request.
    await visit(pixel[0]!, { address: '17.58.101.4' });
    await visit(pixel[0]!, { userAgent: 'Mozilla/5.0' });
    await visit(pixel[0]!, { userAgent: 'curl/8.5.0' });
    await visit(pixel[0]!, { method: 'HEAD' });
    // Gmail's image proxy fetches when a person opens: a person's open. Then a person in a browser.
    await visit(pixel[0]!, { userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' });
    await visit(pixel[0]!);
    expect((await visit(clicks[0]!)).status).toBe(302);
    expect(await events(message.id)).toEqual([
      { kind: 'open', link_index: null, bot_reason: 'prefetch' },
      { kind: 'click', link_index: 1, bot_reason: 'scanner' },
      { kind: 'open', link_index: null, bot_reason: 'apple_privacy' },
      { kind: 'open', link_index: null, bot_reason: 'apple_privacy' },
      { kind: 'open', link_index: null, bot_reason: 'bot' },
      { kind: 'open', link_index: null, bot_reason: 'head' },
      { kind: 'open', link_index: null, bot_reason: null },
      { kind: 'open', link_index: null, bot_reason: null },
      { kind: 'click', link_index: 0, bot_reason: null },
    ]);

    const res = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session });
    expect(res.status, res.text).toBe(200);
    const figures = {
      sent: 1,
      delivered: 1,
      tracked: 1,
      opens: 2,
      unique_opens: 1,
      clicks: 1,
      unique_clicks: 1,
      machine_opens: 5,
      machine_clicks: 1,
      rates: expect.objectContaining({ open: 1, click: 1 }),
    };
    expect(res.body).toMatchObject(figures);
    expect(res.body.steps[0]).toMatchObject(figures);
    expect(res.body.steps[0].variants[0]).toMatchObject({ variant: 0, ...figures });
  });

  it('a scanner following every link of a message at once is a machine, its earlier clicks too', async () => {
    const domain = await sendingDomain(true);
    const { mail, message, seq } = await sendStep(domain);
    const { clicks } = trackedPaths(mail.mail.html as string, `track.${domain.name}`);
    await anHourLater(message.id);
    await visit(clicks[0]!);
    await visit(clicks[1]!);
    expect(await events(message.id)).toEqual([
      { kind: 'click', link_index: 0, bot_reason: 'scanner' },
      { kind: 'click', link_index: 1, bot_reason: 'scanner' },
    ]);
    const res = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session });
    expect(res.body).toMatchObject({ clicks: 0, unique_clicks: 0, machine_clicks: 2, rates: expect.objectContaining({ click: 0 }) });
  });

  it('adds nothing when tracking is off (or its domain is not verified): no pixel, the links as written, no open rate', async () => {
    for (const domain of [await sendingDomain(false), await sendingDomain(true, false)]) {
      const { mail, message, seq } = await sendStep(domain);
      const html = mail.mail.html as string;
      expect(html).not.toContain('/t/o/');
      expect(html).not.toContain('/t/c/');
      expect(html).not.toContain('<img');
      expect(html).toContain('href="https://example.com/pricing?a=1&amp;b=2"');
      expect(html).toContain("href='https://docs.example.com/start'");
      expect(await ctx.deps.sql`SELECT 1 FROM outreach_tracked_messages WHERE message_id = ${message.id}`).toHaveLength(0);
      const res = await ctx.request('GET', `/outreach/sequencer/sequences/${seq.id}/analytics`, { token: t.session });
      expect(res.body).toMatchObject({ sent: 1, tracked: 0, opens: 0, rates: expect.objectContaining({ open: null, click: null }) });
    }
  });

  it('declares the public routes with their statuses', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const open = doc.paths['/t/o/{token}.gif'].get;
    const click = doc.paths['/t/c/{token}'].get;
    expect(open.security).toEqual([]);
    expect(click.security).toEqual([]);
    expect(Object.keys(open.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
    expect(Object.keys(click.responses)).toEqual(expect.arrayContaining(['302', '404', '422']));
    expect(doc.components.schemas.OutreachSequenceAnalytics.properties).toHaveProperty('unique_opens');
  });
});

/** The unfolded value of a header in the raw message as received. */
function rawHeader(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw
    .toString('utf8')
    .split(/\r?\n\r?\n/)[0]!
    .replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

describe('one-click unsubscribe', () => {
  async function verify(raw: Buffer, domain: { records: { purpose: string; host: string; value: string }[] }) {
    const record = domain.records.find((r) => r.purpose === 'dkim')!;
    const resolver = async (name: string, type: string) => {
      if (type === 'TXT' && name === record.host) return [[record.value]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    };
    return (await dkimVerify(raw, { resolver })).results[0]!.status.result;
  }

  it('signs List-Unsubscribe and List-Unsubscribe-Post with DKIM: a copy with either altered fails verification', async () => {
    const domain = await sendingDomain(true);
    const { mail } = await sendStep(domain);
    const signature = rawHeader(mail, 'DKIM-Signature')!;
    const signed = /\bh=([^;]+)/.exec(signature)![1]!.replace(/\s+/g, '').toLowerCase().split(':');
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
    expect(await verify(mail.raw, domain)).toBe('pass');

    const raw = mail.raw.toString('utf8');
    const post = raw.replace('List-Unsubscribe-Post: List-Unsubscribe=One-Click', 'List-Unsubscribe-Post: List-Unsubscribe=Later');
    expect(post).not.toBe(raw);
    expect(await verify(Buffer.from(post), domain)).not.toBe('pass');
    const link = raw.replace(/(List-Unsubscribe:\s*<https:\/\/)crm\.example\.test\//, '$1evil.example.test/');
    expect(link).not.toBe(raw);
    expect(await verify(Buffer.from(link), domain)).not.toBe('pass');
  });

  it('the page names the sender and the address, before and after; unknown links are a page for a browser and JSON for a client', async () => {
    const domain = await sendingDomain(false);
    const { mail, email } = await sendStep(domain);
    const path = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    const sender = mail.mail.from!.value[0]!.address!;
    const browser = { headers: { Accept: 'text/html,application/xhtml+xml', 'X-Forwarded-For': '198.51.100.20' } };
    const page = await ctx.request('GET', path, browser);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<strong>Sam Sender</strong> (${sender})`);
    expect(page.text).toContain(`<strong>${email}</strong>`);
    const done = await ctx.request('POST', path, {
      ...browser,
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { ...browser.headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(done.status).toBe(200);
    expect(done.text).toContain(`<strong>${email}</strong> will not receive emails from <strong>Sam Sender</strong> (${sender}) again.`);

    const unknown = `/outreach/unsubscribe/${crypto.randomBytes(32).toString('hex')}`;
    for (const method of ['GET', 'POST'] as const) {
      const html = await ctx.request(method, unknown, browser);
      expect(html.status).toBe(404);
      expect(html.headers.get('content-type')).toMatch(/^text\/html/);
      expect(html.text).toContain('This unsubscribe link is not valid');
      const json = await ctx.request(method, unknown, { headers: { 'X-Forwarded-For': '198.51.100.20' } });
      expect(json.status).toBe(404);
      expect(json.body).toEqual({ detail: 'Unsubscribe link not found' });
    }
  });

  it('the 429 is a page with Retry-After for a browser and JSON for a client', async () => {
    const address = '198.51.100.99';
    let limited: Awaited<ReturnType<typeof ctx.request>> | undefined;
    for (let i = 0; i <= UNSUBSCRIBE_LIMIT && !limited; i++) {
      const res = await ctx.request('GET', `/outreach/unsubscribe/${'a'.repeat(64)}`, { headers: { 'X-Forwarded-For': address } });
      if (res.status === 429) limited = res;
    }
    expect(limited?.body).toEqual({ detail: 'Too many requests, retry later' });
    const page = await ctx.request('GET', `/outreach/unsubscribe/${'a'.repeat(64)}`, {
      headers: { 'X-Forwarded-For': address, Accept: 'text/html' },
    });
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.text).toContain('Too many requests');
  });
});

describe('a bounce refused at send time', () => {
  it('stops the enrollment, suppresses the address and notifies the sequence owner with the contact, sequence and mailbox', async () => {
    const domain = await sendingDomain(false);
    const mailbox = await insertMailbox(t.orgId, { email_address: `sam@${domain.name}` });
    const email = `grace-${crypto.randomBytes(4).toString('hex')}@prospects.refused`;
    const contact = await createContact(ctx, t, { first_name: 'Grace', last_name: 'Hopper', email });
    const seq = await sequence({ name: 'Q3 founders', steps: [{ delay_days: 0, subject: 'Hello', body: 'Hi' }], mailbox_ids: [mailbox] });
    const [enrollment] = await enroll(seq.id, [contact.id]);
    await activate(seq.id);
    await waitFor(async () => (await enrollmentOf(seq.id, enrollment!.id)).status === 'bounced', 30_000, 'the bounce');
    expect(smtp.to(email)).toEqual([]);
    const threadId = (await enrollmentOf(seq.id, enrollment!.id)).thread_id;
    const [owner] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${t.user}`;
    const outbox = await ctx.deps.sql<{ event_type: string; payload: Record<string, unknown>; recipient_user_ids: string[] }[]>`
      SELECT event_type, payload, recipient_user_ids FROM notification_outbox WHERE entity_id = ${threadId}`;
    expect(outbox).toEqual([
      {
        event_type: 'outreach.message_bounced',
        recipient_user_ids: [owner!.id],
        payload: expect.objectContaining({
          thread_id: threadId,
          enrollment_id: enrollment!.id,
          contact_id: contact.id,
          contact_name: 'Grace Hopper',
          contact_email: email,
          sequence_id: seq.id,
          sequence_name: 'Q3 founders',
          mailbox_id: mailbox,
          mailbox_address: `sam@${domain.name}`,
          mailbox_name: 'Sam Sender',
          stage: 'smtp',
          status: '5.1.1',
          enrollment_stopped: true,
          suppressed: true,
        }),
      },
    ]);
    const listed = await ctx.deps.sql`SELECT reason FROM outreach_suppressions WHERE org_id = ${t.orgId} AND lower(email) = ${email}`;
    expect(listed).toEqual([{ reason: 'bounce' }]);
  });
});
