import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookRelay, type WebhookRelay } from '../../services/webhooks/relay';
import { webhookEndpointActorId } from '../../workflows/webhooks-messages';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant } from '../support/crm-contacts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// An endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER_SECONDS (here 1 s instead of five days)
// is disabled, and the organization hears of it: a notification (webhook_endpoint.disabled, to its admins)
// that is also a webhook message to its other endpoints. Enabled again, it gets what waited.

let ctx: TestContext;
let relay: WebhookRelay;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_DELAYS_SECONDS: '0.4,0.4,0.4,0.4,30',
      WEBHOOK_DISABLE_AFTER_SECONDS: '1',
      WEBHOOK_SWEEP_INTERVAL_SECONDS: '1',
    },
  });
  relay = await startWebhookRelay(ctx.deps);
});
afterAll(async () => {
  await relay?.stop();
  await ctx?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

describe('an endpoint failing every attempt', () => {
  it('is disabled once it has failed for the bound, the organization notified, and resumes when enabled again', async () => {
    const t = await crmTenant(ctx);
    const [failing, watcher] = await Promise.all([receiver(), receiver()]);
    failing.answer = () => ({ status: 500 });
    const bad = await ctx.request('POST', '/webhooks/endpoints', {
      token: t.session,
      body: { url: failing.url, event_types: ['deal.created'] },
    });
    const good = await ctx.request('POST', '/webhooks/endpoints', {
      token: t.session,
      body: { url: watcher.url, event_types: ['webhook_endpoint.disabled'] },
    });
    expect((await ctx.request('POST', '/deals', { token: t.session, body: { name: 'Lost cause', stage: 'prospecting' } })).status).toBe(
      200,
    );

    // Attempts 0.4 s apart (or more, on a busy machine): the one that finds the streak 1 s old disables the endpoint.
    const disabled = await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/endpoints/${bad.body.id}`, { token: t.session });
      return res.body.enabled === false && res.body;
    }, 20_000);
    expect(disabled).toMatchObject({ disabled_reason: 'failing', disabled_at: expect.any(String), failing_since: expect.any(String) });
    // Not before the streak was 1 s old: the attempt that disabled it came at least that long after the first.
    const first = failing.received[0]!.at;
    const last = failing.received.at(-1)!.at;
    expect(failing.received.length).toBeGreaterThanOrEqual(2);
    expect(last - first).toBeGreaterThanOrEqual(900);
    // (Times read by the receiver, a few milliseconds after the sender's.)
    for (const h of failing.received.slice(0, -1)) expect(h.at - first).toBeLessThan(1100);
    // Its actor ends: nothing more is sent while it is off.
    const result = await ctx.deps.temporal.workflow.getHandle(webhookEndpointActorId(bad.body.id)).result();
    expect(result).toBe('disabled');
    const sent = failing.received.length;

    // The organization hears of it: an always-send notification naming the endpoint, which is a webhook message too.
    const [event] = await ctx.deps.sql<{ payload: Record<string, unknown> }[]>`
      SELECT payload FROM notification_outbox WHERE org_id = ${t.orgId} AND event_type = 'webhook_endpoint.disabled'`;
    expect(event!.payload).toMatchObject({ endpoint_id: bad.body.id, url: failing.url, failing_since: disabled.failing_since });
    await watcher.waitFor((r) => r.length === 1, 20_000, 'webhook_endpoint.disabled');
    const hook = watcher.received[0]!;
    const body = new Webhook(good.body.secret).verify(hook.body, {
      'webhook-id': hook.id,
      'webhook-timestamp': hook.timestamp,
      'webhook-signature': hook.signature,
    }) as { type: string; data: Record<string, unknown> };
    expect(body.type).toBe('webhook_endpoint.disabled');
    expect(body.data).toMatchObject({ endpoint_id: bad.body.id, entity_type: 'webhook_endpoint', entity_id: bad.body.id });

    // A disabled endpoint takes no new message, and its waiting delivery is not sent.
    await ctx.request('POST', '/deals', { token: t.session, body: { name: 'While off', stage: 'prospecting' } });
    await new Promise((r) => setTimeout(r, 1500));
    expect(failing.received).toHaveLength(sent);
    const pending = await ctx.request('GET', `/webhooks/endpoints/${bad.body.id}/messages`, { token: t.session });
    expect(pending.body.data).toEqual([expect.objectContaining({ status: 'pending', event_type: 'deal.created' })]);

    // Enabled again (the endpoint works now): the waiting delivery goes out, the streak starts afresh.
    failing.answer = () => ({ status: 200 });
    const on = await ctx.request('PATCH', `/webhooks/endpoints/${bad.body.id}`, { token: t.session, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    await failing.waitFor((r) => r.length === sent + 1, 20_000, 'the waiting delivery');
    await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/endpoints/${bad.body.id}`, { token: t.session });
      return res.body.last_success_at !== null && res.body.failing_since === null;
    });
  });

  it('is not disabled while some attempts succeed', async () => {
    const t = await crmTenant(ctx);
    const r = await receiver();
    let n = 0;
    // Every other answer fails: the streak never lasts.
    r.answer = () => ({ status: ++n % 2 === 0 ? 200 : 500 });
    const e = await ctx.request('POST', '/webhooks/endpoints', { token: t.session, body: { url: r.url } });
    for (let i = 0; i < 4; i++) {
      await ctx.request('POST', '/deals', { token: t.session, body: { name: `Deal ${i}`, stage: 'prospecting' } });
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await waitFor(async () => {
      const res = await ctx.request('GET', `/webhooks/endpoints/${e.body.id}/messages?status=pending`, { token: t.session });
      return res.body.data.length === 0;
    }, 20_000);
    expect((await ctx.request('GET', `/webhooks/endpoints/${e.body.id}`, { token: t.session })).body.enabled).toBe(true);
  });
});
