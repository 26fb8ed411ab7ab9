import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio';
import { startTwilioInbound, type TwilioInbound } from '../support/fake-twilio-inbound';
import { newTenant, type Tenant } from '../support/identity';
import { parseTwiml } from '../support/twiml';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// A call to a published number from end to end, in real audio: the organization's Twilio account connected,
// the number imported and published to an agent, Twilio's signed voice request on it answered with a Media
// Stream, and a caller on that stream (its URL and token taken from the TwiML) hears the agent's first message.

const { url: speechUrl, describe: needsSpeech } = speechServer();

const PUBLIC = 'https://voice-crm.example.test';
const VOICE_PUBLIC = 'wss://voice.example.test';
const NUMBER = '+16285550199';

let ctx: TestContext;
let llm: FakeChatLlm;
let twilio: FakeTwilio;
let twilioIn: TwilioInbound;
let engine: TestEngine;
let t: Tenant;

const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });
const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

needsSpeech('a call to a published number', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    twilio = await startFakeTwilio();
    twilio.addNumber(NUMBER, 'Front desk line');
    twilioIn = await startTwilioInbound(twilio, {
      transport: (url) => (url.startsWith(PUBLIC) ? ctx.baseUrl + url.slice(PUBLIC.length) : url),
    });
    ctx = await createTestContext({
      worker: true,
      env: {
        LLM_BASE_URL: llm.baseUrl,
        LLM_MODEL: 'fake-chat',
        PUBLIC_BASE_URL: PUBLIC,
        VOICE_PUBLIC_URL: VOICE_PUBLIC,
        TWILIO_API_BASE_URL: twilioIn.url,
        DIALER_SIMULATED_ALLOWED: 'true',
      },
    });
    t = await newTenant(ctx);
    engine = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    await ctx?.close();
    await twilioIn?.close();
    await twilio?.close();
    await llm?.close();
  });

  it("streams the number's call to the engine, and the caller hears the agent's first message", async () => {
    const connected = await call('POST', '/integrations/telephony-accounts', {
      provider: 'twilio',
      account_sid: twilio.accountSid,
      auth_token: twilio.authToken,
    });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect((await call('POST', '/core/phone-numbers/import')).status).toBe(200);
    const agent = await call('POST', '/core/agents', { name: 'Acme front desk' });
    const config = {
      instructions: 'You are the front desk of Acme Parts.',
      first_message: 'Hello, this is Acme Parts. How can I help you today?',
    };
    expect((await call('POST', `/core/agents/${agent.body.id}/versions`, { config })).status).toBe(200);
    const published = await call('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {
      phone_numbers: [NUMBER],
      direction: 'inbound',
    });
    expect(published.status, JSON.stringify(published.body)).toBe(200);

    // Twilio asks the number's VoiceUrl, signed; the answer is a Media Stream with its token.
    const asked = await twilioIn.callNumber(NUMBER, { from: '+14155550123' });
    expect(asked.status, asked.body).toBe(200);
    const stream = parseTwiml(asked.body)
      .find((verb) => verb.name === 'Connect')
      ?.children.find((verb) => verb.name === 'Stream');
    const url = new URL(stream!.attributes.url!);
    expect(`${url.protocol}//${url.host}`).toBe(VOICE_PUBLIC);
    const token = stream!.children.find((p) => p.attributes.name === 'token')!.attributes.value!;

    // Twilio opens that stream; the public address reaches the test's engine.
    const caller = await SimulatedCaller.connect({
      url: `${engine.url}${url.pathname}`,
      token,
      speechBaseUrl: speechUrl,
      callSid: asked.params.CallSid,
      accountSid: twilio.accountSid,
    });
    const greeting = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(greeting.text)).toMatch(/acme|help/);
    await caller.hangUp();

    const detail = await finishedConversation(ctx, t.session, agent.body.id);
    expect(detail).toMatchObject({ status: 'completed', direction: 'inbound', phone_number: '+14155550123' });
    const [row] = await ctx.deps.sql<
      { call_id: string; channel: string }[]
    >`SELECT call_id, channel FROM conversations WHERE id = ${detail.id}`;
    expect(row).toEqual({ call_id: asked.params.CallSid, channel: 'twilio' });
    // The status callback Twilio sends after the call changes nothing the engine recorded.
    expect((await twilioIn.sendStatus(NUMBER, asked.params.CallSid, 'completed', '+14155550123')).body).toEqual({ status: 'ignored' });
  }, 120_000);
});
