import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackAccount } from '../../services/integrations/telephony-accounts';
import { contact, createCampaign, move, tenantWithAgent, waitFor, waitForStatus, type CampaignTenant } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeVapi, type FakeVapi } from '../support/fake-vapi';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { PUBLIC_BASE_URL, appFetch } from '../support/public-base';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// A campaign call Vapi runs calls the agent's tools back at the service: the fake Vapi sends the model's
// `tool-calls` as Vapi does (to the tool's server, with its x-vapi-secret header); the service runs the
// organization's webhook (received by a local endpoint) or searches its knowledge base, bounded in time,
// and answers `{results: [{toolCallId, result}]}`. Signed by another organization's account, or not at all,
// nothing runs.

const SECRET = 'vapi-deployment-secret-0123456789';
const NUMBER = '+14155557301';

let fake: FakeVapi;
let ctx: TestContext;
let site: FakeWebsite;
let orders: WebhookReceiver;
let slow: WebhookReceiver;
let a: CampaignTenant;
let callId: string;

const call = (t: CampaignTenant, method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });

async function datasetWithPage(t: CampaignTenant, pagePath: string): Promise<string> {
  const dataset = await call(t, 'POST', '/knowledge-base/datasets', { name: 'Visiting' });
  expect(dataset.status, dataset.text).toBe(200);
  const source = await call(t, 'POST', '/knowledge-base/sources', { type: 'URL', name: 'Parking page', url: site.url(pagePath) });
  expect(source.status, source.text).toBe(202);
  await waitFor(
    async () => (await call(t, 'GET', `/knowledge-base/sources/${source.body.id}`)).body.file_upload_status === 'ready',
    60_000,
    'the source to be ready',
  );
  expect((await call(t, 'PUT', `/knowledge-base/datasets/${dataset.body.id}/sources/${source.body.id}`)).status).toBe(200);
  return dataset.body.id;
}

/** The tool-calls message the fake sent last for this call, as sent. */
const lastToolCalls = () => fake.messages.filter((m) => m.body.includes('"tool-calls"')).at(-1)!;

beforeAll(async () => {
  fake = await startFakeVapi({ stepMs: 40 });
  site = await startFakeWebsite({
    '/parking': {
      body: '<!doctype html><html><head><title>Parking</title></head><body><main><h1>Parking</h1><p>Visitors park in the zebra-striped garage behind the clinic.</p></main></body></html>',
    },
  });
  orders = await startWebhookReceiver('/orders');
  orders.answer = () => ({ status: 200, body: JSON.stringify({ order: 'A-17', status: 'shipped on Tuesday' }) });
  slow = await startWebhookReceiver('/slow');
  slow.answer = () => ({ status: 200, body: 'late', delayMs: 4_000 });
  ctx = await createTestContext({
    worker: true,
    env: {
      DIALER: 'vapi',
      PUBLIC_BASE_URL,
      VAPI_API_BASE_URL: fake.url,
      VAPI_API_KEY: fake.apiKey,
      VAPI_PHONE_NUMBER_ID: fake.phoneNumberId,
      VAPI_WEBHOOK_SECRET: SECRET,
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
    },
  });
  fake.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);

  a = await tenantWithAgent(ctx);
  const dataset = await datasetWithPage(a, '/parking');
  const config = {
    instructions: 'Help customers of Acme.',
    tools: [
      { type: 'webhook', name: 'order_status', description: 'Look up an order', url: orders.url, headers: { 'X-Key': 'acme-key' } },
      { type: 'webhook', name: 'slow_lookup', description: 'A slow system', url: slow.url, timeout_seconds: 1 },
    ],
    knowledge_base: { dataset_ids: [dataset] },
  };
  const version = await call(a, 'POST', `/core/agents/${a.agentId}/versions`, { config });
  expect(version.status, version.text).toBe(200);
  expect((await call(a, 'POST', `/core/agents/${a.agentId}/versions/${version.body.version}/publish`, {})).status).toBe(200);

  // One call, held in progress until the tests are done with it.
  fake.hold(true);
  const campaign = await createCampaign(ctx, a, { max_attempts: 1, contacts: [contact({ phone_numbers: [NUMBER] })] });
  expect((await move(ctx, a, campaign.id, 'resume')).status).toBe(200);
  await waitFor(async () => fake.held === 1, 60_000, 'the call in progress');
  callId = [...fake.calls.values()].find((c) => c.customer.number === NUMBER)!.id;
}, 180_000);
afterAll(async () => {
  fake?.hold(false);
  fake?.release();
  await ctx?.close();
  await Promise.all([fake?.close(), site?.close(), orders?.close(), slow?.close()]);
});

describe('Vapi tool calls of a campaign call', () => {
  it("runs the organization's webhook and answers Vapi with its result", async () => {
    const answer = await fake.callTool(callId, 'order_status', { order: 'A-17' }, 'call_orders_1');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      results: [{ name: 'order_status', toolCallId: 'call_orders_1', result: '{"order":"A-17","status":"shipped on Tuesday"}' }],
    });
    expect(orders.received).toHaveLength(1);
    expect(JSON.parse(orders.received[0]!.body)).toEqual({ order: 'A-17' });
    // The customer's headers go to the customer's endpoint, and never left the service for Vapi.
    expect(orders.received[0]!.headers['x-key']).toBe('acme-key');
    expect(JSON.stringify(fake.calls.get(callId)!.assistant)).not.toContain('acme-key');
  });

  it('answers a knowledge-base tool from the ingested knowledge base', async () => {
    const answer = await fake.callTool(callId, 'search_knowledge_base', { query: 'where do visitors park' }, 'call_kb_1');
    expect(answer.status).toBe(200);
    const [result] = (answer.body as { results: { toolCallId: string; result?: string }[] }).results;
    expect(result).toMatchObject({ toolCallId: 'call_kb_1' });
    expect(result!.result).toContain('zebra-striped garage');
  });

  it('bounds a webhook by its timeout and answers with an error the model reads', async () => {
    const started = Date.now();
    const answer = await fake.callTool(callId, 'slow_lookup', {}, 'call_slow_1');
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(answer.status).toBe(200);
    const [result] = (answer.body as { results: { toolCallId: string; result?: string; error?: string }[] }).results;
    expect(result).toMatchObject({ name: 'slow_lookup', toolCallId: 'call_slow_1', error: expect.any(String) });
    expect(result!.result).toBeUndefined();
  });

  it('answers several calls of one message in order, an unknown tool with an error', async () => {
    const sent = JSON.parse(lastToolCalls().body) as { message: Record<string, unknown> };
    const toolCall = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: args } });
    const message = {
      ...sent.message,
      timestamp: Date.now(),
      // Arguments as Vapi's schema types them (JSON text) and as it sends them (an object).
      toolCallList: [toolCall('c1', 'order_status', '{"order":"B-2"}'), toolCall('c2', 'no_such_tool', {})],
      toolWithToolCallList: [],
    };
    const res = await appFetch(ctx)(lastToolCalls().url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-vapi-secret': SECRET },
      body: JSON.stringify({ message }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: { toolCallId: string; result?: string; error?: string }[] };
    expect(body.results.map((r) => r.toolCallId)).toEqual(['c1', 'c2']);
    expect(body.results[0]!.result).toContain('shipped');
    expect(body.results[1]!.error).toMatch(/no tool named no_such_tool/);
    expect(JSON.parse(orders.received.at(-1)!.body)).toEqual({ order: 'B-2' });
  });

  it("refuses a call signed by another organization's account, a forged or stale one, and runs nothing", async () => {
    const b = await tenantWithAgent(ctx);
    const connected = await call(b, 'POST', '/integrations/telephony-accounts', {
      provider: 'vapi',
      api_key: fake.apiKey,
      phone_number_id: fake.phoneNumberId,
    });
    expect(connected.status, connected.text).toBe(200);
    const bSecret = (await callbackAccount(ctx.deps, 'vapi', connected.body.id)).account;
    if (bSecret.provider !== 'vapi') throw new Error('not a Vapi account');

    const sent = lastToolCalls();
    const message = JSON.parse(sent.body) as { message: Record<string, unknown> };
    const fresh = JSON.stringify({ message: { ...message.message, timestamp: Date.now() } });
    const post = (url: string, secret: string | undefined, body = fresh) =>
      appFetch(ctx)(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(secret ? { 'x-vapi-secret': secret } : {}) },
        body,
      });
    const received = orders.received.length + slow.received.length;
    const path = `${PUBLIC_BASE_URL}/telephony/vapi/tool-calls`;

    // B's own account and secret, naming A's call: not B's call.
    const foreign = await post(`${path}?account=${connected.body.id}`, bSecret.webhookSecret);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual({ detail: 'Call not found' });
    // B's secret on the deployment account's URL, a wrong secret, none: 401.
    expect((await post(path, bSecret.webhookSecret)).status).toBe(401);
    expect((await post(path, 'not-the-secret')).status).toBe(401);
    expect((await post(path, undefined)).status).toBe(401);
    // Genuine but captured long ago.
    const stale = JSON.stringify({ message: { ...message.message, timestamp: Date.now() - 3_600_000 } });
    expect((await post(path, SECRET, stale)).status).toBe(403);
    // Another message type at this door.
    const other = JSON.stringify({ message: { ...message.message, type: 'status-update', timestamp: Date.now() } });
    expect((await post(path, SECRET, other)).status).toBe(422);
    expect(orders.received.length + slow.received.length).toBe(received);
  });

  it('refuses tool calls once the call has ended', { timeout: 60_000 }, async () => {
    const sent = lastToolCalls();
    fake.hold(false);
    fake.release();
    const campaign = await ctx.deps.sql<{ campaign_id: string }[]>`
      SELECT campaign_id FROM conversations WHERE org_id = ${a.orgId} AND phone_number = ${NUMBER}`;
    await waitForStatus(ctx, a, campaign[0]!.campaign_id, 'completed', 60_000);
    const message = JSON.parse(sent.body) as { message: Record<string, unknown> };
    const res = await appFetch(ctx)(sent.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-vapi-secret': SECRET },
      body: JSON.stringify({ message: { ...message.message, timestamp: Date.now() } }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ detail: 'The call has ended' });
  });
});
