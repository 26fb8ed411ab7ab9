import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, insertAccount, type CrmTenant } from '../support/crm-contacts';
import { startFakeMeetingVendor, type FakeBot, type FakeMeetingVendor } from '../support/fake-meeting-vendor';
import { keepHistory } from '../support/histories';

// The Recall.ai-compatible HTTP adapter against a local server speaking Recall's protocol; the test
// plays the vendor's webhooks event by event.

const SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;
const JOIN_TIMEOUT_SECONDS = 3;

let ctx: TestContext;
let fake: FakeMeetingVendor;
let a: CrmTenant;
const webhook = { webhookUrl: '', secret: SECRET };
beforeAll(async () => {
  fake = await startFakeMeetingVendor(webhook);
  ctx = await createTestContext({
    worker: true,
    env: {
      MEETING_VENDOR_BASE_URL: fake.baseUrl,
      MEETING_VENDOR_API_KEY: fake.apiKey,
      MEETING_WEBHOOK_SECRETS: SECRET,
      MEETING_JOIN_TIMEOUT_SECONDS: String(JOIN_TIMEOUT_SECONDS),
    },
  });
  webhook.webhookUrl = `${ctx.baseUrl}/meetings/webhooks/capture`;
  a = await crmTenant(ctx);
});
afterAll(async () => {
  await ctx?.close();
  await fake?.close();
});

const readBot = async (id: string) => (await ctx.request('GET', `/meetings/bots/${id}`, { token: a.session })).body;
const waitForStatus = (id: string, statuses: string[], timeoutMs = 30_000) =>
  waitFor(
    async () => {
      const bot = await readBot(id);
      return statuses.includes(bot.status) ? bot : undefined;
    },
    timeoutMs,
    `bot ${id} ${statuses.join('|')}`,
  );

async function sendBot(body: Record<string, unknown>): Promise<{ id: string; vendorBot: FakeBot }> {
  const created = await ctx.request('POST', '/meetings/bots', {
    token: a.session,
    body: { meeting_url: 'https://zoom.us/j/98765432101', ...body },
  });
  expect(created.status, created.text).toBe(200);
  expect(created.body.vendor).toBe('recall');
  const vendorBot = await waitFor(async () => fake.bots.find((b) => b.metadata.bot_id === created.body.id), 15_000, 'vendor bot');
  return { id: created.body.id, vendorBot };
}

async function emit(bot: FakeBot, event: string, extra: Record<string, unknown> = {}, options: { code?: string; sub_code?: string } = {}) {
  expect(await fake.emit(bot, event, extra, options)).toBe(200);
}

/** The call, from joining to the recording being uploaded. */
async function playCall(bot: FakeBot): Promise<string> {
  const recording = { id: crypto.randomUUID(), started_at: '2026-03-02T15:00:00.000Z', completed_at: '2026-03-02T15:30:00.000Z' };
  await emit(bot, 'bot.joining_call');
  await emit(bot, 'bot.in_call_not_recording');
  await emit(bot, 'bot.in_call_recording');
  bot.recordings.push(recording);
  await emit(bot, 'bot.call_ended');
  await emit(bot, 'bot.done');
  await emit(bot, 'recording.done', { recording: { id: recording.id, metadata: {} } }, { code: 'done' });
  return recording.id;
}

async function finishTranscript(bot: FakeBot, recordingId: string) {
  const transcriptId = await waitFor(
    async () => [...fake.transcripts].find(([, rec]) => rec === recordingId)?.[0],
    15_000,
    'transcript request',
  );
  await emit(
    bot,
    'transcript.done',
    { transcript: { id: transcriptId, metadata: {} }, recording: { id: recordingId, metadata: {} } },
    { code: 'done' },
  );
}

describe('Recall.ai-compatible vendor', () => {
  it('creates the bot over HTTP, follows the webhooks, requests and fetches the transcript, and writes the meeting activity', async () => {
    const account = await insertAccount(ctx, a.orgId, 'Initech');
    const { id, vendorBot } = await sendBot({ account_id: account, bot_name: 'Initech notes' });
    expect(vendorBot).toMatchObject({
      meeting_url: 'https://zoom.us/j/98765432101',
      bot_name: 'Initech notes',
      metadata: { bot_id: id, org_id: a.orgId },
    });
    expect(fake.requests.filter((r) => r.path.startsWith('/api/')).every((r) => r.authorization === `Token ${fake.apiKey}`)).toBe(true);

    const recordingId = await playCall(vendorBot);
    await waitForStatus(id, ['transcribing']);
    await finishTranscript(vendorBot, recordingId);
    const bot = await waitForStatus(id, ['completed', 'failed']);
    expect(bot.status, JSON.stringify(bot)).toBe('completed');
    expect(bot.transcript).toEqual({
      text: 'Dana Buyer: We need pricing.\nSam Seller: Sending it today.',
      attendees: [
        { name: 'Dana Buyer', email: 'dana@customer.example' },
        { name: 'Sam Seller', email: '' },
      ],
    });
    expect(bot.recording).toEqual({
      id: recordingId,
      url: `${fake.baseUrl}/download/video/${recordingId}.mp4`,
      started_at: '2026-03-02T15:00:00.000Z',
      ended_at: '2026-03-02T15:30:00.000Z',
      duration_seconds: 1800,
    });
    expect(
      bot.status_history.filter((h: { vendor_code: string | null }) => h.vendor_code).map((h: { vendor_code: string }) => h.vendor_code),
    ).toEqual(['joining_call', 'in_call_not_recording', 'in_call_recording', 'call_ended', 'done', 'done', 'done']);
    const feed = await ctx.request('GET', `/accounts/${account}/activities`, { token: a.session });
    const items = Array.isArray(feed.body) ? feed.body : (feed.body.activities ?? feed.body.data);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      id: bot.activity_id,
      type: 'meeting',
      summary: 'Zoom meeting',
      provider: 'zoom',
      duration_minutes: 30,
      due_at: '2026-03-02T15:00:00.000Z',
      recording_url: bot.recording.url,
      transcript: bot.transcript.text,
      attendees: bot.transcript.attendees,
    });
    expect(fake.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/g, ':id')}`)).toEqual(
      expect.arrayContaining([
        'POST /api/v1/bot/',
        'POST /api/v1/recording/:id/create_transcript/',
        'GET /api/v1/recording/:id/',
        'GET /api/v1/transcript/:id/',
        'GET /download/transcript/:id',
      ]),
    );
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `meeting-bot:${id}`, 'meeting-bot-recall');
  });

  it('ends the bot as failed with the vendor’s sub code on a fatal status', async () => {
    const { id, vendorBot } = await sendBot({});
    await emit(vendorBot, 'bot.joining_call');
    await emit(vendorBot, 'bot.fatal', {}, { sub_code: 'bot_kicked_from_waiting_room' });
    const bot = await waitForStatus(id, ['failed', 'completed', 'canceled']);
    expect(bot).toMatchObject({ status: 'failed', status_reason: 'bot_kicked_from_waiting_room', activity_id: null });
    expect(bot.status_history.at(-1)).toMatchObject({ status: 'failed', message: 'bot_kicked_from_waiting_room' });
    expect(bot.status_history).toContainEqual(expect.objectContaining({ vendor_code: 'fatal', sub_code: 'bot_kicked_from_waiting_room' }));
    const events = await ctx.deps.sql`SELECT event_type, payload FROM notification_outbox WHERE org_id = ${a.orgId} AND entity_id = ${id}`;
    expect(events).toEqual([
      { event_type: 'meeting.bot_failed', payload: expect.objectContaining({ bot_id: id, reason: 'bot_kicked_from_waiting_room' }) },
    ]);
    // A later event for the ended bot cannot be placed.
    expect(await fake.emit(vendorBot, 'bot.call_ended')).toBe(202);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `meeting-bot:${id}`, 'meeting-bot-fatal');
  });

  it('gives up on a bot that never joins, removing it from the vendor', async () => {
    const { id, vendorBot } = await sendBot({});
    await emit(vendorBot, 'bot.in_waiting_room');
    const bot = await waitForStatus(id, ['failed', 'completed', 'canceled'], 20_000);
    expect(bot).toMatchObject({ status: 'failed', status_reason: `the bot did not join the call within ${JOIN_TIMEOUT_SECONDS} seconds` });
    expect(vendorBot.left).toBe(true);
  });

  it('DELETE during the call makes the vendor bot leave; what was recorded still reaches the CRM', async () => {
    const account = await insertAccount(ctx, a.orgId, 'Hooli');
    const { id, vendorBot } = await sendBot({ account_id: account });
    await emit(vendorBot, 'bot.joining_call');
    await emit(vendorBot, 'bot.in_call_recording');
    await waitForStatus(id, ['recording']);
    const removed = await ctx.request('DELETE', `/meetings/bots/${id}`, { token: a.session });
    expect(removed.status).toBe(202);
    await waitFor(async () => vendorBot.left, 15_000, 'leave_call');
    const recording = { id: crypto.randomUUID(), started_at: '2026-03-02T16:00:00.000Z', completed_at: '2026-03-02T16:05:00.000Z' };
    vendorBot.recordings.push(recording);
    await emit(vendorBot, 'bot.call_ended');
    await emit(vendorBot, 'bot.done'); // no recording.done: the adapter looks the recording up on the bot
    await finishTranscript(vendorBot, recording.id);
    const bot = await waitForStatus(id, ['completed', 'failed', 'canceled']);
    expect(bot.status, JSON.stringify(bot)).toBe('completed');
    expect(bot.recording.duration_seconds).toBe(300);
  });
});
