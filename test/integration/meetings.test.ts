import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../platform/adapters/meetings/vendor';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, createContact, crmTenant, insertAccount, readOnlyKey, type CrmTenant } from '../support/crm-contacts';

// The meeting bots API and the capture webhook's rules, without a worker: workflows are started and
// signalled, and their histories read back from Temporal.

const newSecret = () => `whsec_${crypto.randomBytes(24).toString('base64')}`;
const CURRENT = newSecret();
const PREVIOUS = newSecret();
const ZOOM = 'https://us02web.zoom.us/j/81234567890?pwd=abc';

let ctx: TestContext;
let a: CrmTenant;
let b: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext({ env: { MEETING_WEBHOOK_SECRETS: `${CURRENT},${PREVIOUS}` } });
  [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
});
afterAll(() => ctx?.close());

const createBot = (t: CrmTenant, body: Record<string, unknown>, token = t.session) =>
  ctx.request('POST', '/meetings/bots', { token, body });

async function newBot(t: CrmTenant, body: Record<string, unknown> = {}) {
  const res = await createBot(t, { meeting_url: ZOOM, join_at: new Date(Date.now() + 3_600_000).toISOString(), ...body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A capture event about one of our bots, in the vendor's shape. */
const eventFor = (bot: { id: string; organization_id: string }, event = 'bot.joining_call') =>
  JSON.stringify({
    event,
    data: {
      data: { code: event.split('.')[1], sub_code: null, updated_at: new Date().toISOString() },
      bot: { id: `vendor-${bot.id}`, metadata: { bot_id: bot.id, org_id: bot.organization_id } },
    },
  });

function capture(body: string, headers: Record<string, string>) {
  return ctx.request('POST', '/meetings/webhooks/capture', { rawBody: body, headers: { 'Content-Type': 'application/json', ...headers } });
}

const signed = (body: string, options: { secret?: string; id?: string; at?: Date } = {}) =>
  capture(body, signWebhook(options.secret ?? CURRENT, options.id ?? `msg_${crypto.randomUUID()}`, body, options.at));

async function signalsReceived(botId: string): Promise<number> {
  const history = await ctx.deps.temporal.workflow.getHandle(`meeting-bot:${botId}`).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
}

describe('POST /meetings/bots', () => {
  it('creates a scheduled bot and starts its workflow meeting-bot:<id> tagged with the organization', async () => {
    const account = await insertAccount(ctx, a.orgId);
    const contact = await createContact(ctx, a, { email: `ada-${crypto.randomUUID()}@example.com` });
    const res = await createBot(a, { meeting_url: ZOOM, account_id: account, contact_ids: [contact.id, contact.id], bot_name: 'Notes' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      organization_id: a.orgId,
      meeting_url: ZOOM,
      platform: 'zoom',
      bot_name: 'Notes',
      account_id: account,
      deal_id: null,
      contact_ids: [contact.id],
      status: 'scheduled',
      vendor: 'simulated',
      recording: null,
      activity_id: null,
      workflow_id: `meeting-bot:${res.body.id}`,
    });
    const description = await ctx.deps.temporal.workflow.getHandle(res.body.workflow_id).describe();
    expect(description.type).toBe('meetingBotWorkflow');
    expect(description.searchAttributes.OrganizationId).toEqual([a.orgId]);
  });

  it('accepts Zoom, Google Meet and Teams links and refuses anything else with 422', async () => {
    const good = {
      zoom: 'https://zoom.us/j/1234567890',
      google_meet: 'https://meet.google.com/abc-defg-hij',
      microsoft_teams: 'https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%7d',
    };
    for (const [platform, meeting_url] of Object.entries(good)) {
      const res = await createBot(a, { meeting_url, join_at: new Date(Date.now() + 3_600_000).toISOString() });
      expect(res.status, meeting_url).toBe(200);
      expect(res.body.platform).toBe(platform);
    }
    for (const meeting_url of [
      'http://zoom.us/j/1234567890',
      'https://zoom.us.evil.example/j/1234567890',
      'https://zoom.us/j/abc',
      'https://meet.google.com/abcdefghij',
      'https://teams.microsoft.com/',
      'not a url',
    ]) {
      const res = await createBot(a, { meeting_url });
      expect(res.status, meeting_url).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'meeting_url']);
    }
    expect((await createBot(a, { meeting_url: ZOOM, extra: 1 })).status).toBe(422);
    expect((await createBot(a, {})).status).toBe(422);
  });

  it("refuses another organization's account, deal or contact with 404 and writes nothing", async () => {
    const foreignAccount = await insertAccount(ctx, b.orgId);
    const before = (await ctx.request('GET', '/meetings/bots', { token: a.session })).body.pagination.total;
    expect((await createBot(a, { meeting_url: ZOOM, account_id: foreignAccount })).body).toEqual({ detail: 'Account not found' });
    expect((await createBot(a, { meeting_url: ZOOM, deal_id: MISSING_ID })).status).toBe(404);
    expect((await createBot(a, { meeting_url: ZOOM, contact_ids: [MISSING_ID] })).body).toEqual({
      detail: `Contact not found: ${MISSING_ID}`,
    });
    expect((await ctx.request('GET', '/meetings/bots', { token: a.session })).body.pagination.total).toBe(before);
  });

  it('needs a CRM manage scope (403 for a read-only key)', async () => {
    const key = await readOnlyKey(ctx, a);
    expect((await createBot(a, { meeting_url: ZOOM }, key)).status).toBe(403);
    expect((await ctx.request('POST', '/meetings/bots', { body: { meeting_url: ZOOM } })).status).toBe(401);
  });
});

describe('GET /meetings/bots and /meetings/bots/{bot_id}', () => {
  it('lists newest first, filters by status and account, and pages by cursor', async () => {
    const t = await crmTenant(ctx);
    const account = await insertAccount(ctx, t.orgId);
    const first = await newBot(t, { account_id: account });
    const second = await newBot(t);
    const third = await newBot(t, { account_id: account });
    const all = await ctx.request('GET', '/meetings/bots', { token: t.session });
    expect(all.status).toBe(200);
    expect(all.body.data.map((x: { id: string }) => x.id)).toEqual([third.id, second.id, first.id]);
    const byAccount = await ctx.request('GET', `/meetings/bots?account_id=${account}`, { token: t.session });
    expect(byAccount.body.data.map((x: { id: string }) => x.id)).toEqual([third.id, first.id]);
    expect((await ctx.request('GET', '/meetings/bots?status=completed', { token: t.session })).body.data).toEqual([]);
    expect((await ctx.request('GET', '/meetings/bots?status=bogus', { token: t.session })).status).toBe(400);
    expect((await ctx.request('GET', '/meetings/bots?colour=red', { token: t.session })).status).toBe(400);
    const page1 = await ctx.request('GET', '/meetings/bots?limit=2', { token: t.session });
    expect(page1.body.pagination).toMatchObject({ limit: 2, total: 3 });
    const page2 = await ctx.request('GET', `/meetings/bots?limit=2&cursor=${page1.body.pagination.next_cursor}`, { token: t.session });
    expect(page2.body.data.map((x: { id: string }) => x.id)).toEqual([first.id]);
    expect(page2.body.pagination.next_cursor).toBeNull();
  });

  it('reads a bot with its status history; another organization gets 404, a read-only key 200', async () => {
    const bot = await newBot(a);
    const res = await ctx.request('GET', `/meetings/bots/${bot.id}`, { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: bot.id, status: 'scheduled', transcript: null, recording: null });
    expect(res.body.status_history).toEqual([expect.objectContaining({ status: 'scheduled' })]);
    expect((await ctx.request('GET', `/meetings/bots/${bot.id}`, { token: b.session })).body).toEqual({ detail: 'Meeting bot not found' });
    expect((await ctx.request('GET', '/meetings/bots', { token: b.session })).body.data.map((x: { id: string }) => x.id)).not.toContain(
      bot.id,
    );
    const key = await readOnlyKey(ctx, a);
    expect((await ctx.request('GET', `/meetings/bots/${bot.id}`, { token: key })).status).toBe(200);
  });
});

describe('DELETE /meetings/bots/{bot_id}', () => {
  it('records the leave request and tells the workflow (202)', async () => {
    const bot = await newBot(a);
    const res = await ctx.request('DELETE', `/meetings/bots/${bot.id}`, { token: a.session });
    expect(res.status, res.text).toBe(202);
    expect(res.body.leave_requested_at).toEqual(expect.any(String));
    const history = await ctx.deps.temporal.workflow.getHandle(bot.workflow_id).fetchHistory();
    const signals = (history.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName).filter(Boolean);
    expect(signals).toEqual(['leaveMeeting']);
  });

  it('is 404 for another organization or an unknown bot, 403 for a read-only key, 409 once the bot has ended', async () => {
    const bot = await newBot(a);
    expect((await ctx.request('DELETE', `/meetings/bots/${bot.id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/meetings/bots/${MISSING_ID}`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/meetings/bots/${bot.id}`, { token: await readOnlyKey(ctx, a) })).status).toBe(403);
    await ctx.deps.sql`UPDATE meeting_bots SET status = 'failed', ended_at = now() WHERE id = ${bot.id}`;
    const ended = await ctx.request('DELETE', `/meetings/bots/${bot.id}`, { token: a.session });
    expect(ended.status).toBe(409);
    expect(ended.body).toEqual({ detail: 'Cannot remove a bot that is failed' });
  });
});

describe('POST /meetings/webhooks/capture', () => {
  it('signals a known bot once and answers 200; a redelivery of the same webhook-id is acknowledged without a second signal', async () => {
    const bot = await newBot(a);
    const body = eventFor(bot);
    const id = `msg_${crypto.randomUUID()}`;
    const first = await signed(body, { id });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ status: 'accepted' });
    const again = await signed(body, { id });
    expect(again.status).toBe(200);
    expect(await signalsReceived(bot.id)).toBe(1);
    expect((await signed(eventFor(bot, 'bot.in_waiting_room'))).status).toBe(200);
    expect(await signalsReceived(bot.id)).toBe(2);
  });

  it('answers 202 for a verified event it cannot place: unknown bot, no bot, an ended bot', async () => {
    expect((await signed(eventFor({ id: MISSING_ID, organization_id: a.orgId }))).status).toBe(202);
    expect((await signed(JSON.stringify({ event: 'calendar.update', data: { calendar_id: 'x' } }))).body).toEqual({ status: 'ignored' });
    const bot = await newBot(a);
    // Another organization's id in the metadata does not reach this bot.
    expect((await signed(eventFor({ id: bot.id, organization_id: b.orgId }))).status).toBe(202);
    await ctx.deps.sql`UPDATE meeting_bots SET status = 'canceled', ended_at = now() WHERE id = ${bot.id}`;
    expect((await signed(eventFor(bot))).status).toBe(202);
    expect(await signalsReceived(bot.id)).toBe(0);
  });

  it('accepts every configured secret (rotation) and the svix-* header names', async () => {
    const bot = await newBot(a);
    expect((await signed(eventFor(bot), { secret: PREVIOUS })).status).toBe(200);
    const body = eventFor(bot, 'bot.in_call_not_recording');
    const headers = signWebhook(CURRENT, `msg_${crypto.randomUUID()}`, body);
    const svix = {
      'svix-id': headers['webhook-id']!,
      'svix-timestamp': headers['webhook-timestamp']!,
      'svix-signature': headers['webhook-signature']!,
    };
    expect((await capture(body, svix)).status).toBe(200);
    // A signature header carrying several signatures passes when one of them is valid.
    const multi = eventFor(bot, 'bot.in_call_recording');
    const good = signWebhook(CURRENT, 'msg_multi', multi);
    const res = await capture(multi, {
      ...good,
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${good['webhook-signature']}`,
    });
    expect(res.status).toBe(200);
    expect(await signalsReceived(bot.id)).toBe(3);
  });

  it('refuses forged, tampered, unsigned and stale deliveries with 400 and signals nothing', async () => {
    const bot = await newBot(a);
    const body = eventFor(bot);
    const forged = await signed(body, { secret: newSecret() });
    expect(forged.status).toBe(400);
    expect(forged.body).toEqual({ detail: 'Invalid webhook signature' });
    const headers = signWebhook(CURRENT, 'msg_tamper', body);
    expect((await capture(body.replace('joining_call', 'call_ended'), headers)).status).toBe(400);
    expect((await capture(body, {})).status).toBe(400);
    expect((await signed(body, { at: new Date(Date.now() - 6 * 60_000) })).status).toBe(400);
    expect((await signed(body, { at: new Date(Date.now() + 6 * 60_000) })).status).toBe(400);
    // Within the five minutes' tolerance it passes.
    expect((await signed(body, { at: new Date(Date.now() - 4 * 60_000) })).status).toBe(200);
    expect(await signalsReceived(bot.id)).toBe(1);
  });

  it('verifies before it parses: a forged malformed body is 400, a signed malformed body 422', async () => {
    expect((await capture('{not json', signWebhook(newSecret(), 'msg_x', '{not json'))).status).toBe(400);
    const malformed = await signed('{not json');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].type).toBe('json_invalid');
    expect((await signed(JSON.stringify({ data: {} }))).status).toBe(422);
  });

  it('is documented in OpenAPI without a bearer token, with its body and statuses', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const op = doc.paths['/meetings/webhooks/capture'].post;
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '202', '400', '413', '422', '503']);
    expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/MeetingCaptureEvent' });
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  });
});

describe('capture without a signing secret', () => {
  it('refuses every request with 503', async () => {
    const bare = await createTestContext();
    try {
      const body = JSON.stringify({ event: 'bot.joining_call', data: {} });
      const res = await bare.request('POST', '/meetings/webhooks/capture', {
        rawBody: body,
        headers: { 'Content-Type': 'application/json', ...signWebhook(CURRENT, 'msg_1', body) },
      });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ detail: 'Meeting capture is not configured in this deployment' });
      expect((await bare.request('POST', '/meetings/webhooks/capture', { rawBody: '{}' })).status).toBe(503);
    } finally {
      await bare.close();
    }
  });
});
