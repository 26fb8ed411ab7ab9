import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simpleParser } from 'mailparser';
import { freePort } from '../../dev-servers/ports';
import { mailboxSender } from '../../services/outreach/mailbox-sender';
import { mailboxImapSettings } from '../../services/outreach/mailbox-servers';
import { recordMailboxOutcome } from '../../services/outreach/mailboxes';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID } from '../support/crm-contacts';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { connectTestMailbox, smtpAddress } from '../support/outreach-mailbox';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

const SMTP_PASSWORD = 'smtp-Secret-9f8e7d6c5b';
const IMAP_PASSWORD = 'imap-Secret-1a2b3c4d5e';

let ctx: TestContext;
let smtp: TestSmtpServer;
let authSmtp: TestSmtpServer;
let a: Tenant & { orgId: string };
let b: Tenant & { orgId: string };

async function tenant(scopes = ['outreach:provision']) {
  const t = await newTenant(ctx, scopes);
  return { ...t, orgId: await orgUuid(ctx, t) };
}

beforeAll(async () => {
  ctx = await createTestContext({ env: { OUTREACH_SMTP_GREETING_TIMEOUT_MS: '1000' } });
  smtp = await startSmtpServer();
  authSmtp = await startSmtpServer({ login: { user: 'sender@acme.test', pass: SMTP_PASSWORD } });
  [a, b] = await Promise.all([tenant(), tenant()]);
});
afterAll(async () => {
  await smtp?.close();
  await authSmtp?.close();
  await ctx?.close();
});

const connect = (t: Tenant, body: Record<string, unknown>, token = t.session) =>
  ctx.request('POST', '/outreach/mailboxes', { token, body });
const withPassword = (overrides: Record<string, unknown> = {}) => ({
  email_address: `Sender-${Math.random().toString(36).slice(2, 8)}@Acme.test`,
  smtp: { host: '127.0.0.1', port: authSmtp.port, secure: false, username: 'sender@acme.test', password: SMTP_PASSWORD },
  imap: { host: '127.0.0.1', port: 993, secure: true, password: IMAP_PASSWORD },
  ...overrides,
});

describe('POST /outreach/mailboxes (connect)', () => {
  it('connects with defaults, lower-cases the address, and never returns a password', async () => {
    const body = withPassword();
    const res = await connect(a, body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      organization_id: a.orgId,
      email_address: body.email_address.toLowerCase(),
      kind: 'smtp',
      origin: 'connected',
      status: 'active',
      daily_limit: 50,
      window_start: '09:00',
      window_end: '17:00',
      window_days: [1, 2, 3, 4, 5],
      timezone: 'UTC',
      warmup_enabled: false,
      has_password: true,
      smtp: { host: '127.0.0.1', port: authSmtp.port, secure: false, username: 'sender@acme.test' },
      imap: { host: '127.0.0.1', port: 993, secure: true, username: 'sender@acme.test' },
    });
    const read = await ctx.request('GET', `/outreach/mailboxes/${res.body.id}`, { token: a.session });
    const list = await ctx.request('GET', '/outreach/mailboxes', { token: a.session });
    for (const text of [res.text, read.text, list.text]) {
      expect(text).not.toContain(SMTP_PASSWORD);
      expect(text).not.toContain(IMAP_PASSWORD);
    }
    // Stored sealed in a workflow credential, not in the mailbox row.
    const [row] = await ctx.deps.sql`SELECT * FROM outreach_mailboxes WHERE id = ${res.body.id}`;
    expect(JSON.stringify(row)).not.toContain(SMTP_PASSWORD);
    const [cred] = await ctx.deps.sql`SELECT value_ciphertext FROM workflow_credentials WHERE id = ${row!.credential_id}`;
    expect(cred!.value_ciphertext).not.toContain(SMTP_PASSWORD);
    expect(ctx.logs.join('\n')).not.toContain(SMTP_PASSWORD);
    expect(ctx.logs.join('\n')).not.toContain(IMAP_PASSWORD);
  });

  it('refuses a second mailbox with the same address in the organization (409), case aside; another organization may have it', async () => {
    const body = withPassword({ email_address: 'dup@acme.test' });
    expect((await connect(a, body)).status).toBe(200);
    const again = await connect(a, { ...body, email_address: 'DUP@acme.test' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'The organization already has a mailbox with this email address' });
    expect((await connect(b, body)).status).toBe(200);
  });

  it('verifies the SMTP login on request: a wrong password is a 400 that names no secret, and nothing is saved', async () => {
    const wrong = 'Wrong-Password-xyz123';
    const email = 'verify@acme.test';
    const res = await connect(
      a,
      withPassword({
        email_address: email,
        verify_smtp: true,
        smtp: { host: '127.0.0.1', port: authSmtp.port, secure: false, username: 'sender@acme.test', password: wrong },
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^SMTP check failed: SMTP login refused/);
    expect(res.text).not.toContain(wrong);
    expect(ctx.logs.join('\n')).not.toContain(wrong);
    const [count] = await ctx.deps
      .sql`SELECT count(*)::int AS n FROM outreach_mailboxes WHERE org_id = ${a.orgId} AND email_address = ${email}`;
    expect(count!.n).toBe(0);
    const ok = await connect(a, withPassword({ email_address: email, verify_smtp: true }));
    expect(ok.status, ok.text).toBe(200);
  });

  it('every way an SMTP server cannot be reached is one answer: closed, silent or not SMTP, same status and detail', async () => {
    const closed = await freePort();
    // A port that accepts and never greets (held to OUTREACH_SMTP_GREETING_TIMEOUT_MS), and one that answers something else.
    const silent = net.createServer(() => {});
    const other = net.createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const sockets = [silent, other];
    for (const server of sockets) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answers = [];
      for (const port of [closed, ...sockets.map((server) => (server.address() as net.AddressInfo).port)]) {
        const res = await connect(a, withPassword({ verify_smtp: true, smtp: { host: '127.0.0.1', port, secure: false } }));
        answers.push({ status: res.status, body: res.body });
      }
      const unreachable = {
        status: 400,
        body: { detail: 'SMTP server not reachable: smtp.host must name a public mail server that answers on smtp.port' },
      };
      expect(answers).toEqual([unreachable, unreachable, unreachable]);
    } finally {
      for (const server of sockets) server.close();
    }
  });

  it('validates the body (422) and rules that need more than the schema (400)', async () => {
    const base = withPassword();
    for (const body of [
      {},
      { ...base, email_address: 'not-an-email' },
      { ...base, smtp: { ...base.smtp, port: 0 } },
      { ...base, smtp: { ...base.smtp, port: 70000 } },
      { ...base, smtp: { ...base.smtp, host: 'bad host' } },
      { ...base, daily_limit: 0 },
      { ...base, daily_limit: 2001 },
      { ...base, window_start: '9:00' },
      { ...base, window_end: '24:01' },
      { ...base, window_days: [] },
      { ...base, window_days: [0] },
      { ...base, window_days: [1, 1] },
      { ...base, extra: true },
    ]) {
      expect((await connect(a, body)).status, JSON.stringify(body)).toBe(422);
    }
    for (const body of [
      { ...base, timezone: 'Mars/Olympus' },
      { ...base, window_start: '17:00', window_end: '09:00' },
      { ...base, smtp: { host: '127.0.0.1', port: 25, secure: false, password: 'x' } },
    ]) {
      expect((await connect(a, body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('stores a time zone in its canonical spelling', async () => {
    const res = await connect(a, withPassword({ timezone: 'america/new_york' }));
    expect(res.status).toBe(200);
    expect(res.body.timezone).toBe('America/New_York');
  });
});

describe('reads, settings, pause/resume, health, delete', () => {
  let id: string;
  beforeAll(async () => {
    id = (await connect(a, withPassword())).body.id;
  });

  it('lists newest first with cursor pagination, filtered by status', async () => {
    const t = await tenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await connect(t, withPassword())).body.id);
    const first = await ctx.request('GET', '/outreach/mailboxes?limit=2', { token: t.session });
    expect(first.status).toBe(200);
    expect(first.body.pagination).toMatchObject({ limit: 2, total: 5, offset: 0 });
    const seen = [...first.body.data.map((m: { id: string }) => m.id)];
    let cursor = first.body.pagination.next_cursor;
    while (cursor) {
      const next = await ctx.request('GET', `/outreach/mailboxes?limit=2&cursor=${cursor}`, { token: t.session });
      seen.push(...next.body.data.map((m: { id: string }) => m.id));
      cursor = next.body.pagination.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());
    await ctx.request('POST', `/outreach/mailboxes/${ids[0]}/pause`, { token: t.session });
    const paused = await ctx.request('GET', '/outreach/mailboxes?status=paused', { token: t.session });
    expect(paused.body.data.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    expect((await ctx.request('GET', '/outreach/mailboxes?status=gone', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/outreach/mailboxes?cursor=nonsense', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/outreach/mailboxes?limit=201', { token: t.session })).status).toBe(422);
  });

  it('PATCH changes settings; an empty body is 400, a bad zone 400, a reversed window 400', async () => {
    const res = await ctx.request('PATCH', `/outreach/mailboxes/${id}`, {
      token: a.session,
      body: {
        daily_limit: 120,
        window_start: '08:30',
        window_end: '18:00',
        window_days: [6, 1, 2],
        timezone: 'Europe/Paris',
        warmup_enabled: true,
        display_name: 'Ada',
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      daily_limit: 120,
      window_start: '08:30',
      window_end: '18:00',
      window_days: [1, 2, 6],
      timezone: 'Europe/Paris',
      warmup_enabled: true,
      display_name: 'Ada',
    });
    expect(
      (await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: { display_name: null } })).body.display_name,
    ).toBeNull();
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: {} })).status).toBe(400);
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: { timezone: 'Nowhere/Land' } })).status).toBe(
      400,
    );
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: { window_end: '08:00' } })).status).toBe(400);
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: { daily_limit: 5000 } })).status).toBe(422);
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body: { email_address: 'x@y.z' } })).status).toBe(
      422,
    );
  });

  it('pauses and resumes; a move that is not allowed is 409', async () => {
    const pause = await ctx.request('POST', `/outreach/mailboxes/${id}/pause`, { token: a.session });
    expect(pause.status).toBe(200);
    expect(pause.body.status).toBe('paused');
    const again = await ctx.request('POST', `/outreach/mailboxes/${id}/pause`, { token: a.session });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'Cannot pause a mailbox that is paused' });
    expect((await ctx.request('POST', `/outreach/mailboxes/${id}/resume`, { token: a.session })).body.status).toBe('active');
    expect((await ctx.request('POST', `/outreach/mailboxes/${id}/resume`, { token: a.session })).status).toBe(409);
  });

  it('health counts bounces and failures recorded by the sending side', async () => {
    await recordMailboxOutcome(ctx.deps.sql, a.orgId, id, 'bounce');
    await recordMailboxOutcome(ctx.deps.sql, a.orgId, id, 'bounce');
    await recordMailboxOutcome(ctx.deps.sql, a.orgId, id, 'failure');
    await recordMailboxOutcome(ctx.deps.sql, b.orgId, id, 'failure'); // another organization's call changes nothing
    const res = await ctx.request('GET', `/outreach/mailboxes/${id}/health`, { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      mailbox_id: id,
      bounce_count: 2,
      failure_count: 1,
      daily_limit: expect.any(Number),
      local_day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(res.body.last_bounce_at).not.toBeNull();
  });

  it("is 404 for a missing mailbox and for another organization's, on every route", async () => {
    const theirs = (await connect(b, withPassword())).body.id;
    for (const target of [MISSING_ID, theirs]) {
      for (const [method, suffix, body] of [
        ['GET', '', undefined],
        ['PATCH', '', { daily_limit: 10 }],
        ['POST', '/pause', undefined],
        ['POST', '/resume', undefined],
        ['GET', '/health', undefined],
        ['DELETE', '', undefined],
      ] as const) {
        const res = await ctx.request(method, `/outreach/mailboxes/${target}${suffix}`, { token: a.session, body });
        expect(res.status, `${method} ${suffix}`).toBe(404);
        expect(res.body).toEqual({ detail: 'Mailbox not found' });
      }
    }
    expect((await ctx.request('GET', `/outreach/mailboxes/${theirs}`, { token: b.session })).body.daily_limit).toBe(50);
    expect((await ctx.request('GET', '/outreach/mailboxes/not-a-uuid', { token: a.session })).status).toBe(422);
  });

  it('delete removes the mailbox and its password credential', async () => {
    const mb = (await connect(a, withPassword())).body;
    const [row] = await ctx.deps.sql`SELECT credential_id FROM outreach_mailboxes WHERE id = ${mb.id}`;
    expect((await ctx.request('DELETE', `/outreach/mailboxes/${mb.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('GET', `/outreach/mailboxes/${mb.id}`, { token: a.session })).status).toBe(404);
    expect(await ctx.deps.sql`SELECT 1 FROM workflow_credentials WHERE id = ${row!.credential_id}`).toHaveLength(0);
  });
});

describe('warm-up', () => {
  const patch = (id: string, body: Record<string, unknown>) =>
    ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: a.session, body });
  const health = async (id: string) => (await ctx.request('GET', `/outreach/mailboxes/${id}/health`, { token: a.session })).body;

  it('is off by default with a ramp of 5 a day over 14 days; on at connect, it starts now', async () => {
    const off = (await connect(a, withPassword())).body;
    expect(off).toMatchObject({ warmup_enabled: false, warmup_started_at: null, warmup_start_per_day: 5, warmup_days: 14 });
    const before = Date.now();
    const on = await connect(a, withPassword({ warmup_enabled: true, warmup_start_per_day: 3, warmup_days: 7, daily_limit: 30 }));
    expect(on.status, on.text).toBe(200);
    expect(on.body).toMatchObject({ warmup_enabled: true, warmup_start_per_day: 3, warmup_days: 7 });
    expect(new Date(on.body.warmup_started_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await health(on.body.id)).toMatchObject({
      daily_limit: 30,
      cap_today: 3,
      sent_today: 0,
      remaining_today: 3,
      warmup: { started_at: on.body.warmup_started_at, day: 1, days: 7, start_per_day: 3, volume_today: 3, complete: false },
    });
    expect(await health(off.id)).toMatchObject({ cap_today: 50, remaining_today: 50, warmup: null });
  });

  it('refuses a ramp outside its bounds with 422 and stores nothing', async () => {
    const count = async () => (await ctx.deps.sql`SELECT count(*)::int AS n FROM outreach_mailboxes WHERE org_id = ${a.orgId}`)[0]!.n;
    const before = await count();
    for (const bad of [
      { warmup_days: 0 },
      { warmup_days: 91 },
      { warmup_start_per_day: 0 },
      { warmup_start_per_day: 2001 },
      { warmup_days: 2.5 },
    ]) {
      const res = await connect(a, withPassword({ warmup_enabled: true, ...bad }));
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.detail[0].loc[1]).toBe(Object.keys(bad)[0]);
    }
    expect(await count()).toBe(before);
    const id = (await connect(a, withPassword())).body.id;
    expect((await patch(id, { warmup_days: 0 })).status).toBe(422);
    expect((await ctx.request('GET', `/outreach/mailboxes/${id}`, { token: a.session })).body.warmup_days).toBe(14);
  });

  it('PATCH on starts the ramp that day, on again keeps it, off forgets it', async () => {
    const id = (await connect(a, withPassword({ daily_limit: 40 }))).body.id;
    const on = await patch(id, { warmup_enabled: true, warmup_start_per_day: 4, warmup_days: 10 });
    expect(on.status, on.text).toBe(200);
    expect(on.body.warmup_started_at).not.toBeNull();
    // Two local days later (the start moved back in Postgres): day 3 of 10, 4 + 36 × 2 / 9 = 12.
    await ctx.deps.sql`UPDATE outreach_mailboxes SET warmup_started_at = warmup_started_at - interval '2 days' WHERE id = ${id}`;
    const moved = (await ctx.request('GET', `/outreach/mailboxes/${id}`, { token: a.session })).body.warmup_started_at;
    expect(await health(id)).toMatchObject({ cap_today: 12, remaining_today: 12, warmup: { day: 3, volume_today: 12, complete: false } });
    expect((await patch(id, { warmup_enabled: true })).body.warmup_started_at).toBe(moved);
    // A lower limit lowers the ramp with it (4 + 4 × 2 / 9, rounded down); past the last day the cap is the limit.
    expect((await patch(id, { daily_limit: 8 })).status).toBe(200);
    expect((await health(id)).cap_today).toBe(4);
    await ctx.deps.sql`UPDATE outreach_mailboxes SET warmup_started_at = now() - interval '30 days' WHERE id = ${id}`;
    expect(await health(id)).toMatchObject({ cap_today: 8, warmup: { day: 31, volume_today: 8, complete: true } });
    const off = await patch(id, { warmup_enabled: false });
    expect(off.body).toMatchObject({ warmup_enabled: false, warmup_started_at: null });
    expect(await health(id)).toMatchObject({ cap_today: 8, warmup: null });
    const again = await patch(id, { warmup_enabled: true });
    expect(new Date(again.body.warmup_started_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect((await health(id)).warmup).toMatchObject({ day: 1, volume_today: 4 });
  });

  it('provisioning checks the ramp too', async () => {
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: a.session,
      body: { domain_id: MISSING_ID, local_part: 'x', warmup_days: 0 },
    });
    expect(res.status).toBe(422);
  });
});

describe('scopes', () => {
  let reader: string;
  let manager: string;
  let id: string;
  beforeAll(async () => {
    reader = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['outreach:read'] });
    manager = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['outreach:manage'] });
    id = (await connect(a, withPassword())).body.id;
  });

  it('outreach:read reads, and gets 403 on every write', async () => {
    expect((await ctx.request('GET', '/outreach/mailboxes', { token: reader })).status).toBe(200);
    expect((await ctx.request('GET', `/outreach/mailboxes/${id}`, { token: reader })).status).toBe(200);
    expect((await ctx.request('GET', `/outreach/mailboxes/${id}/health`, { token: reader })).status).toBe(200);
    for (const [method, p, body] of [
      ['POST', '/outreach/mailboxes', withPassword()],
      ['PATCH', `/outreach/mailboxes/${id}`, { daily_limit: 3 }],
      ['POST', `/outreach/mailboxes/${id}/pause`, undefined],
      ['DELETE', `/outreach/mailboxes/${id}`, undefined],
      ['POST', '/outreach/mailboxes/provision', { domain_id: MISSING_ID, local_part: 'x' }],
    ] as const) {
      const res = await ctx.request(method, p, { token: reader, body });
      expect(res.status, `${method} ${p}`).toBe(403);
      expect(res.body).toEqual({ detail: 'Insufficient permissions' });
    }
    expect((await ctx.request('GET', `/outreach/mailboxes/${id}`, { token: a.session })).body.daily_limit).toBe(50);
  });

  it('outreach:manage connects and edits but may not provision (cost-bearing)', async () => {
    expect((await connect(a, withPassword(), manager)).status).toBe(200);
    expect((await ctx.request('PATCH', `/outreach/mailboxes/${id}`, { token: manager, body: { daily_limit: 7 } })).status).toBe(200);
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: manager,
      body: { domain_id: MISSING_ID, local_part: 'x' },
    });
    expect(res.status).toBe(403);
  });

  it('CRM scopes alone give no outreach access', async () => {
    const crm = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['api:read', 'api:manage'] });
    expect((await ctx.request('GET', '/outreach/mailboxes', { token: crm })).status).toBe(403);
  });
});

describe('mailboxSender', () => {
  it("sends through the mailbox's SMTP with its stored password (nodemailer), from its address", async () => {
    const mb = (await connect(a, withPassword({ display_name: 'Ada Sender' }))).body;
    const sender = await mailboxSender(ctx.deps, a.orgId, mb.id);
    expect(sender.mailbox.id).toBe(mb.id);
    const result = await sender.send({ to: 'lead@prospect.test', subject: 'Hello', text: 'Hi there', messageId: '<step-1@acme.test>' });
    expect(result).toEqual({ messageId: '<step-1@acme.test>', accepted: ['lead@prospect.test'], rejected: [] });
    const got = authSmtp.received.find((r) => r.mail.messageId === '<step-1@acme.test>');
    expect(got?.rcptTo).toEqual(['lead@prospect.test']);
    expect(got?.mail.from?.value[0]).toEqual({ address: mb.email_address, name: 'Ada Sender' });
    expect(got?.mail.subject).toBe('Hello');
    expect(ctx.logs.join('\n')).not.toContain(SMTP_PASSWORD);
  });

  it('works with the shared test SMTP server through connectTestMailbox', async () => {
    const mb = await connectTestMailbox(ctx, a.session, smtpAddress(smtp.url));
    expect(mb).toMatchObject({
      kind: 'smtp',
      window_start: '00:00',
      window_end: '24:00',
      window_days: [1, 2, 3, 4, 5, 6, 7],
      has_password: false,
    });
    const sender = await mailboxSender(ctx.deps, a.orgId, mb.id);
    await sender.send({ to: 'someone@prospect.test', subject: 'Via helper', text: 'x' });
    const [mail] = await smtp.waitForMail('someone@prospect.test');
    expect(mail!.mail.subject).toBe('Via helper');
  });

  it('a refused login surfaces as a rejected send', async () => {
    const mb = (
      await connect(
        a,
        withPassword({
          smtp: { host: '127.0.0.1', port: authSmtp.port, secure: false, username: 'sender@acme.test', password: 'nope-nope' },
        }),
      )
    ).body;
    const sender = await mailboxSender(ctx.deps, a.orgId, mb.id);
    await expect(sender.send({ to: 'x@prospect.test', subject: 's', text: 't' })).rejects.toMatchObject({ code: 'EAUTH' });
  });

  it("is 404 for another organization's mailbox", async () => {
    const mb = (await connect(b, withPassword())).body;
    await expect(mailboxSender(ctx.deps, a.orgId, mb.id)).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('mailboxImapSettings hands over host, port, user and the decrypted IMAP password; null without IMAP', async () => {
    const mb = (await connect(a, withPassword())).body;
    expect(await mailboxImapSettings(ctx.deps, a.orgId, mb.id)).toEqual({
      host: '127.0.0.1',
      port: 993,
      secure: true,
      user: 'sender@acme.test',
      password: IMAP_PASSWORD,
    });
    const plain = await connectTestMailbox(ctx, a.session, smtpAddress(smtp.url));
    expect(await mailboxImapSettings(ctx.deps, a.orgId, plain.id)).toBeNull();
    expect(await mailboxImapSettings(ctx.deps, b.orgId, mb.id)).toBeNull();
  });

  it('a simulated mailbox writes the message as .eml under DATA_DIR and answers like SMTP', async () => {
    const [row] = await ctx.deps.sql<{ id: string }[]>`
      INSERT INTO outreach_mailboxes (id, org_id, email_address, kind, origin, provider, created_by)
      VALUES (gen_random_uuid(), ${a.orgId}, 'sim@acme.test', 'simulated', 'provisioned', 'simulated', 'user:test') RETURNING id`;
    const sender = await mailboxSender(ctx.deps, a.orgId, row!.id);
    const result = await sender.send({
      to: ['one@prospect.test', 'two@prospect.test'],
      subject: 'Simulated',
      text: 'Body',
      messageId: '<sim-1@acme.test>',
    });
    expect(result).toEqual({ messageId: '<sim-1@acme.test>', accepted: ['one@prospect.test', 'two@prospect.test'], rejected: [] });
    const dir = path.join(ctx.config.dataDir, 'outreach-mail', row!.id);
    const files = fs.readdirSync(dir);
    expect(files).toHaveLength(1);
    const parsed = await simpleParser(fs.readFileSync(path.join(dir, files[0]!)));
    expect(parsed.subject).toBe('Simulated');
    expect(parsed.from?.value[0]?.address).toBe('sim@acme.test');
  });
});
