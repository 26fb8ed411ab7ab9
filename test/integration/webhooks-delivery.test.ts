import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitWebhookEvent } from '../../services/webhooks/emit';
import { startWebhookRelay, type WebhookRelay } from '../../services/webhooks/relay';
import { describeWorkflow } from '../../services/workflow-client';
import { webhookEndpointActorId } from '../../workflows/webhooks-messages';
import { contact, createCampaign, move, tenantWithAgent, waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, readOnlyKey } from '../support/crm-contacts';
import { keepHistory } from '../support/histories';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';

// Deliveries on the real worker and Temporal dev server, to receivers on 127.0.0.1, each verified by the
// standardwebhooks package; retry delays shortened (WEBHOOK_RETRY_DELAYS_SECONDS) so a schedule runs in seconds.

let ctx: TestContext;
let relay: WebhookRelay;
let site: FakeWebsite;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  site = await startFakeWebsite({ '/faq': { body: '<html><body><h1>FAQ</h1><p>Returns are free within 30 days.</p></body></html>' } });
  ctx = await createTestContext({
    worker: true,
    env: {
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_DELAYS_SECONDS: '0.3,1,2,4',
      WEBHOOK_SWEEP_INTERVAL_SECONDS: '1',
      WEBHOOK_TIMEOUT_MS: '3000',
      // One attempt in flight per endpoint: a healthy endpoint's deliveries arrive exactly in creation order.
      WEBHOOK_ENDPOINT_CONCURRENCY: '1',
      DIALER_SIMULATED_LATENCY_MS: '200',
      DIALER_SIMULATED_OUTCOMES: 'completed:1',
    },
  });
  relay = await startWebhookRelay(ctx.deps);
});
afterAll(async () => {
  await relay?.stop();
  await ctx?.close();
  await site?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function endpoint(t: { session: string }, url: string, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/webhooks/endpoints', { token: t.session, body: { url, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; secret: string };
}

/** The body, verified by the standardwebhooks package with the given secret (throws when it does not verify). */
const verified = (hook: ReceivedWebhook, secret: string) =>
  new Webhook(secret).verify(hook.body, {
    'webhook-id': hook.id,
    'webhook-timestamp': hook.timestamp,
    'webhook-signature': hook.signature,
  }) as { id: string; type: string; timestamp: string; data: Record<string, unknown> };

const createDeal = async (t: { session: string }, name: string) => {
  const res = await ctx.request('POST', '/deals', { token: t.session, body: { name, stage: 'prospecting', value: 100 } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string };
};

const attemptsOf = async (t: { session: string }, endpointId: string) =>
  (await ctx.request('GET', `/webhooks/endpoints/${endpointId}/attempts?limit=250`, { token: t.session })).body.data as {
    message_id: string;
    status: string;
    trigger: string;
    response_status_code: number | null;
    response_body: string;
    error: string | null;
    latency_ms: number;
  }[];

describe('delivery of a notification event', () => {
  it('signs each delivery the Standard Webhooks way, to the subscribed, enabled endpoints of the organization only', async () => {
    const t = await crmTenant(ctx);
    const other = await crmTenant(ctx);
    const [all, wonOnly, disabled, theirs] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    const eAll = await endpoint(t, all.url);
    await endpoint(t, wonOnly.url, { event_types: ['deal.won'] });
    await endpoint(t, disabled.url, { enabled: false });
    await endpoint(other, theirs.url);

    const deal = await createDeal(t, 'Acme renewal');
    await all.waitFor((r) => r.length === 1, 20_000, 'deal.created');
    const hook = all.received[0]!;
    const body = verified(hook, eAll.secret);
    expect(body).toEqual({
      id: hook.id,
      type: 'deal.created',
      timestamp: expect.any(String),
      data: expect.objectContaining({ deal_id: deal.id, deal_name: 'Acme renewal', entity_type: 'deal', entity_id: deal.id }),
    });
    expect(hook.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(hook.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(hook.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(hook.headers['content-type']).toBe('application/json');
    // Another secret does not verify it: the signature is the endpoint's.
    expect(() => verified(hook, `whsec_${Buffer.alloc(32, 7).toString('base64')}`)).toThrow();

    // The message, its delivery and its attempt are readable (once recorded, just after the answer).
    const message = await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/messages/${hook.id}`, { token: t.session });
      return res.body.deliveries?.[0]?.status === 'succeeded' && res;
    });
    expect(message.status).toBe(200);
    expect(message.body).toMatchObject({ id: hook.id, event_type: 'deal.created', data: body.data, timestamp: body.timestamp });
    expect(message.body.deliveries).toEqual([
      expect.objectContaining({ endpoint_id: eAll.id, status: 'succeeded', attempts: 1, last_status_code: 204, url: all.url }),
    ]);
    const [attempt] = await attemptsOf(t, eAll.id);
    expect(attempt).toMatchObject({
      message_id: hook.id,
      status: 'succeeded',
      trigger: 'scheduled',
      response_status_code: 204,
      error: null,
    });
    expect(attempt!.latency_ms).toBeGreaterThanOrEqual(0);
    const list = await ctx.request('GET', '/webhooks/messages?event_type=deal.created', { token: t.session });
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([hook.id]);
    expect((await ctx.request('GET', `/webhooks/messages/${hook.id}`, { token: other.session })).status).toBe(404);

    await new Promise((r) => setTimeout(r, 500));
    expect(wonOnly.received).toHaveLength(0);
    expect(disabled.received).toHaveLength(0);
    expect(theirs.received).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a failed attempt on the schedule with the same webhook-id, records each attempt, and stops at the first 2xx', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    let calls = 0;
    r.answer = () => (++calls <= 2 ? { status: 500, body: `E${'x'.repeat(3000)}` } : { status: 200, body: 'ok' });
    const e = await endpoint(t, r.url);
    await createDeal(t, 'Retry me');
    await r.waitFor((got) => got.length === 3, 20_000, 'three attempts');
    expect(new Set(r.received.map((h) => h.id)).size).toBe(1);
    for (const h of r.received) verified(h, e.secret);
    // Apart by the schedule: 0.3 s, then 1 s.
    expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(250);
    expect(r.received[2]!.at - r.received[1]!.at).toBeGreaterThanOrEqual(900);
    const attempts = await waitFor(async () => {
      const list = await attemptsOf(t, e.id);
      return list.length === 3 && list;
    });
    expect(attempts.map((a) => [a.status, a.response_status_code])).toEqual([
      ['succeeded', 200],
      ['failed', 500],
      ['failed', 500],
    ]);
    // The first bytes of the answer, not all of it.
    expect(attempts[1]!.response_body).toHaveLength(1024);
    expect(attempts[1]!.response_body.startsWith('Exxx')).toBe(true);
    expect(attempts[1]!.error).toBe('HTTP 500');
    const deliveries = await ctx.request('GET', `/webhooks/endpoints/${e.id}/messages`, { token: t.session });
    expect(deliveries.body.data).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 3, event_type: 'deal.created' })]);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, webhookEndpointActorId(e.id), 'webhook-endpoint-retries');
  });

  it('fails a delivery for good once the schedule is spent; a resend starts a new one (manual), per endpoint or for every failed one', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    r.answer = () => ({ status: 503 });
    const e = await endpoint(t, r.url);
    await createDeal(t, 'Never delivered');
    // Five attempts: immediately, then 0.3, 1, 2 and 4 s later.
    await r.waitFor((got) => got.length === 5, 20_000, 'five attempts');
    const messageId = r.received[0]!.id;
    const failed = await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/endpoints/${e.id}/messages?status=failed`, { token: t.session });
      return res.body.data.length === 1 && res.body.data[0];
    });
    expect(failed).toMatchObject({ message_id: messageId, status: 'failed', attempts: 5, next_attempt_at: null, last_status_code: 503 });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(r.received).toHaveLength(5);

    const key = await readOnlyKey(ctx, t);
    expect((await ctx.request('POST', `/webhooks/messages/${messageId}/resend`, { token: key })).status).toBe(403);
    r.answer = () => ({ status: 204 });
    const resend = await ctx.request('POST', `/webhooks/messages/${messageId}/resend`, { token: t.session });
    expect(resend.status).toBe(202);
    expect(resend.body).toEqual({ message_id: messageId, endpoint_ids: [e.id] });
    await r.waitFor((got) => got.length === 6, 20_000, 'the resend');
    expect(r.received[5]!.id).toBe(messageId);
    const attempts = await waitFor(async () => {
      const list = await attemptsOf(t, e.id);
      return list.length === 6 && list;
    });
    expect(attempts[0]).toMatchObject({ status: 'succeeded', trigger: 'manual' });

    // Nothing failed any more: the message-wide resend sends nothing; the per-endpoint one sends it again anyway.
    expect((await ctx.request('POST', `/webhooks/messages/${messageId}/resend`, { token: t.session })).body.endpoint_ids).toEqual([]);
    const again = await ctx.request('POST', `/webhooks/endpoints/${e.id}/messages/${messageId}/resend`, { token: t.session });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ endpoint_id: e.id, message_id: messageId, status: 'pending', attempts: 0 });
    await r.waitFor((got) => got.length === 7, 20_000, 'the second resend');

    const other = await crmTenant(ctx);
    expect((await ctx.request('POST', `/webhooks/endpoints/${e.id}/messages/${messageId}/resend`, { token: other.session })).status).toBe(
      404,
    );
    const elsewhere = await endpoint(t, (await receiver()).url);
    const never = await ctx.request('POST', `/webhooks/endpoints/${elsewhere.id}/messages/${messageId}/resend`, { token: t.session });
    expect(never.status).toBe(404);
    await ctx.request('PATCH', `/webhooks/endpoints/${e.id}`, { token: t.session, body: { enabled: false } });
    const off = await ctx.request('POST', `/webhooks/endpoints/${e.id}/messages/${messageId}/resend`, { token: t.session });
    expect(off.status).toBe(409);
  });
});

describe('one endpoint down', () => {
  it('does not hold back a healthy endpoint, which gets every message in creation order; the down one gets them all once back', async () => {
    const t = await crmTenant(ctx);
    const [healthy, down] = await Promise.all([receiver(), receiver()]);
    const eHealthy = await endpoint(t, healthy.url);
    const eDown = await endpoint(t, down.url);
    await down.down();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      await ctx.deps.sql.begin((tx) => emitWebhookEvent(tx, t.orgId, { event_type: 'call.ended', data: { n: i } }));
    }
    await healthy.waitFor((r) => r.length === 12, 20_000, 'the healthy endpoint');
    const order = healthy.received.map((h) => (verified(h, eHealthy.secret).data as { n: number }).n);
    expect(order).toEqual([...Array(12).keys()]);
    for (const h of healthy.received) ids.push(h.id);
    expect(down.received).toHaveLength(0);
    const failedDown = await waitFor(async () => {
      const list = (await attemptsOf(t, eDown.id)).filter((a) => a.status === 'failed');
      return list.length >= 12 && list;
    });
    expect(failedDown[0]!.response_status_code).toBeNull();
    expect(failedDown[0]!.error).toMatch(/Cannot reach/);

    await down.up();
    await down.waitFor((r) => new Set(r.map((h) => h.id)).size === 12, 20_000, 'the endpoint back up');
    expect(new Set(down.received.map((h) => h.id))).toEqual(new Set(ids));
    for (const h of down.received) verified(h, eDown.secret);
  });
});

describe('secret rotation', () => {
  it('signs with both secrets during the overlap (two v1 signatures), then with the new one only', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    const e = await endpoint(t, r.url);
    const rotated = await ctx.request('POST', `/webhooks/endpoints/${e.id}/rotate-secret`, { token: t.session });
    await createDeal(t, 'Rotation');
    await r.waitFor((got) => got.length === 1);
    const during = r.received[0]!;
    expect(during.signature.split(' ')).toHaveLength(2);
    for (const part of during.signature.split(' ')) expect(part).toMatch(/^v1,/);
    expect(verified(during, e.secret).type).toBe('deal.created');
    expect(verified(during, rotated.body.secret).type).toBe('deal.created');

    // The overlap ends: the previous secret signs no more.
    await ctx.deps.sql`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${e.id}`;
    expect((await ctx.request('GET', `/webhooks/endpoints/${e.id}`, { token: t.session })).body.previous_secret_expires_at).toBeNull();
    await createDeal(t, 'After the overlap');
    await r.waitFor((got) => got.length === 2);
    const after = r.received[1]!;
    expect(after.signature.split(' ')).toHaveLength(1);
    expect(verified(after, rotated.body.secret).type).toBe('deal.created');
    expect(() => verified(after, e.secret)).toThrow();
  });
});

describe('events integrators need', () => {
  it('call.ended for each call of a campaign, and campaign.completed, from the transactions that record them', async () => {
    const t = await tenantWithAgent(ctx);
    const r = await receiver();
    const e = await endpoint(t, r.url, { event_types: ['call.ended', 'campaign.completed'] });
    const campaign = await createCampaign(ctx, t, { contacts: [contact(), contact()] });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    await r.waitFor((got) => got.some((h) => verified(h, e.secret).type === 'campaign.completed'), 30_000, 'campaign.completed');
    const bodies = r.received.map((h) => verified(h, e.secret));
    const calls = bodies.filter((b) => b.type === 'call.ended');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.data).toMatchObject({
        campaign_id: campaign.id,
        campaign_name: 'Spring outreach',
        status: 'completed',
        outcome: expect.any(String),
        duration_seconds: expect.any(Number),
        direction: 'outbound',
      });
      expect(call.data).toHaveProperty('transcript_url');
      expect(call.data).toHaveProperty('recording_url');
    }
    expect(bodies.find((b) => b.type === 'campaign.completed')!.data).toMatchObject({ campaign_id: campaign.id });
  });

  it('knowledge_source.ingested once a source is ingested', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    const e = await endpoint(t, r.url, { event_types: ['knowledge_source.ingested'] });
    const source = await ctx.request('POST', '/knowledge-base/sources', {
      token: t.session,
      body: { type: 'URL', url: site.url('/faq'), name: 'FAQ' },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(202);
    await r.waitFor((got) => got.length === 1, 30_000, 'knowledge_source.ingested');
    expect(verified(r.received[0]!, e.secret)).toMatchObject({
      type: 'knowledge_source.ingested',
      data: { source_id: source.body.id, source_name: 'FAQ', source_type: 'URL', chunk_count: expect.any(Number) },
    });
  });
});

describe('the actor', () => {
  it('is one workflow per endpoint, tagged with its organization, ending once the endpoint is deleted', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    const e = await endpoint(t, r.url);
    await createDeal(t, 'Actor');
    await r.waitFor((got) => got.length === 1);
    const described = await describeWorkflow(ctx.deps, webhookEndpointActorId(e.id));
    expect(described?.type).toBe('webhookEndpointActor');
    expect(described?.searchAttributes.OrganizationId).toEqual([t.orgId]);
    expect((await ctx.request('DELETE', `/webhooks/endpoints/${e.id}`, { token: t.session })).status).toBe(204);
    // A wake-up after the delete: the actor's next step finds the endpoint gone and ends.
    await ctx.deps.sql`SELECT pg_notify('webhook_deliveries', ${`${t.orgId}:${e.id}`})`;
    const result = await ctx.deps.temporal.workflow.getHandle(webhookEndpointActorId(e.id)).result();
    expect(result).toBe('gone');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, webhookEndpointActorId(e.id), 'webhook-endpoint-actor');
  });
});
