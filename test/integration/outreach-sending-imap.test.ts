import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact } from '../support/crm-contacts';
import { keepHistory } from '../support/histories';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

// Replies read by IMAP polling: a mailbox connected with IMAP settings gets its poller when a sequence
// using it is activated; a reply appended to its INBOX (a real IMAP server, hoodiecrow) lands in the
// thread and stops the enrollment.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const hoodiecrow = require('hoodiecrow-imap') as (options: Record<string, unknown>) => {
  listen(port: number, host: string, cb?: () => void): void;
  appendMessage(mailbox: string, flags: string[], internaldate: Date, raw: string): void;
  server: { close(cb?: () => void): void };
};

const IMAP_PASSWORD = `imap-${crypto.randomBytes(10).toString('hex')}`;

let ctx: TestContext;
let smtp: TestSmtpServer;
let imap: ReturnType<typeof hoodiecrow>;
let imapPort: number;
let t: Tenant & { orgId: string };

beforeAll(async () => {
  smtp = await startSmtpServer();
  imapPort = await freePort();
  imap = hoodiecrow({
    users: { sam: { password: IMAP_PASSWORD } },
    storage: { INBOX: { messages: [] }, '': { separator: '/', folders: {} } },
  });
  await new Promise<void>((resolve) => imap.listen(imapPort, '127.0.0.1', resolve));
  ctx = await createTestContext({ worker: true, env: { OUTREACH_POLL_INTERVAL_MS: '300', OUTREACH_IMAP_POLL_SECONDS: '1' } });
  const x = await newTenant(ctx, ['api:read', 'api:manage', 'outreach:manage']);
  t = { ...x, orgId: await orgUuid(ctx, x) };
});
const kept: [string, string][] = [];
afterAll(async () => {
  for (const [id, name] of kept) keepHistory(ctx.config.TEMPORAL_ADDRESS!, id, name);
  await ctx?.close();
  await smtp?.close();
  await new Promise<void>((resolve) => (imap ? imap.server.close(() => resolve()) : resolve()));
});

describe('IMAP polling', () => {
  it('places a reply read from the mailbox’s INBOX in its thread and stops the enrollment; the password shows nowhere', async () => {
    const port = Number(new URL(smtp.url).port);
    const connected = await ctx.request('POST', '/outreach/mailboxes', {
      token: t.session,
      body: {
        email_address: 'sam@imap-outreach.test',
        smtp: { host: '127.0.0.1', port, secure: false },
        imap: { host: '127.0.0.1', port: imapPort, secure: false, username: 'sam', password: IMAP_PASSWORD },
        window_start: '00:00',
        window_end: '24:00',
        window_days: [1, 2, 3, 4, 5, 6, 7],
      },
    });
    expect(connected.status, connected.text).toBe(200);
    const mailboxId = connected.body.id;
    const email = `ida-${crypto.randomBytes(4).toString('hex')}@prospects.test`;
    const contact = await createContact(ctx, t, { first_name: 'Ida', email });
    const seq = await ctx.request('POST', '/outreach/sequencer/sequences', {
      token: t.session,
      body: {
        name: 'imap',
        steps: [
          { delay_days: 0, subject: 'Hello', body: 'Hi' },
          { delay_days: 1, body: 'Again' },
        ],
        mailbox_ids: [mailboxId],
      },
    });
    const enrolled = await ctx.request('POST', `/outreach/sequencer/sequences/${seq.body.id}/enrollments`, {
      token: t.session,
      body: { contact_ids: [contact.id] },
    });
    const enrollmentId = enrolled.body.enrolled[0].id;
    expect((await ctx.request('POST', `/outreach/sequencer/sequences/${seq.body.id}/activate`, { token: t.session })).status).toBe(200);
    const [sent] = await smtp.waitForMail(email, 1);

    const reply = [
      `From: Ida <${email}>`,
      'To: sam@imap-outreach.test',
      'Subject: Re: Hello',
      `Message-ID: <imap-reply-${crypto.randomUUID()}@prospects.test>`,
      `In-Reply-To: ${sent!.mail.messageId}`,
      '',
      'Yes, let us talk.',
      '',
    ].join('\r\n');
    imap.appendMessage('INBOX', [], new Date(), reply);

    const stopped = await waitFor(async () => {
      const e = (await ctx.request('GET', `/outreach/sequencer/sequences/${seq.body.id}/enrollments/${enrollmentId}`, { token: t.session }))
        .body;
      return e.status === 'replied' && e;
    });
    const thread = (await ctx.request('GET', `/outreach/sequencer/unibox/threads/${stopped.thread_id}`, { token: t.session })).body;
    expect(thread.messages.map((m: { direction: string; text: string }) => [m.direction, m.text?.trim()])).toEqual([
      ['outbound', 'Hi'],
      ['inbound', 'Yes, let us talk.'],
    ]);
    expect(thread.needs_reply).toBe(true);
    expect(JSON.stringify(thread)).not.toContain(IMAP_PASSWORD);
    expect(ctx.logs.join('\n')).not.toContain(IMAP_PASSWORD);

    // The poller (still running) keeps its history for the replay test.
    kept.push([`outreach-imap:${mailboxId}`, 'outreach-imap-poller']);
  });
});
