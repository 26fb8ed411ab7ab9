import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { mailboxSender } from '../../services/outreach/mailbox-sender';
import { mailboxImapSettings } from '../../services/outreach/mailbox-servers';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// Fault probe: connecting a mailbox must not let a caller probe our own network. With private mail
// hosts not allowed (the production default), a loopback or private SMTP/IMAP host is refused before
// anything is dialled, with the answer an unreachable public server gets: an open port, a closed one
// and a name that does not resolve cannot be told apart.

const SMTP_REFUSED = { detail: 'SMTP server not reachable: smtp.host must name a public mail server that answers on smtp.port' };
const IMAP_REFUSED = { detail: 'IMAP server not reachable: imap.host must name a public mail server that answers on imap.port' };
/** A public address that nothing here dials (mailboxes saved without the login check). */
const PUBLIC_HOST = '1.1.1.1';

let ctx: TestContext;
let a: Tenant & { orgId: string };
let listener: net.Server;
let dialled = 0;

beforeAll(async () => {
  ctx = await createTestContext({ env: { OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS: 'false' } });
  const t = await newTenant(ctx, ['outreach:provision']);
  a = { ...t, orgId: await orgUuid(ctx, t) };
  // An open port that greets like an SMTP server and counts who connects.
  listener = net.createServer((socket) => {
    dialled += 1;
    socket.end('220 probe.local ESMTP\r\n');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  listener?.close();
  await ctx?.close();
});

const connect = (body: Record<string, unknown>) => ctx.request('POST', '/outreach/mailboxes', { token: a.session, body });
const mailbox = (smtp: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  email_address: `probe-${Math.random().toString(36).slice(2, 8)}@acme.test`,
  smtp: { secure: false, ...smtp },
  ...extra,
});
const saved = async () => (await ctx.deps.sql`SELECT count(*)::int AS n FROM outreach_mailboxes WHERE org_id = ${a.orgId}`)[0]!.n;

describe('mailbox hosts when private ones are not allowed (fault probe)', () => {
  it('a loopback SMTP host is refused without being dialled: an open port and a closed one get the same answer, at once', async () => {
    const open = (listener.address() as net.AddressInfo).port;
    const closed = await freePort();
    const before = await saved();
    const answers = [];
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]']) {
      for (const port of [open, closed]) {
        const started = Date.now();
        const res = await connect(mailbox({ host, port }, { verify_smtp: true }));
        answers.push({ host, port, status: res.status, body: res.body, ms: Date.now() - started });
      }
    }
    for (const answer of answers) {
      expect({ status: answer.status, body: answer.body }, `${answer.host}:${answer.port}`).toEqual({ status: 400, body: SMTP_REFUSED });
      // No connect timeout waited out: nothing was dialled.
      expect(answer.ms, `${answer.host}:${answer.port}`).toBeLessThan(8000); // below the 10 s SMTP connection timeout
    }
    expect(dialled).toBe(0);
    expect(await saved()).toBe(before);
  });

  it('refuses private, link-local, metadata and unspecified SMTP hosts, and names that do not resolve, with the same answer, checked or not', async () => {
    const before = await saved();
    for (const host of [
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.10',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '[fd00::1]',
      '[fe80::1]',
      'no-such-host.invalid',
    ]) {
      for (const verify_smtp of [true, false]) {
        const res = await connect(mailbox({ host, port: 25 }, { verify_smtp }));
        expect({ status: res.status, body: res.body }, `${host} verify=${verify_smtp}`).toEqual({ status: 400, body: SMTP_REFUSED });
      }
    }
    expect(await saved()).toBe(before);
  });

  it('holds the IMAP host to the same rule', async () => {
    const res = await connect(
      mailbox(
        { host: PUBLIC_HOST, port: 587 },
        { imap: { host: '127.0.0.1', port: 993, secure: true, username: 'u', password: 'imap-pass-1' } },
      ),
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: IMAP_REFUSED });
  });

  it('accepts a public host, and a stored mailbox whose host became private can neither send nor be polled', async () => {
    const res = await connect(
      mailbox(
        { host: PUBLIC_HOST, port: 587, username: 'u', password: 'smtp-pass-1' },
        { imap: { host: PUBLIC_HOST, port: 993, secure: true } },
      ),
    );
    expect(res.status, res.text).toBe(200);
    // As if its name now resolved to loopback, or the mailbox dated from a deployment that allowed it.
    await ctx.deps
      .sql`UPDATE outreach_mailboxes SET smtp_host = '127.0.0.1', smtp_port = ${(listener.address() as net.AddressInfo).port}, imap_host = '127.0.0.1' WHERE id = ${res.body.id}`;
    const sender = await mailboxSender(ctx.deps, a.orgId, res.body.id);
    await expect(sender.send({ to: 'x@prospect.test', subject: 's', text: 't' })).rejects.toMatchObject({
      kind: 'invalid',
      detail: SMTP_REFUSED.detail,
    });
    await expect(mailboxImapSettings(ctx.deps, a.orgId, res.body.id)).rejects.toMatchObject({
      kind: 'invalid',
      detail: IMAP_REFUSED.detail,
    });
    expect(dialled).toBe(0);
  });
});
