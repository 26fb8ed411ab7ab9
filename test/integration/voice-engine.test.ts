import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DEFAULT_TURN_WAIT } from '../../domain/voice-turns';
import type { ChatMessage } from '../../platform/adapters/llm/chat-model';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type ChatRequestBody, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { newTenant, type Tenant } from '../support/identity';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// The voice runtime as a caller meets it: a simulated Twilio Media Stream speaking synthesized sentences
// in real time to the engine, which runs the agent's published version with the local speech models and
// a scripted model; what the caller hears is transcribed back.

const { url: speechUrl, describe: needsSpeech } = speechServer();

let ctx: TestContext;
let llm: FakeChatLlm;
let engine: TestEngine;
let site: FakeWebsite;
let t: Tenant;
let orgId: string;
let hook: { server: http.Server; url: string; calls: { body: unknown }[] };
/** Each prompt the engine asked the model to read ahead: whether it opened a conversation, its last message, the model calls before it. */
const readAhead: { opening: boolean; last: ChatMessage; at: number }[] = [];

const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });

async function publishedAgent(config: Record<string, unknown>): Promise<string> {
  const agent = await call('POST', '/core/agents', { name: 'Front desk' });
  expect(agent.status, agent.text).toBe(200);
  const version = await call('POST', `/core/agents/${agent.body.id}/versions`, { config });
  expect(version.status, version.text).toBe(200);
  expect((await call('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {})).status).toBe(200);
  return agent.body.id;
}

async function dial(agentId: string, extra: Record<string, string> = {}): Promise<SimulatedCaller> {
  const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio', ...extra });
  return SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
}

const lastUser = (r: ChatRequestBody) => [...r.messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');

async function conversationOf(agentId: string) {
  const list = await call('GET', `/core/agents/${agentId}/conversations`);
  expect(list.status, list.text).toBe(200);
  return list.body.data[0] as { id: string };
}

const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

needsSpeech('voice engine', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    site = await startFakeWebsite({
      '/returns': {
        body: '<!doctype html><html><head><title>Returns</title></head><body><main><h1>Returns</h1><p>Any part may be returned within thirty days for a full refund.</p></main></body></html>',
      },
    });
    const calls: { body: unknown }[] = [];
    const server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        calls.push({ body: data ? JSON.parse(data) : null });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'booked', slot: 'Tuesday at ten' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hook = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/book`, calls };
    ctx = await createTestContext({
      worker: true,
      env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat', WEB_FETCH_ALLOW_PRIVATE: 'true' },
    });
    t = await newTenant(ctx);
    await call('GET', '/core/agents');
    const [org] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = ${t.org}`;
    orgId = org!.id;
    // The scripted model reads no prompt itself; the engine's hints to read one ahead are recorded instead.
    engine = await startTestEngine(ctx, speechUrl, {
      model: (model) => ({
        name: model.name,
        stream: (request) => model.stream(request),
        prefill: (request, opening) => {
          readAhead.push({ opening: Boolean(opening), last: request.messages.at(-1)!, at: llm.requests.length });
        },
      }),
    });
  }, 180_000);

  afterEach(async () => {
    if (!process.env.VOICE_DEBUG) return;
    const rows = await ctx.deps.sql`SELECT c.id, c.status, c.end_reason, t.seq, t.role, t.text, t.heard_text, t.audit FROM conversations c
      LEFT JOIN conversation_turns t ON t.conversation_id = c.id ORDER BY c.created_at DESC, t.seq LIMIT 12`;
    console.log(JSON.stringify(rows, null, 1), JSON.stringify(llm.requests.slice(-2)).slice(0, 3000));
  });

  afterAll(async () => {
    await engine?.close();
    await ctx?.close();
    await llm?.close();
    await site?.close();
    hook?.server.close();
  });

  it('speaks the first message, answers a question, and keeps the turns, the recording and the summary', async () => {
    llm.script = [{ text: 'We are open from nine to five, Monday to Friday.' }];
    const agentId = await publishedAgent({
      instructions: 'You are the front desk of Acme Parts.',
      first_message: 'Hello, this is Acme Parts. How can I help you today?',
      recording: { enabled: true, channels: 'dual' },
    });
    const caller = await dial(agentId);
    const greeting = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(greeting.text)).toMatch(/acme|help/);
    const asked = llm.requests.length;
    await caller.say('What are your opening hours?');
    const answer = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(answer.text)).toMatch(/nine|five|monday|friday/);
    expect(answer.latencyMs).not.toBeNull();
    // The model heard what the caller said.
    expect(words(lastUser(llm.requests.at(-1)!)?.content ?? '')).toMatch(/open|hour/);
    // It was asked to read ahead: the caller's turn opening once the greeting was heard (the conversation's first
    // prompt, which may set another's aside), then the caller's words before the answer was asked for.
    expect(readAhead[0]).toMatchObject({ opening: true, last: { role: 'user', content: '' } });
    const heard = readAhead.find((r) => /open|hour/.test(words(r.last.content)));
    expect(heard).toMatchObject({ opening: false, last: { role: 'user' } });
    expect(heard!.at).toBe(asked); // before the answer's call
    expect(llm.requests.length).toBeGreaterThan(asked);
    // The turns are written as they are spoken, before the call ends.
    const live = await conversationOf(agentId);
    await waitFor(
      async () => {
        const res = await call('GET', `/core/agents/${agentId}/conversations/${live.id}`);
        return res.body.turns?.length >= 3 ? true : undefined;
      },
      10_000,
      'turns recorded while the call is live',
    );
    await caller.hangUp();
    const ended = await finishedConversation(ctx, t.session, agentId);
    expect(ended.status).toBe('completed');
    expect(ended.end_reason).toBe('caller_hung_up');
    expect(ended.outcome.disposition).toBe('answered');
    const roles = ended.turns.map((turn: { role: string }) => turn.role);
    expect(roles.slice(0, 3)).toEqual(['agent', 'caller', 'agent']);
    const answered = ended.turns[2];
    expect(answered.audit.timings.llm_first_token_ms).toBeGreaterThanOrEqual(0);
    expect(answered.audit.timings.tts_first_audio_ms).toBeGreaterThan(0);
    expect(ended.has_recording).toBe(true);
    const recording = await fetch(`${ctx.baseUrl}/core/agents/${agentId}/conversations/${live.id}/recording`, {
      headers: { authorization: `Bearer ${t.session}` },
      redirect: 'manual',
    });
    expect(recording.status).toBe(302);
    const wav = Buffer.from(await (await fetch(new URL(recording.headers.get('location')!, ctx.baseUrl))).arrayBuffer());
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(2); // dual channel
    const stats = await call('GET', `/core/agents/${agentId}`);
    expect(stats.body.statistics.conversations_total).toBe(1);
  }, 120_000);

  it('calls a webhook tool with the arguments the model gave, speaking while it waits', async () => {
    llm.script = [
      { toolCalls: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] },
      (r) => ({ text: `Done: ${JSON.parse(lastUser(r)!.content ?? '{}').result}` }),
    ];
    const agentId = await publishedAgent({
      instructions: 'Book visits.',
      first_speaker: 'user',
      tools: [
        {
          type: 'webhook',
          name: 'book_visit',
          description: 'Book a visit',
          url: hook.url,
          parameters: { type: 'object', properties: { day: { type: 'string' } } },
          speak_while_waiting: 'Let me book that for you.',
        },
      ],
    });
    const caller = await dial(agentId);
    await caller.say('Can I come in on Tuesday?');
    // The line said while the tool runs, then the answer from its result.
    const spoken = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(spoken.text)).toMatch(/book/);
    // One utterance when the tool is quick; two when the answer comes more than a pause after the line.
    const answer = /tuesday|ten/.test(words(spoken.text)) ? spoken : await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(answer.text)).toMatch(/tuesday|ten/);
    expect(hook.calls[0]!.body).toEqual({ day: 'Tuesday' });
    await caller.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    const tool = detail.turns.find((turn: { role: string }) => turn.role === 'tool');
    expect(tool.audit).toMatchObject({ tool: 'book_visit', input: { day: 'Tuesday' }, ok: true });
  }, 120_000);

  it('stops at once when the caller interrupts, and keeps only what was heard', async () => {
    llm.script = [
      {
        text: 'Our catalogue has brakes, filters, belts, batteries, lights, mirrors, wipers and many other parts for every make and model. We ship them all over the country within two days.',
      },
      { text: 'Of course, I will be brief.' },
    ];
    const agentId = await publishedAgent({ instructions: 'Talk about parts.', first_speaker: 'user' });
    const caller = await dial(agentId);
    await caller.say('Tell me about your catalogue.');
    const started = await caller.waitForSpeechStart({ timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 1500));
    const interruption = await caller.say('Wait, stop, I only need brake pads for a Volvo.');
    await waitFor(async () => (caller.clears.some((c) => c.at >= interruption.startedAt) ? true : undefined), 10_000, 'clear');
    const clear = caller.clears.find((c) => c.at >= interruption.startedAt)!;
    // The agent stops within the bound: the interruption's words are known about a second in on a quiet machine
    // (the voice bench measures it); the bound leaves room for a suite running other voice files beside this one.
    expect(clear.at - (interruption.firstAudibleAt ?? interruption.startedAt)).toBeLessThan(4_000);
    expect(clear.at).toBeGreaterThan(started.startedAt);
    await caller.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    const cut = detail.turns.find((turn: { interrupted: boolean }) => turn.interrupted);
    expect(cut).toBeDefined();
    expect(cut.heard_text.length).toBeLessThan(cut.text.length);
    // The next model call saw only what the caller heard.
    const history = llm.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'assistant')
      .map((m) => m.content ?? '');
    expect(history.join(' ')).not.toContain('within two days');
  }, 120_000);

  it('makes the answer to a spelled value while it waits, and speaks only the one to the whole value', async () => {
    // Every model call answers from what the caller had said when it was made: an early answer would say so.
    const seen: string[] = [];
    llm.script = Array.from({ length: 12 }, () => (request: ChatRequestBody) => {
      const heard = lastUser(request)?.content ?? '';
      seen.push(heard);
      return { text: /(204|four)\W*$/i.test(heard) ? 'Thank you, I have your member ID.' : 'Sorry, go on.' };
    });
    const agentId = await publishedAgent({ instructions: 'Take the member ID.', first_speaker: 'user' });
    const caller = await dial(agentId);
    const parts = ['My member ID is', 'D D', 'seven seven three', 'two zero four'];
    await caller.say(parts[0]!);
    for (const part of parts.slice(1)) {
      await caller.pause(700);
      await caller.say(part);
    }
    const answer = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(answer.text), seen.join(' | ')).toMatch(/member|thank/);
    // Nothing was heard before the caller finished: the answers made early were dropped unheard.
    expect(caller.firstAudibleAfter(caller.sentences[0]!.startedAt)).toBe(answer.startedAt);
    await caller.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    const agentTurns = detail.turns.filter((turn: { role: string }) => turn.role === 'agent');
    expect(agentTurns).toHaveLength(1);
    // The answer was begun before the turn was taken, and the wait was the caller's own pauses, not spelling's 1.8 s.
    expect(agentTurns[0].audit.timings.ahead_ms).toBeGreaterThan(0);
    // The recognizer measures the pauses on its own clock, longer on a loaded machine: that the wait went by them is
    // checked here (their rule: test/unit/voice-turns.test.ts), not a time.
    const caller0 = detail.turns.find((turn: { role: string }) => turn.role === 'caller');
    expect(caller0.audit.longest_pause_ms).toBeGreaterThan(0);
    expect(caller0.audit.wait_ms).toBeLessThanOrEqual(DEFAULT_TURN_WAIT.spellingMs);
    llm.script = [];
  }, 120_000);

  it('prompts after silence and hangs up after the configured prompts', async () => {
    const agentId = await publishedAgent({
      instructions: 'Wait for the caller.',
      first_speaker: 'user',
      limits: { silence_timeout_seconds: 5, max_idle_prompts: 1 },
      end_call: { message: 'Goodbye for now.' },
    });
    const caller = await dial(agentId);
    const prompt = await caller.waitForSpeech({ timeoutMs: 15_000, transcribe: true });
    expect(words(prompt.text)).toMatch(/still|there/);
    const goodbye = await caller.waitForSpeech({ timeoutMs: 15_000, transcribe: true });
    // The recognizer that hears the caller's side writes "Goodbye" as "to buy" now and then: the words, not their spelling.
    expect(words(goodbye.text)).toMatch(/\bb(ye|uy)\b|goodbye/);
    const closed = await caller.closed;
    expect(closed.by).toBe('engine');
    const detail = await finishedConversation(ctx, t.session, agentId);
    expect(detail.end_reason).toBe('silence');
    expect(detail.status).toBe('no_input');
  }, 120_000);

  it('refuses a stream without a valid session token', async () => {
    const caller = await SimulatedCaller.connect({ url: engine.url, token: 'not-a-token', speechBaseUrl: speechUrl });
    const closed = await caller.closed;
    expect(closed.code).toBe(4401);
  });

  it("answers another organization's conversation with 404", async () => {
    const other = await newTenant(ctx);
    const agentId = await publishedAgent({ instructions: 'x' });
    const res = await ctx.request('GET', `/core/agents/${agentId}/conversations`, { token: other.session });
    expect(res.status).toBe(404);
  });
});
