import { afterAll, beforeAll, expect, it } from 'vitest';
import { RESUME_LINE } from '../../domain/voice-resume';
import { answerInboundCall } from '../../services/conversations/inbound';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type ChatRequestBody, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeTwilio, type FakeTwilio, twilioDialerSettings } from '../support/fake-twilio';
import { newTenant, type Tenant } from '../support/identity';
import { appFetch, PUBLIC_BASE_URL } from '../support/public-base';
import { startChildEngine, type ChildEngine } from '../support/voice/child-engine';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { answerOn, openStream, streamAgain } from '../support/voice/twilio-stream';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// A call survives its engine: the engine process holding a Twilio call is killed mid-sentence; Twilio
// (the fake) asks the <Connect> action what next, the service streams the call again, and another engine
// takes the conversation from its recorded turns: a short line, then the answer the first engine did not
// finish, its tool answered from the first run (the webhook is called once).

const { url: speechUrl, describe: needsSpeech } = speechServer();
const VOICE_PUBLIC_URL = 'wss://voice.test.example';
const LONG_ANSWER =
  'You are booked for Tuesday at ten in the morning. Please bring your insurance card and arrive ten minutes early so that we can finish the paperwork before your visit.';

let ctx: TestContext;
let llm: FakeChatLlm;
let twilio: FakeTwilio;
let hook: WebhookReceiver;
let first: ChildEngine;
let second: TestEngine;
let t: Tenant;
let orgId: string;

const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');
const lastTool = (r: ChatRequestBody) => [...r.messages].reverse().find((m) => m.role === 'tool');

needsSpeech('a call survives its engine', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    twilio = await startFakeTwilio();
    hook = await startWebhookReceiver('/book');
    hook.answer = () => ({ status: 200, body: JSON.stringify({ status: 'booked', slot: 'Tuesday at ten' }) });
    const env = {
      LLM_BASE_URL: llm.baseUrl,
      LLM_MODEL: 'fake-chat',
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      ...twilioDialerSettings(twilio),
      PUBLIC_BASE_URL,
      VOICE_PUBLIC_URL,
    };
    ctx = await createTestContext({ worker: true, env });
    twilio.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    t = await newTenant(ctx);
    orgId = (await ctx.request('GET', '/me', { token: t.session })).body.organization.id;
    first = await startChildEngine(ctx, env, speechUrl);
    second = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    first?.kill();
    await second?.close();
    await ctx?.close();
    await llm?.close();
    await hook?.close();
    await twilio?.close();
  });

  it('goes on with another engine when the first is killed mid-sentence, and the tool runs once', { timeout: 180_000 }, async () => {
    const agent = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'Front desk' } });
    const agentId = agent.body.id as string;
    const config = {
      instructions: 'Book visits.',
      first_speaker: 'user',
      tools: [
        {
          type: 'webhook',
          name: 'book_visit',
          description: 'Book a visit',
          url: hook.url,
          parameters: { type: 'object', properties: { day: { type: 'string' } } },
        },
      ],
    };
    expect((await ctx.request('POST', `/core/agents/${agentId}/versions`, { token: t.session, body: { config } })).status).toBe(200);
    expect((await ctx.request('POST', `/core/agents/${agentId}/versions/1/publish`, { token: t.session, body: {} })).status).toBe(200);
    llm.script = [
      { toolCalls: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] },
      { text: LONG_ANSWER, delayMs: 40 },
      // The engine that takes over asks again for the same caller turn: the same call, answered from the first run.
      { toolCalls: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] },
      (r) => ({ text: `All set: ${JSON.parse(lastTool(r)?.content ?? '{}').result ?? ''}` }),
    ];

    // An inbound call Twilio answered with the service's TwiML: a stream to the engine, and an action for when it ends.
    const ids = { orgId, agentId, from: '+14155550177', to: '+14155550100' };
    const { call, stream, caller } = await answerOn(twilio, ctx.deps, ids, first.url, speechUrl);
    expect(stream.url).toBe(`${VOICE_PUBLIC_URL}/twilio/media-stream`);
    await caller.say('Can I come in on Tuesday?');
    // The tool ran and the model is streaming the long answer: two seconds into it, the engine dies.
    await hook.waitFor((received) => received.length === 1, 60_000, 'the tool call');
    await waitFor(async () => llm.requests.length >= 2, 60_000, 'the answer asked of the model');
    await caller.waitForSpeechStart({ timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 2000));
    const killedAt = performance.now();
    first.kill(); // mid-sentence: the agent's long answer is playing
    await caller.closed;
    expect(hook.received).toHaveLength(1);

    // Twilio asks what next; the service streams the call again, and the second engine takes it.
    const next = await streamAgain(twilio, call, second.url, speechUrl);
    expect(next.status).toBe(200);
    expect(next.stream?.url).toBe(`${VOICE_PUBLIC_URL}/twilio/media-stream`);
    const resumed = next.caller!;
    const back = await resumed.hear({ timeoutMs: 30_000 });
    const silenceMs = back.startedAt - killedAt;
    console.log(`silence heard while the call moved: ${Math.round(silenceMs)} ms`);
    expect(words(back.text)).toMatch(/back|lost/);
    expect(silenceMs).toBeLessThan(6_000); // the goal (2 s at p95) is measured by the bench on a quiet machine
    // The answer follows the line (a filler may come between), in the same utterance when no pause parts them.
    let answer = back;
    for (let i = 0; i < 3 && !/set|booked|tuesday/.test(words(answer.text)); i++) answer = await resumed.hear({ timeoutMs: 30_000 });
    expect(words(answer.text)).toMatch(/set|booked|tuesday/);
    expect(hook.received).toHaveLength(1); // the tool's side effect happened once
    expect(hook.received[0]!.headers['idempotency-key']).toMatch(/:0:book_visit:[0-9a-f]{24}$/);

    await resumed.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    const roles = detail.turns.map((turn: { role: string }) => turn.role);
    expect(roles[0]).toBe('caller');
    expect(detail.turns.filter((turn: { role: string }) => turn.role === 'caller')).toHaveLength(1);
    expect(detail.turns.some((turn: { role: string; text: string }) => turn.role === 'agent' && turn.text === RESUME_LINE)).toBe(true);
    const seqs = detail.turns.map((turn: { seq: number }) => turn.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(detail.status).toBe('completed');
  });

  it('moves the call of an engine that stops beating (frozen) to another', { timeout: 120_000 }, async () => {
    const agent = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'Night desk' } });
    const agentId = agent.body.id as string;
    const config = { instructions: 'Answer.', first_speaker: 'agent', first_message: 'Good evening, night desk.' };
    expect((await ctx.request('POST', `/core/agents/${agentId}/versions`, { token: t.session, body: { config } })).status).toBe(200);
    const frozen = await startTestEngine(ctx, speechUrl);
    try {
      const ids = { orgId, agentId, from: '+14155550179', to: '+14155550100' };
      const { call, caller } = await answerOn(twilio, ctx.deps, ids, frozen.url, speechUrl);
      twilio.attachStream(call.sid, { hangUp: () => caller.hangUp() });
      await caller.hear({ timeoutMs: 30_000, transcribe: false });
      // The engine's process goes silent: no more beats, its socket open and mute.
      await frozen.engine.stop();
      const frozeAt = performance.now();
      const moved = await waitFor(
        async () => twilio.updates.find((u) => u.callSid === call.sid && u.twiml?.includes('<Stream')),
        20_000,
        'the call moved',
      );
      await caller.closed; // Twilio stops the old stream when the call's instructions are replaced
      const resumed = await openStream(twilio, call, second.url, speechUrl);
      const back = await resumed.hear({ timeoutMs: 30_000 });
      console.log(`silence heard while a frozen engine's call moved: ${Math.round(back.startedAt - frozeAt)} ms`);
      expect(words(back.text)).toMatch(/back|lost/);
      expect(moved.at.getTime()).toBeGreaterThan(Date.now() - 60_000);
      await resumed.hangUp();
      const detail = await finishedConversation(ctx, t.session, agentId);
      // The frozen engine's late end (its socket closed under it) wrote nothing: the engine that took over ended it.
      expect(detail.end_reason).toBe('caller_hung_up');
      expect(detail.turns.map((turn: { text: string }) => turn.text)).toEqual(expect.arrayContaining([RESUME_LINE]));
    } finally {
      await frozen.close();
    }
  });

  it('hangs up when the stream of a conversation that ended closes', async () => {
    const agent = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'Ended' } });
    const agentId = agent.body.id as string;
    expect(
      (await ctx.request('POST', `/core/agents/${agentId}/versions`, { token: t.session, body: { config: { instructions: 'Hi.' } } }))
        .status,
    ).toBe(200);
    const call = twilio.addInboundCall({ from: '+14155550178', to: '+14155550100' });
    twilio.setTwiml(
      call.sid,
      await answerInboundCall(ctx.deps, { orgId, agentId, version: 1, channel: 'twilio', callSid: call.sid, from: call.from, to: call.to }),
    );
    // A forged question changes nothing.
    const action = /action="([^"]+)"/.exec(call.twiml)![1]!.replace(/&amp;/g, '&');
    const forged = await appFetch(ctx)(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': `${'A'.repeat(27)}=` },
      body: new URLSearchParams({ AccountSid: call.accountSid, CallSid: call.sid }).toString(),
    });
    expect(forged.status).toBe(401);
    // The engine marks the end before it closes the stream.
    await ctx.deps.sql`UPDATE conversations SET end_reason = 'agent_ended' WHERE org_id = ${orgId} AND call_id = ${call.sid}`;
    const next = await twilio.connectAction(call.sid);
    expect(next.status).toBe(200);
    expect(next.stream).toBeNull();
    expect(next.twiml).toContain('<Hangup/>');
    expect(call.status).toBe('completed');
  });
});
