import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { readCredentialValue } from '../../services/credentials/values';
import { mailboxSender } from '../../services/outreach/mailbox-sender';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID } from '../support/crm-contacts';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// Domains against a real DNS server on loopback (npm dns2, UDP) that the service's resolver
// (node:dns/promises) is pointed at through OUTREACH_DNS_SERVERS.

const require = createRequire(import.meta.url);
const dns2 = require('dns2') as {
  createServer(options: { udp: boolean; handle: (request: any, send: (response: any) => void) => void }): {
    listen(options: { udp: { port: number; address: string } }): Promise<void>;
    close(): Promise<void>;
  };
  Packet: { createResponseFromRequest(request: any): any; TYPE: Record<string, number>; CLASS: Record<string, number> };
};

/** host → TXT records (each an array of chunks) and CNAME targets; hosts in `silent` never get an answer. */
const zone = new Map<string, { txt?: string[][]; cname?: string }>();
const silent = new Set<string>();

async function startDns(): Promise<{ port: number; close: () => Promise<void> }> {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = String(question.name).toLowerCase();
      if (silent.has(name)) return;
      const entry = zone.get(name);
      if (question.type === Packet.TYPE.TXT) {
        for (const chunks of entry?.txt ?? [])
          response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: chunks });
      } else if (question.type === Packet.TYPE.CNAME && entry?.cname) {
        response.answers.push({ name: question.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 60, domain: entry.cname });
      }
      send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' } });
  return { port, close: () => server.close() };
}

/** Publishes a domain's records as the API listed them; TXT values longer than 255 bytes are split in chunks, as DNS stores them. */
function publish(domain: { records: { type: string; host: string; value: string }[] }) {
  for (const r of domain.records) {
    const entry = zone.get(r.host) ?? {};
    if (r.type === 'TXT') entry.txt = [...(entry.txt ?? []), r.value.match(/.{1,255}/g)!];
    else entry.cname = r.value;
    zone.set(r.host, entry);
  }
}

let ctx: TestContext;
let dns: Awaited<ReturnType<typeof startDns>>;
let a: Tenant & { orgId: string };
let b: Tenant & { orgId: string };
const unique = () => `d${crypto.randomBytes(4).toString('hex')}.com`;

async function tenant(scopes = ['outreach:provision']) {
  const t = await newTenant(ctx, scopes);
  return { ...t, orgId: await orgUuid(ctx, t) };
}

beforeAll(async () => {
  dns = await startDns();
  ctx = await createTestContext({ env: { OUTREACH_DNS_SERVERS: `127.0.0.1:${dns.port}`, OUTREACH_DNS_TIMEOUT_MS: '400' } });
  [a, b] = await Promise.all([tenant(), tenant()]);
});
afterAll(async () => {
  await ctx?.close();
  await dns?.close();
});

const add = (t: Tenant, name: string, token = t.session) => ctx.request('POST', '/outreach/domains', { token, body: { name } });
const verify = (t: Tenant, id: string) => ctx.request('POST', `/outreach/domains/${id}/verify`, { token: t.session });

describe('POST /outreach/domains (owned)', () => {
  it('adds a domain with its four records, a fresh 2048-bit DKIM key, pending', async () => {
    const name = unique();
    const res = await add(a, `  ${name.toUpperCase()}. `);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      organization_id: a.orgId,
      name,
      source: 'owned',
      registrar: null,
      status: 'pending',
      dkim_selector: 'outreach',
      last_verified_at: null,
    });
    expect(
      res.body.records.map((r: { purpose: string; type: string; host: string; status: string }) => [r.purpose, r.type, r.host, r.status]),
    ).toEqual([
      ['spf', 'TXT', name, 'pending'],
      ['dkim', 'TXT', `outreach._domainkey.${name}`, 'pending'],
      ['dmarc', 'TXT', `_dmarc.${name}`, 'pending'],
      ['tracking', 'CNAME', `track.${name}`, 'pending'],
    ]);
    const dkim = res.body.records[1].value as string;
    expect(dkim).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/);
    const publicKey = crypto.createPublicKey({ key: Buffer.from(dkim.split('p=')[1]!, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(res.body.records[3].value).toBe('track.outreach.localhost');

    // The private key is a workflow credential: never in a response or log, and it signs for the published key.
    expect(res.text).not.toContain('PRIVATE KEY');
    const [row] = await ctx.deps.sql`SELECT dkim_credential_id FROM outreach_domains WHERE id = ${res.body.id}`;
    const value = await readCredentialValue(ctx.deps, a.orgId, row!.dkim_credential_id);
    const privateKey = value!.dkim_private_key as string;
    expect(privateKey).toContain('BEGIN PRIVATE KEY');
    const signature = crypto.sign('sha256', Buffer.from('x'), privateKey);
    expect(crypto.verify('sha256', Buffer.from('x'), publicKey, signature)).toBe(true);
    expect(ctx.logs.join('\n')).not.toContain(privateKey.split('\n')[1]!);
    const read = await ctx.request('GET', `/outreach/domains/${res.body.id}`, { token: a.session });
    expect(read.body).toEqual(res.body);
  });

  it('refuses the same domain twice in an organization (409); another organization may add it', async () => {
    const name = unique();
    expect((await add(a, name)).status).toBe(200);
    const again = await add(a, name.toUpperCase());
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'The organization already has this domain' });
    expect((await add(b, name)).status).toBe(200);
  });

  it('validates the name (422)', async () => {
    for (const name of [
      '',
      'localhost',
      'no_underscore.com',
      '-lead.com',
      'a..b.com',
      'x.123',
      `${'a'.repeat(64)}.com`,
      'http://x.com',
      'x.com/path',
    ]) {
      expect((await add(a, name)).status, name).toBe(422);
    }
    expect((await ctx.request('POST', '/outreach/domains', { token: a.session, body: { name: 'ok.com', extra: 1 } })).status).toBe(422);
  });
});

describe('verification run', () => {
  it('verifies a domain whose records are published (DKIM split across TXT chunks)', async () => {
    const domain = (await add(a, unique())).body;
    publish(domain);
    const res = await verify(a, domain.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('verified');
    expect(res.body.records.map((r: { status: string }) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified']);
    expect(res.body.records[0].found).toEqual(['v=spf1 mx a ~all']);
    expect(res.body.records[0].checked_at).not.toBeNull();
    expect(res.body.verified_at).not.toBeNull();
    expect((await ctx.request('GET', `/outreach/domains/${domain.id}`, { token: a.session })).body.status).toBe('verified');
  });

  it('stores status per record: missing, mismatch, and error for a lookup that times out', async () => {
    const domain = (await add(a, unique())).body;
    const [spf, dkim, dmarc, tracking] = domain.records;
    zone.set(spf.host, { txt: [['v=spf1 mx a ~all'], ['v=spf1 include:other.example ~all']] }); // two SPF records: a permanent error
    zone.set(dkim.host, { txt: [['v=DKIM1; k=rsa; p=AAAAnotourkey']] });
    silent.add(tracking.host);
    const res = await verify(a, domain.id);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('failed');
    expect(Object.fromEntries(res.body.records.map((r: { purpose: string; status: string }) => [r.purpose, r.status]))).toEqual({
      spf: 'mismatch',
      dkim: 'mismatch',
      dmarc: 'missing',
      tracking: 'error',
    });
    expect(res.body.records[2].found).toEqual([]);
    expect(res.body.records[3].found).toBeNull();

    // Fixed and run again: verified.
    silent.delete(tracking.host);
    zone.delete(spf.host);
    zone.delete(dkim.host);
    void dmarc;
    publish(domain);
    expect((await verify(a, domain.id)).body.status).toBe('verified');
  });

  it('SPF with more mechanisms than ours passes; a CNAME elsewhere is a mismatch', async () => {
    const domain = (await add(a, unique())).body;
    publish(domain);
    zone.set(domain.name, { txt: [['v=spf1 include:_spf.google.com mx a -all'], ['google-site-verification=abc']] });
    zone.set(`track.${domain.name}`, { cname: 'elsewhere.example.net' });
    const res = await verify(a, domain.id);
    expect(res.body.records.map((r: { status: string }) => r.status)).toEqual(['verified', 'verified', 'verified', 'mismatch']);
  });
});

describe('purchase through the simulated registrar', () => {
  it('answers availability and price', async () => {
    const res = await ctx.request('GET', '/outreach/domains/availability?name=Fresh-Leads.io', { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'fresh-leads.io', available: true, price_cents: 3999, currency: 'USD', registrar: 'simulated' });
    expect((await ctx.request('GET', '/outreach/domains/availability?name=taken-name.com', { token: a.session })).body.available).toBe(
      false,
    );
    expect((await ctx.request('GET', '/outreach/domains/availability?name=bad_name', { token: a.session })).status).toBe(422);
  });

  it('buys and adds the domain (source purchased, price, term)', async () => {
    const name = unique();
    const res = await ctx.request('POST', '/outreach/domains/purchase', { token: a.session, body: { name, years: 2 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name,
      source: 'purchased',
      registrar: 'simulated',
      price_cents: 2598,
      currency: 'USD',
      status: 'pending',
    });
    expect(res.body.registrar_order_id).toMatch(/^sim_/);
    expect(new Date(res.body.registered_until).getUTCFullYear()).toBe(new Date().getUTCFullYear() + 2);
    expect(res.body.records).toHaveLength(4);
  });

  it('refuses an unavailable domain or one above max_price_cents (409), writing nothing', async () => {
    const unavailable = await ctx.request('POST', '/outreach/domains/purchase', { token: a.session, body: { name: 'taken-domain.com' } });
    expect(unavailable.status).toBe(409);
    expect(unavailable.body).toEqual({ detail: 'taken-domain.com is not available' });
    const name = unique();
    const pricey = await ctx.request('POST', '/outreach/domains/purchase', { token: a.session, body: { name, max_price_cents: 100 } });
    expect(pricey.status).toBe(409);
    expect(
      await ctx.deps.sql`SELECT 1 FROM outreach_domains WHERE org_id = ${a.orgId} AND name IN ('taken-domain.com', ${name})`,
    ).toHaveLength(0);
    expect(
      await ctx.deps.sql`SELECT 1 FROM workflow_credentials WHERE org_id = ${a.orgId} AND description LIKE ${`%${name}%`}`,
    ).toHaveLength(0);
  });

  it('validates years (1-10)', async () => {
    for (const years of [0, 11, 1.5]) {
      expect((await ctx.request('POST', '/outreach/domains/purchase', { token: a.session, body: { name: unique(), years } })).status).toBe(
        422,
      );
    }
  });
});

describe('provisioning a mailbox on a domain', () => {
  it('needs a verified domain (409), then provisions a simulated mailbox that sends to files', async () => {
    const domain = (await add(a, unique())).body;
    const body = { domain_id: domain.id, local_part: 'ada', display_name: 'Ada', timezone: 'Europe/Berlin' };
    const early = await ctx.request('POST', '/outreach/mailboxes/provision', { token: a.session, body });
    expect(early.status).toBe(409);
    publish(domain);
    expect((await verify(a, domain.id)).body.status).toBe('verified');
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', { token: a.session, body });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      email_address: `ada@${domain.name}`,
      kind: 'simulated',
      origin: 'provisioned',
      provider: 'simulated',
      domain_id: domain.id,
      timezone: 'Europe/Berlin',
      warmup_enabled: true,
      smtp: null,
      has_password: false,
    });
    expect((await ctx.request('POST', '/outreach/mailboxes/provision', { token: a.session, body })).status).toBe(409);
    const sent = await (await mailboxSender(ctx.deps, a.orgId, res.body.id)).send({ to: 'lead@prospect.test', subject: 'Hi', text: 'x' });
    expect(sent.accepted).toEqual(['lead@prospect.test']);

    // A domain with mailboxes cannot be deleted; once they are gone it can.
    const blocked = await ctx.request('DELETE', `/outreach/domains/${domain.id}`, { token: a.session });
    expect(blocked.status).toBe(409);
    expect((await ctx.request('DELETE', `/outreach/mailboxes/${res.body.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('DELETE', `/outreach/domains/${domain.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('GET', `/outreach/domains/${domain.id}`, { token: a.session })).status).toBe(404);
    expect(
      await ctx.deps.sql`SELECT 1 FROM workflow_credentials WHERE org_id = ${a.orgId} AND name = ${`outreach-domain:${domain.id}:dkim`}`,
    ).toHaveLength(0);
  });

  it("is 404 for another organization's domain", async () => {
    const theirs = (await add(b, unique())).body;
    const res = await ctx.request('POST', '/outreach/mailboxes/provision', {
      token: a.session,
      body: { domain_id: theirs.id, local_part: 'x' },
    });
    expect(res.status).toBe(404);
  });
});

describe('list, tenancy, scopes', () => {
  it('lists newest first with cursor pagination and a status filter', async () => {
    const t = await tenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await add(t, unique())).body.id);
    const page1 = await ctx.request('GET', '/outreach/domains?limit=2', { token: t.session });
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toMatchObject({ limit: 2, total: 3 });
    expect(page1.body.data[0].records).toHaveLength(4);
    const page2 = await ctx.request('GET', `/outreach/domains?limit=2&cursor=${page1.body.pagination.next_cursor}`, { token: t.session });
    expect([...page1.body.data, ...page2.body.data].map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
    expect(page2.body.pagination.next_cursor).toBeNull();
    expect((await ctx.request('GET', '/outreach/domains?status=verified', { token: t.session })).body.data).toEqual([]);
    expect((await ctx.request('GET', '/outreach/domains?status=nope', { token: t.session })).status).toBe(400);
  });

  it("is 404 for a missing domain and another organization's, on every route", async () => {
    const theirs = (await add(b, unique())).body.id;
    for (const id of [MISSING_ID, theirs]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/verify'],
        ['DELETE', ''],
      ] as const) {
        const res = await ctx.request(method, `/outreach/domains/${id}${suffix}`, { token: a.session });
        expect(res.status, `${method} ${suffix}`).toBe(404);
        expect(res.body).toEqual({ detail: 'Domain not found' });
      }
    }
    expect((await ctx.request('GET', `/outreach/domains/${theirs}`, { token: b.session })).status).toBe(200);
  });

  it('read scope reads; manage adds and verifies but may not buy; provision buys', async () => {
    const reader = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['outreach:read'] });
    const manager = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['outreach:manage'] });
    const domain = (await add(a, unique())).body;
    expect((await ctx.request('GET', '/outreach/domains', { token: reader })).status).toBe(200);
    expect((await ctx.request('GET', `/outreach/domains/${domain.id}`, { token: reader })).status).toBe(200);
    expect((await ctx.request('GET', '/outreach/domains/availability?name=x.com', { token: reader })).status).toBe(200);
    for (const [method, p, body] of [
      ['POST', '/outreach/domains', { name: unique() }],
      ['POST', `/outreach/domains/${domain.id}/verify`, undefined],
      ['DELETE', `/outreach/domains/${domain.id}`, undefined],
      ['POST', '/outreach/domains/purchase', { name: unique() }],
    ] as const) {
      const res = await ctx.request(method, p, { token: reader, body });
      expect(res.status, `${method} ${p}`).toBe(403);
      expect(res.body).toEqual({ detail: 'Insufficient permissions' });
    }
    expect((await add(a, unique(), manager)).status).toBe(200);
    expect((await ctx.request('POST', `/outreach/domains/${domain.id}/verify`, { token: manager })).status).toBe(200);
    expect((await ctx.request('POST', '/outreach/domains/purchase', { token: manager, body: { name: unique() } })).status).toBe(403);
    expect((await ctx.request('GET', `/outreach/domains/${domain.id}`, { token: a.session })).status).toBe(200);
  });
});

describe('tracking', () => {
  it('requires the tracking CNAME only while tracking is on, and says so in the records', async () => {
    const domain = (await add(a, unique())).body;
    expect(domain.tracking_enabled).toBe(false);
    expect(domain.records.map((r: { purpose: string; required: boolean }) => [r.purpose, r.required])).toEqual([
      ['spf', true],
      ['dkim', true],
      ['dmarc', true],
      ['tracking', false],
    ]);
    publish({ records: domain.records.filter((r: { purpose: string }) => r.purpose !== 'tracking') });
    const off = await verify(a, domain.id);
    expect(off.body.records.map((r: { status: string }) => r.status)).toEqual(['verified', 'verified', 'verified', 'missing']);
    expect(off.body.status).toBe('verified');

    // Switched on: judged again from the stored statuses, and the CNAME is now required.
    const on = await ctx.request('PATCH', `/outreach/domains/${domain.id}`, { token: a.session, body: { tracking_enabled: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toMatchObject({ tracking_enabled: true, status: 'failed' });
    expect(on.body.records[3]).toMatchObject({ purpose: 'tracking', required: true, status: 'missing' });
    expect((await verify(a, domain.id)).body.status).toBe('failed');
    publish({ records: domain.records.slice(3) });
    expect((await verify(a, domain.id)).body.status).toBe('verified');

    // Added with tracking on, the CNAME is required from the start.
    const tracked = await ctx.request('POST', '/outreach/domains', { token: a.session, body: { name: unique(), tracking_enabled: true } });
    expect(tracked.body.records[3]).toMatchObject({ purpose: 'tracking', required: true });
    publish({ records: tracked.body.records.slice(0, 3) });
    expect((await verify(a, tracked.body.id)).body.status).toBe('failed');
  });

  it('switching tracking: 404 across organizations, 403 read-only, 422 on a bad body', async () => {
    const domain = (await add(a, unique())).body;
    const reader = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['outreach:read'] });
    const patch = (token: string, body: unknown, id = domain.id) => ctx.request('PATCH', `/outreach/domains/${id}`, { token, body });
    expect((await patch(b.session, { tracking_enabled: true })).status).toBe(404);
    expect((await patch(reader, { tracking_enabled: true })).status).toBe(403);
    expect((await patch(a.session, { tracking_enabled: 'yes' })).status).toBe(422);
    expect((await patch(a.session, {})).status).toBe(422);
    expect((await ctx.request('GET', `/outreach/domains/${domain.id}`, { token: a.session })).body.tracking_enabled).toBe(false);
  });
});
