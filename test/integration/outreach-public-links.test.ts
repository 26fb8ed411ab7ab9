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

// The public addresses a sent step names, as a person reaches them on the real sender workflow and a
// real SMTP server: a tracked link or pixel and the unsubscribe page with whatever query the link gained
// on the way, and the one-click headers over-signed so that a copy added on the way fails DKIM.

let ctx: TestContext;
let smtp: TestSmtpServer;
let t: Tenant & { orgId: string };

const { sequence, activate, enroll } = sequencerCalls(() => ({ ctx, token: t.session }));

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({ worker: true, env: { OUTREACH_POLL_INTERVAL_MS: '300', PUBLIC_BASE_URL: 'https://crm.example.test' } });
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  t = { ...x, orgId: await orgUuid(ctx, x) };
});
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

type Domain = { id: string; name: string; records: { purpose: string; host: string; value: string }[] };

/** A verified sending domain with tracking on, a mailbox on it, and one tracked step sent to a new contact. */
async function sendTracked(): Promise<{ domain: Domain; mail: ReceivedMail; messageId: string }> {
  const name = `mail-${crypto.randomBytes(4).toString('hex')}.example`;
  const added = await ctx.request('POST', '/outreach/domains', { token: t.session, body: { name, tracking_enabled: true } });
  expect(added.status, added.text).toBe(200);
  await ctx.deps.sql`UPDATE outreach_domains SET status = 'verified' WHERE id = ${added.body.id}`;
  const mailbox = await insertSmtpMailbox(ctx, t.orgId, smtp.port, { email_address: `sam@${name}` });
  const email = uniqueEmail('ada');
  const contact = await createContact(ctx, t, { first_name: 'Ada', email });
  const seq = await sequence({
    steps: [
      {
        delay_days: 0,
        subject: 'Hello',
        body: 'Hi',
        body_html: '<html><body><p>See <a href="https://example.com/pricing">pricing</a></p></body></html>',
      },
    ],
    mailbox_ids: [mailbox],
  });
  const [enrollment] = await enroll(seq.id, [contact.id]);
  await activate(seq.id);
  const [mail] = await smtp.waitForMail(email, 1);
  const message = await waitFor(async () => {
    const [row] = await ctx.deps.sql<{ id: string; status: string }[]>`
      SELECT id, status FROM outreach_messages WHERE enrollment_id = ${enrollment!.id} AND direction = 'outbound'`;
    return row?.status === 'sent' && row;
  });
  // Delivered "an hour ago": what follows is a person, not a prefetch.
  await ctx.deps.sql`UPDATE outreach_messages SET sent_at = now() - interval '1 hour' WHERE id = ${message.id}`;
  return { domain: added.body, mail: mail!, messageId: message.id };
}

/** The unfolded value of a header in the raw message as received. */
function rawHeader(mail: ReceivedMail, name: string): string | undefined {
  const head = mail.raw
    .toString('utf8')
    .split(/\r?\n\r?\n/)[0]!
    .replace(/\r?\n[ \t]+/g, ' ');
  return head
    .split(/\r?\n/)
    .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    ?.slice(name.length + 1)
    .trim();
}

const visit = (path: string, init: { method?: string; accept?: string } = {}) =>
  fetch(`${ctx.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: { 'User-Agent': BROWSER_USER_AGENT, Accept: init.accept ?? 'text/html' },
  });

const GAINED = 'fbclid=IwAR3xyz&utm_source=newsletter&utm_medium=email&gclid=abc';

describe('a link keeps working whatever query it gained on the way', () => {
  it('the click redirects, the pixel answers, the unsubscribe page shows and its POST unsubscribes, with unknown parameters', async () => {
    const { mail, messageId } = await sendTracked();
    const html = mail.mail.html as string;
    const click = /href="https:\/\/track\.[^/"]+(\/t\/c\/[A-Za-z0-9_-]+)"/.exec(html)![1]!;
    const pixel = /src="https:\/\/track\.[^/"]+(\/t\/o\/[A-Za-z0-9_-]+\.gif)"/.exec(html)![1]!;

    const redirected = await visit(`${click}?${GAINED}`);
    expect(redirected.status).toBe(302);
    // The recorded URL, never one from the request.
    expect(redirected.headers.get('location')).toBe('https://example.com/pricing');
    const image = await visit(`${pixel}?${GAINED}`, { accept: 'image/*' });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/gif');
    const recorded = await ctx.deps.sql<
      { kind: string }[]
    >`SELECT kind FROM outreach_tracking_events WHERE message_id = ${messageId} ORDER BY kind`;
    expect(recorded.map((e) => e.kind)).toEqual(['click', 'open']);

    const unsubscribe = new URL(rawHeader(mail, 'List-Unsubscribe')!.slice(1, -1)).pathname;
    const page = await visit(`${unsubscribe}?${GAINED}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
    const done = await fetch(`${ctx.baseUrl}${unsubscribe}?${GAINED}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ unsubscribed: true });
  });

  it('the document says these routes ignore their query, and answers 400 only for a query that is not UTF-8', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/t/c/{token}', 'get'],
      ['/t/o/{token}.gif', 'get'],
      ['/outreach/unsubscribe/{token}', 'get'],
      ['/outreach/unsubscribe/{token}', 'post'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op.description, `${method} ${path}`).toMatch(/Query parameters are ignored/);
      expect((op.parameters ?? []).filter((p: { in: string }) => p.in === 'query')).toEqual([]);
      expect(op.responses['400'].description).toMatch(/not valid UTF-8/);
      expect(op.responses['400'].description).not.toMatch(/Unknown query parameter/);
    }
    const bad = await visit('/t/c/whatever?x=%FF');
    expect(bad.status).toBe(400);
  });
});

describe('DKIM over-signing', () => {
  /** Verifies the raw message against the domain's published DKIM record, as a receiving server would. */
  async function verify(raw: Buffer, domain: Domain) {
    const record = domain.records.find((r) => r.purpose === 'dkim')!;
    const resolver = async (name: string, type: string) => {
      if (type === 'TXT' && name === record.host) return [[record.value]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    };
    return (await dkimVerify(raw, { resolver })).results[0]!;
  }

  it('lists the one-click fields (and From, Subject) once more than they appear: a prepended copy fails verification', async () => {
    const { domain, mail } = await sendTracked();
    const signature = rawHeader(mail, 'DKIM-Signature')!;
    const h = /(?:^|;)\s*h=([^;]+)/.exec(signature)![1]!.replace(/\s+/g, '').split(':');
    const count = (name: string) => h.filter((f) => f === name).length;
    expect(count('list-unsubscribe')).toBe(2);
    expect(count('list-unsubscribe-post')).toBe(2);
    expect(count('from')).toBe(2);
    expect(count('subject')).toBe(2);
    expect(count('to')).toBe(1);

    expect((await verify(mail.raw, domain)).status.result).toBe('pass');

    const prepend = (field: string) => Buffer.concat([Buffer.from(`${field}\r\n`), mail.raw]);
    const elsewhere = prepend('List-Unsubscribe: <https://evil.example/unsubscribe>');
    expect((await verify(elsewhere, domain)).status.result).not.toBe('pass');
    expect((await verify(prepend('List-Unsubscribe-Post: List-Unsubscribe=One-Click'), domain)).status.result).not.toBe('pass');
    expect((await verify(prepend('From: Mallory <mallory@evil.example>'), domain)).status.result).not.toBe('pass');
    // A field that is not over-signed may be added without breaking it (as relays add Received).
    expect((await verify(prepend('X-Relayed-By: mx.example'), domain)).status.result).toBe('pass');
  });
});
