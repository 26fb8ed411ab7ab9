import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  contact,
  conversationsOf,
  createCampaign,
  move,
  tenantWithAgent,
  waitFor,
  waitForStatus,
  type CampaignTenant,
} from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { PUBLIC_BASE_URL } from '../support/public-base';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeTwilio, type FakeTwilio, type FakeTwilioCall, twilioDialerSettings } from '../support/fake-twilio';
import { speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// Campaign calls reach the agent: Twilio (the fake, speaking its REST API and callbacks) places each call
// with TwiML that streams it to the voice engine, answering-machine detection runs asynchronously, and
// the contact's outcome is its conversation's: answered, a machine (hung up or a message left), or a
// stream that never reached the engine (failed, retried as the campaign says).

const { url: speechUrl, describe: needsSpeech } = speechServer();
const VOICE_PUBLIC_URL = 'wss://voice.test.example';
const FIRST_MESSAGE = 'Hello, this is Nova from Acme Dental.';

let ctx: TestContext;
let llm: FakeChatLlm;
let twilio: FakeTwilio;
let engine: TestEngine;
let t: CampaignTenant;

const contactRow = (campaignId: string) =>
  ctx.deps.sql<{ status: string; attempts: number; last_outcome: string | null }[]>`
    SELECT status, attempts, last_outcome FROM campaign_contacts WHERE campaign_id = ${campaignId} ORDER BY external_id`;

async function publish(config: Record<string, unknown>) {
  const created = await ctx.request('POST', `/core/agents/${t.agentId}/versions`, { token: t.session, body: { config } });
  expect(created.status, created.text).toBe(200);
  const published = await ctx.request('POST', `/core/agents/${t.agentId}/versions/${created.body.version}/publish`, {
    token: t.session,
    body: {},
  });
  expect(published.status, published.text).toBe(200);
}

/** The call Twilio placed to `number`, once it is answered (in progress). */
const answeredCall = (number: string, timeoutMs = 60_000) =>
  waitFor(
    async () => [...twilio.calls.values()].find((c) => c.to === number && c.status === 'in-progress'),
    timeoutMs,
    `a call to ${number}`,
  );

/** The person (or machine) who answered: the call's Media Stream opened on the engine as Twilio opens it. */
async function pickUp(call: FakeTwilioCall): Promise<SimulatedCaller> {
  const stream = twilio.streamOf(call.sid)!;
  expect(stream.url).toBe(`${VOICE_PUBLIC_URL}/twilio/media-stream`);
  const caller = await SimulatedCaller.connect({
    url: engine.url,
    token: stream.parameters.token,
    callSid: call.sid,
    accountSid: call.accountSid,
    speechBaseUrl: speechUrl,
  });
  twilio.attachStream(call.sid, { hangUp: () => caller.hangUp() });
  return caller;
}

needsSpeech('campaign calls through the voice engine', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    twilio = await startFakeTwilio({ script: () => 'live' });
    ctx = await createTestContext({
      worker: true,
      env: {
        LLM_BASE_URL: llm.baseUrl,
        LLM_MODEL: 'fake-chat',
        ...twilioDialerSettings(twilio),
        VOICE_PUBLIC_URL,
        PUBLIC_BASE_URL,
        CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
      },
    });
    twilio.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    t = await tenantWithAgent(ctx);
    await publish({
      instructions: 'You book dental appointments.',
      first_message: FIRST_MESSAGE,
      first_speaker: 'agent',
      end_call: { end_on_voicemail: true },
    });
    engine = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    await ctx?.close();
    await llm?.close();
    await twilio?.close();
  });

  it('streams an answered call to the agent, and the contact’s outcome is the conversation’s', { timeout: 120_000 }, async () => {
    const number = '+14155550301';
    const campaign = await createCampaign(ctx, t, { max_attempts: 1, contacts: [contact({ phone_numbers: [number], external_id: 'a' })] });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    const call = await answeredCall(number);
    // Asynchronous detection, its verdict to the service's own callback; the call itself runs the stream.
    expect(call.machineDetection).toBe('Enable');
    expect(call.asyncAmdCallback).toMatch(/\/telephony\/twilio\/amd\?key=/);
    expect(call.twiml).not.toContain('<Dial');

    const caller = await pickUp(call);
    const greeting = await caller.hear({ timeoutMs: 30_000 });
    expect(greeting.text?.toLowerCase()).toContain('nova');
    await caller.say('Not today, thank you.');
    await caller.hear({ timeoutMs: 30_000, transcribe: false });
    twilio.hangUpCall(call.sid); // the person hangs up: the stream stops and Twilio reports the call completed

    await waitForStatus(ctx, t, campaign.id, 'completed', 60_000);
    expect(await contactRow(campaign.id)).toEqual([{ status: 'completed', attempts: 1, last_outcome: 'completed' }]);
    const [conversation] = await conversationsOf(ctx, campaign.id);
    expect(conversation!.status).toBe('completed');
    expect(conversation!.outcome).toMatchObject({
      source: 'conversation',
      disposition: 'answered',
      provider_call_id: call.sid,
      answered_by: 'human',
    });
    const turns = await ctx.deps.sql<{ role: string; text: string }[]>`
      SELECT role, text FROM conversation_turns WHERE conversation_id = ${conversation!.id} ORDER BY seq`;
    expect(turns[0]).toMatchObject({ role: 'agent', text: FIRST_MESSAGE });
    expect(turns.some((turn) => turn.role === 'caller' && /today/i.test(turn.text))).toBe(true);
  });

  it('hangs up when detection hears a machine, and the contact is retried as the campaign says', { timeout: 120_000 }, async () => {
    const number = '+14155550302';
    const campaign = await createCampaign(ctx, t, {
      max_attempts: 2,
      retry_backoff_seconds: 3600,
      contacts: [contact({ phone_numbers: [number], external_id: 'm' })],
    });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    const call = await answeredCall(number);
    const caller = await pickUp(call);
    await caller.waitForSpeechStart({ timeoutMs: 30_000 });
    const verdict = await twilio.sendAmd(call.sid, 'machine_start');
    expect(verdict!.answered).toBe(202);

    // The engine ends the call (end_on_voicemail) and asks Twilio to hang it up, which stops the stream.
    await caller.closed;
    await waitFor(async () => twilio.updates.some((u) => u.callSid === call.sid && u.status === 'completed'), 30_000, 'the hang-up');
    const [row] = await waitFor(async () => {
      const rows = await contactRow(campaign.id);
      return rows[0]?.status === 'pending' ? rows : undefined;
    });
    expect(row).toEqual({ status: 'pending', attempts: 1, last_outcome: 'no_answer' });
    const [conversation] = await conversationsOf(ctx, campaign.id);
    expect(conversation!.status).toBe('no_answer');
    expect(conversation!.outcome).toMatchObject({ source: 'conversation', disposition: 'voicemail', answered_by: 'machine_start' });
    expect((await move(ctx, t, campaign.id, 'cancel')).status).toBe(200);
  });

  it('counts an answered call whose stream never reached the engine as failed', { timeout: 120_000 }, async () => {
    const number = '+14155550303';
    const campaign = await createCampaign(ctx, t, { max_attempts: 1, contacts: [contact({ phone_numbers: [number], external_id: 'f' })] });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    const call = await answeredCall(number);
    twilio.hangUpCall(call.sid); // answered, then over, and no engine ever took the stream

    await waitForStatus(ctx, t, campaign.id, 'completed', 60_000);
    expect(await contactRow(campaign.id)).toEqual([{ status: 'failed', attempts: 1, last_outcome: 'failed' }]);
    const [conversation] = await conversationsOf(ctx, campaign.id);
    expect(conversation!.status).toBe('failed');
    expect(conversation!.outcome).toMatchObject({ disposition: 'stream_failed', provider_status: 'completed' });
  });

  it('ends 50 contacts with each outcome from its conversation', { timeout: 480_000 }, async () => {
    const numbers = Array.from({ length: 50 }, (_, i) => `+1415555${String(400 + i).padStart(4, '0')}`);
    expect((await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body: { concurrency_limit: 10 } })).status).toBe(
      200,
    );
    const campaign = await createCampaign(ctx, t, {
      max_attempts: 1,
      contacts: numbers.map((n, i) => contact({ phone_numbers: [n], external_id: `b${String(i).padStart(2, '0')}` })),
    });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    // Every callee answers, hears the agent's greeting and hangs up.
    await Promise.all(
      numbers.map(async (number) => {
        // Ten at a time: the last are dialed once the first forty have ended.
        const call = await answeredCall(number, 300_000);
        const caller = await pickUp(call);
        await caller.hear({ timeoutMs: 60_000, transcribe: false });
        twilio.hangUpCall(call.sid);
      }),
    );
    await waitForStatus(ctx, t, campaign.id, 'completed', 120_000).catch(async (error) => {
      const left = await ctx.deps.sql`
        SELECT cc.status, cc.attempts, c.status AS call, c.engine_id, c.end_reason, c.outcome
        FROM campaign_contacts cc LEFT JOIN conversations c ON c.contact_ref = cc.id::text
        WHERE cc.campaign_id = ${campaign.id} AND cc.status <> 'completed'`;
      throw new Error(`${(error as Error).message}: ${JSON.stringify(left.slice(0, 3))} (${left.length} left)`);
    });
    const rows = await contactRow(campaign.id);
    expect(rows.map((r) => r.status)).toEqual(numbers.map(() => 'completed'));
    const conversations = await conversationsOf(ctx, campaign.id);
    expect(conversations).toHaveLength(50);
    for (const c of conversations) expect(c.outcome).toMatchObject({ source: 'conversation', disposition: 'no_input' });
  });
});
