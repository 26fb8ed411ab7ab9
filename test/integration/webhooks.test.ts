import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_NAMES } from '../../domain/webhooks';
import { startWebhookRelay, type WebhookRelay } from '../../services/webhooks/relay';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, crmTenant, readOnlyKey, type CrmTenant } from '../support/crm-contacts';
import { createOrgKey } from '../support/identity';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// Webhook endpoints: create (secret once), read, list, change, delete, rotate; scopes, tenancy, validation;
// and the guarded client, which (private addresses not allowed, as in production) never calls a loopback receiver.

let ctx: TestContext;
let relay: WebhookRelay;
let receiver: WebhookReceiver;
let a: CrmTenant;
let b: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { WEBHOOK_RETRY_DELAYS_SECONDS: '60' } });
  relay = await startWebhookRelay(ctx.deps);
  receiver = await startWebhookReceiver();
  [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
});
afterAll(async () => {
  await relay?.stop();
  await ctx?.close();
  await receiver?.close();
});

const URL_ = 'https://hooks.example.com/voice-crm';
const create = (t: { session: string }, body: Record<string, unknown> = {}, token = t.session) =>
  ctx.request('POST', '/webhooks/endpoints', { token, body: { url: URL_, ...body } });

describe('POST /webhooks/endpoints', () => {
  it('creates an endpoint subscribed to every type by default, its secret (whsec_ + 32 bytes base64) shown once', async () => {
    const res = await create(a, { description: 'CRM sync' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      organization_id: a.orgId,
      url: URL_,
      description: 'CRM sync',
      event_types: null,
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.secret.slice(6), 'base64')).toHaveLength(32);
    const read = await ctx.request('GET', `/webhooks/endpoints/${res.body.id}`, { token: a.session });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    const { secret: _secret, ...view } = res.body;
    expect(read.body).toEqual(view);
    // Sealed at rest: the secret's text is nowhere in the row.
    const [row] = await ctx.deps.sql`SELECT * FROM webhook_endpoints WHERE id = ${res.body.id}`;
    expect(JSON.stringify(row)).not.toContain(res.body.secret.slice(6));
  });

  it('keeps the event types given, once each, and may start disabled', async () => {
    const res = await create(a, { event_types: ['deal.won', 'call.ended', 'deal.won'], enabled: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ event_types: ['deal.won', 'call.ended'], enabled: false, disabled_reason: 'manual' });
  });

  it('refuses what the schema refuses (422) and writes nothing', async () => {
    const before = (await ctx.deps.sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${a.orgId}`)[0]!.n;
    for (const body of [
      { url: 'ftp://hooks.example.com/x' },
      { url: 'https://user:pw@hooks.example.com/x' },
      { url: 'hooks.example.com/x' },
      { url: 'https://hooks.example.com:70000/x' },
      { url: `https://hooks.example.com/${'x'.repeat(2048)}` },
      { event_types: ['deal.unknown'] },
      { event_types: [] },
      { description: 'x'.repeat(1001) },
      { enabled: 'yes' },
      { extra: 1 },
    ]) {
      const res = await create(a, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
    expect((await ctx.request('POST', '/webhooks/endpoints', { token: a.session, body: {} })).status).toBe(422);
    expect((await ctx.deps.sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${a.orgId}`)[0]!.n).toBe(before);
  });

  it('takes public and loopback addresses alike: the guarded client decides at each attempt', async () => {
    for (const url of ['http://203.0.113.7:8080/hook', 'http://127.0.0.1/hook', 'https://a-b.example.co.uk']) {
      expect((await create(a, { url })).status, url).toBe(200);
    }
  });

  it('is refused to a read-only key (403) and to a token without an organization-admin scope', async () => {
    const key = await readOnlyKey(ctx, a);
    expect((await create(a, {}, key)).status).toBe(403);
    const agentsOnly = await createOrgKey(ctx, a.session, { scopes: ['agents:manage'] });
    expect((await create(a, {}, agentsOnly)).status).toBe(403);
    const admin = await createOrgKey(ctx, a.session, { scopes: ['organizations:manage'] });
    expect((await create(a, {}, admin)).status).toBe(200);
    expect((await ctx.request('GET', '/webhooks/endpoints', { token: key })).status).toBe(200);
  });
});

describe('GET /webhooks/endpoints', () => {
  it('pages newest first with {data, pagination}, filters by enabled, and never shows secrets', async () => {
    const t = await crmTenant(ctx);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(t, { description: `e${i}`, enabled: i % 2 === 0 })).body.id);
    const first = await ctx.request('GET', '/webhooks/endpoints?limit=2', { token: t.session });
    expect(first.status).toBe(200);
    expect(first.body.pagination).toEqual({ limit: 2, next_cursor: expect.any(String), total: 5, offset: 0 });
    const seen = [...first.body.data];
    let cursor = first.body.pagination.next_cursor;
    while (cursor) {
      const page = await ctx.request('GET', `/webhooks/endpoints?limit=2&cursor=${cursor}`, { token: t.session });
      seen.push(...page.body.data);
      cursor = page.body.pagination.next_cursor;
    }
    expect(seen.map((e) => e.id)).toEqual([...ids].reverse());
    for (const e of seen) expect(e).not.toHaveProperty('secret');
    const enabled = await ctx.request('GET', '/webhooks/endpoints?enabled=true', { token: t.session });
    expect(enabled.body.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[2], ids[0]]);
    expect((await ctx.request('GET', '/webhooks/endpoints?enabled=maybe', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/webhooks/endpoints?limit=0', { token: t.session })).status).toBe(422);
    expect((await ctx.request('GET', '/webhooks/endpoints?cursor=nope', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/webhooks/endpoints?color=red', { token: t.session })).status).toBe(400);
  });
});

describe('PATCH, DELETE and rotate-secret', () => {
  it('changes the named fields only; an empty body is 400', async () => {
    const { body: e } = await create(a, { description: 'before', event_types: ['deal.won'] });
    const res = await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: { description: 'after' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: 'after', event_types: ['deal.won'], url: URL_ });
    const all = await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: { event_types: null } });
    expect(all.body.event_types).toBeNull();
    expect((await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: {} })).status).toBe(400);
    expect((await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: { url: 'nope' } })).status).toBe(422);
  });

  it('disables by hand (manual) and enables again, which clears a failure streak', async () => {
    const { body: e } = await create(a);
    await ctx.deps.sql`UPDATE webhook_endpoints SET failing_since = now() - interval '1 day' WHERE id = ${e.id}`;
    const off = await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: 'manual', disabled_at: expect.any(String) });
    const on = await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: a.session, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
  });

  it("answers 404 for another organization's endpoint, on every route, and changes nothing", async () => {
    const { body: e } = await create(a, { description: 'mine' });
    for (const [method, path, body] of [
      ['GET', `/webhooks/endpoints/${e.id}`],
      ['PATCH', `/webhooks/endpoints/${e.id}`, { description: 'theirs' }],
      ['DELETE', `/webhooks/endpoints/${e.id}`],
      ['POST', `/webhooks/endpoints/${e.id}/rotate-secret`],
      ['GET', `/webhooks/endpoints/${e.id}/messages`],
      ['GET', `/webhooks/endpoints/${e.id}/attempts`],
      ['GET', `/webhooks/endpoints/${MISSING_ID}`],
    ] as const) {
      const res = await ctx.request(method, path, { token: b.session, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({ detail: 'Webhook endpoint not found' });
    }
    expect((await ctx.request('GET', `/webhooks/endpoints/${e.id}`, { token: a.session })).body.description).toBe('mine');
    expect((await ctx.request('GET', '/webhooks/endpoints/not-a-uuid', { token: a.session })).status).toBe(422);
  });

  it('rotates: a new secret shown once, the previous one signing until the overlap ends', async () => {
    const { body: e } = await create(a);
    const res = await ctx.request('POST', `/webhooks/endpoints/${e.id}/rotate-secret`, { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^whsec_/);
    expect(res.body.secret).not.toBe(e.secret);
    const expires = Date.parse(res.body.previous_secret_expires_at);
    expect(expires - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(86_400_000);
    const key = await readOnlyKey(ctx, a);
    expect((await ctx.request('POST', `/webhooks/endpoints/${e.id}/rotate-secret`, { token: key })).status).toBe(403);
  });

  it('deletes (204), then 404; a read-only key may not', async () => {
    const { body: e } = await create(a);
    const key = await readOnlyKey(ctx, a);
    expect((await ctx.request('DELETE', `/webhooks/endpoints/${e.id}`, { token: key })).status).toBe(403);
    expect((await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: key, body: { enabled: false } })).status).toBe(403);
    expect((await ctx.request('DELETE', `/webhooks/endpoints/${e.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('DELETE', `/webhooks/endpoints/${e.id}`, { token: a.session })).status).toBe(404);
  });
});

describe('GET /webhooks/event-types', () => {
  it('lists every notification event and the webhook-only ones, with their source', async () => {
    const res = await ctx.request('GET', '/webhooks/event-types', { token: a.session });
    expect(res.status).toBe(200);
    const types = res.body.data.map((e: { event_type: string }) => e.event_type);
    expect(types).toEqual(WEBHOOK_EVENT_NAMES);
    for (const t of [
      'deal.stage_changed',
      'campaign.completed',
      'outreach.reply_received',
      'outreach.message_bounced',
      'card.lead_submitted',
    ])
      expect(res.body.data.find((e: { event_type: string }) => e.event_type === t).source).toBe('notification');
    for (const t of ['call.ended', 'knowledge_source.ingested'])
      expect(res.body.data.find((e: { event_type: string }) => e.event_type === t).source).toBe('webhook');
    expect(types).toContain('webhook_endpoint.disabled');
  });
});

describe('messages and attempts of another organization', () => {
  it('are 404, and a malformed message id is 422', async () => {
    const missing = 'msg_0190f3c2a1b27c3d8e4f5a6b7c8d9e0f';
    for (const path of [`/webhooks/messages/${missing}`, `/webhooks/messages/${missing}/attempts`]) {
      expect((await ctx.request('GET', path, { token: a.session })).status, path).toBe(404);
    }
    expect((await ctx.request('POST', `/webhooks/messages/${missing}/resend`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', '/webhooks/messages/msg_nothex', { token: a.session })).status).toBe(422);
    expect((await ctx.request('GET', '/webhooks/messages?event_type=nope', { token: a.session })).status).toBe(400);
  });
});

describe('the guarded client', () => {
  it('refuses a private address at each attempt (recorded as a failed attempt), so the receiver is never called', async () => {
    const t = await crmTenant(ctx);
    const e = await create(t, { url: receiver.url });
    expect((await ctx.request('POST', '/deals', { token: t.session, body: { name: 'SSRF', stage: 'prospecting' } })).status).toBe(200);
    const attempts = await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/endpoints/${e.body.id}/attempts`, { token: t.session });
      return res.body.data.length > 0 && res.body.data;
    });
    expect(attempts[0]).toMatchObject({
      status: 'failed',
      response_status_code: null,
      error: expect.stringMatching(/not a public address/),
    });
    const [delivery] = (await ctx.request('GET', `/webhooks/endpoints/${e.body.id}/messages`, { token: t.session })).body.data;
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    expect(Date.parse(delivery.next_attempt_at) - Date.now()).toBeGreaterThan(30_000);
    expect(receiver.received).toHaveLength(0);
  });
});
