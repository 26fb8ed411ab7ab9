import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { mailboxImapSettings } from '../../services/outreach/mailbox-servers';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// The mailcow mailbox provider against a local server speaking the mailcow API
// (X-API-Key; POST /api/v1/add/domain and /api/v1/add/mailbox answering [{type, msg}]).

const API_KEY = 'mailcow-Api-Key-5e4d3c';
const domains = new Set<string>();
const mailboxes = new Map<string, { name: string; password: string }>();
const calls: { path: string; body: Record<string, any> }[] = [];
let failMailbox = false;

async function startFakeMailcow() {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, any>;
      calls.push({ path: req.url ?? '', body });
      const send = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      };
      if (req.headers['x-api-key'] !== API_KEY) return send(401, { type: 'error', msg: 'authentication failed' });
      if (req.url === '/api/v1/add/domain') {
        if (domains.has(body.domain))
          return send(200, [{ type: 'danger', log: ['mailbox', 'add', 'domain'], msg: ['domain_exists', body.domain] }]);
        domains.add(body.domain);
        return send(200, [{ type: 'success', log: ['mailbox', 'add', 'domain'], msg: ['domain_added', body.domain] }]);
      }
      if (req.url === '/api/v1/add/mailbox') {
        const address = `${body.local_part}@${body.domain}`;
        if (failMailbox) {
          failMailbox = false;
          return send(200, [{ type: 'danger', log: ['mailbox', 'add', 'mailbox'], msg: ['max_mailbox_exceeded', '10'] }]);
        }
        if (body.password !== body.password2) return send(200, [{ type: 'danger', msg: 'password_mismatch' }]);
        mailboxes.set(address, { name: body.name, password: body.password });
        return send(200, [{ type: 'success', log: ['mailbox', 'add', 'mailbox'], msg: ['mailbox_added', address] }]);
      }
      send(404, [{ type: 'danger', msg: 'route not found' }]);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let ctx: TestContext;
let mailcow: Awaited<ReturnType<typeof startFakeMailcow>>;
let t: Tenant & { orgId: string };

/** A verified domain row, as a verification run leaves it. */
async function verifiedDomain(name: string): Promise<string> {
  const [row] = await ctx.deps.sql<{ id: string }[]>`
    INSERT INTO outreach_domains (id, org_id, name, source, status, dkim_selector, dkim_public_key, tracking_host, created_by)
    VALUES (gen_random_uuid(), ${t.orgId}, ${name}, 'owned', 'verified', 'outreach', 'KEY', ${`track.${name}`}, 'user:test') RETURNING id`;
  return row!.id;
}

beforeAll(async () => {
  mailcow = await startFakeMailcow();
  ctx = await createTestContext({
    env: {
      OUTREACH_MAILBOX_PROVIDER: 'mailcow',
      OUTREACH_MAILBOX_PROVIDER_BASE_URL: mailcow.url,
      OUTREACH_MAILBOX_PROVIDER_API_KEY: API_KEY,
    },
  });
  const tenant = await newTenant(ctx, ['outreach:provision']);
  t = { ...tenant, orgId: await orgUuid(ctx, tenant) };
});
afterAll(async () => {
  await ctx?.close();
  await mailcow?.close();
});

describe('mailcow mailbox provider', () => {
  it('adds the domain and the mailbox, and keeps the generated password sealed', async () => {
    const domainId = await verifiedDomain('send.acme.test');
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: t.session,
      body: { domain_id: domainId, local_part: 'ada', display_name: 'Ada' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      email_address: 'ada@send.acme.test',
      kind: 'smtp',
      origin: 'provisioned',
      provider: 'mailcow',
      smtp: { host: '127.0.0.1', port: 587, secure: false, username: 'ada@send.acme.test' },
      imap: { host: '127.0.0.1', port: 993, secure: true, username: 'ada@send.acme.test' },
      has_password: true,
    });
    const made = mailboxes.get('ada@send.acme.test')!;
    expect(made.name).toBe('Ada');
    expect(made.password.length).toBeGreaterThanOrEqual(24);
    expect(res.text).not.toContain(made.password);
    expect(ctx.logs.join('\n')).not.toContain(made.password);
    expect((await mailboxImapSettings(ctx.deps, t.orgId, res.body.id))?.password).toBe(made.password);

    // A second mailbox on the same domain: the provider's "domain exists" is fine.
    const second = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: t.session,
      body: { domain_id: domainId, local_part: 'bob' },
    });
    expect(second.status, second.text).toBe(200);
    expect(calls.filter((c) => c.path === '/api/v1/add/domain')).toHaveLength(2);
  });

  it('a refusal is a 502 naming the provider, and nothing is saved', async () => {
    const domainId = await verifiedDomain('full.acme.test');
    failMailbox = true;
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: t.session,
      body: { domain_id: domainId, local_part: 'carol' },
    });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'Mailbox provider mailcow failed: mailbox provider refused: max_mailbox_exceeded 10' });
    expect(res.text).not.toContain(API_KEY);
    expect(
      await ctx.deps.sql`SELECT 1 FROM outreach_mailboxes WHERE org_id = ${t.orgId} AND email_address = 'carol@full.acme.test'`,
    ).toHaveLength(0);
  });
});
