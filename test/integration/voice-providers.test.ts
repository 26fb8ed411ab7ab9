import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, type Tenant } from '../support/identity';
import { startFakeCartesia, type FakeCartesia } from '../support/voice/fake-cartesia';
import { startFakeDeepgram, type FakeDeepgram } from '../support/voice/fake-deepgram';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/voice/fake-elevenlabs';
import { startFakeOpenAi, type FakeOpenAi } from '../support/voice/fake-openai';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// Conversations on the agents' cloud providers, each a local server speaking the provider's protocol:
// Deepgram hears the caller (its scripted transcript is what the model reads), ElevenLabs or Cartesia
// speaks (the caller hears their audio), the organization's OpenAI-compatible model answers and calls
// tools in streamed fragments. A provider that refuses the organization's key leaves the call to the
// local models, and every turn records which provider answered and why another did not.

const { url: speechUrl, describe: needsSpeech } = speechServer();

let ctx: TestContext;
let engine: TestEngine;
let deployment: FakeChatLlm;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let cartesia: FakeCartesia;
let openai: FakeOpenAi;

const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

async function tenantWithKeys(keys: Record<string, string>): Promise<{ t: Tenant; orgId: string; connections: Record<string, string> }> {
  const t = await newTenant(ctx);
  const connections: Record<string, string> = {};
  for (const [provider, apiKey] of Object.entries(keys)) {
    const made = await ctx.request('POST', '/integrations/speech-accounts', { token: t.session, body: { provider, api_key: apiKey } });
    expect(made.status, made.text).toBe(200);
    connections[provider] = made.body.id;
  }
  const [org] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = ${t.org}`;
  return { t, orgId: org!.id, connections };
}

async function publishedAgent(t: Tenant, config: Record<string, unknown>): Promise<string> {
  const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });
  const agent = await call('POST', '/core/agents', { name: 'Front desk' });
  expect(agent.status, agent.text).toBe(200);
  const version = await call('POST', `/core/agents/${agent.body.id}/versions`, { config });
  expect(version.status, version.text).toBe(200);
  expect((await call('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {})).status).toBe(200);
  return agent.body.id;
}

async function dial(orgId: string, agentId: string): Promise<SimulatedCaller> {
  const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio' });
  return SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
}

type Turn = { role: string; text: string; audit: Record<string, any> };

needsSpeech('cloud speech and model providers', () => {
  beforeAll(async () => {
    [deployment, deepgram, elevenlabs, cartesia, openai] = await Promise.all([
      startFakeChatLlm(),
      startFakeDeepgram(),
      startFakeElevenLabs(speechUrl),
      startFakeCartesia(speechUrl),
      startFakeOpenAi(),
    ]);
    ctx = await createTestContext({
      worker: true,
      env: {
        LLM_BASE_URL: deployment.baseUrl,
        LLM_MODEL: 'fake-chat',
        DEEPGRAM_API_BASE_URL: deepgram.url,
        ELEVENLABS_API_BASE_URL: elevenlabs.url,
        CARTESIA_API_BASE_URL: cartesia.url,
        OPENAI_API_BASE_URL: openai.baseUrl,
        SPEECH_PROVIDER_CONNECT_TIMEOUT_MS: '2000',
        SPEECH_PROVIDER_FIRST_RESULT_MS: '3000',
      },
    });
    engine = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    await ctx?.close();
    await Promise.all([deployment, deepgram, elevenlabs, cartesia, openai].map((fake) => fake?.close()));
  });

  it('hears the caller through Deepgram, speaks through ElevenLabs and answers with the organization model and its streamed tool call', async () => {
    for (const [fake, key] of [
      [deepgram, 'dg-key-a'],
      [elevenlabs, 'el-key-a'],
      [openai, 'sk-org-a'],
    ] as const)
      fake.keys.add(key);
    const { t, orgId } = await tenantWithKeys({ deepgram: 'dg-key-a', elevenlabs: 'el-key-a', openai: 'sk-org-a' });
    const agentId = await publishedAgent(t, {
      instructions: 'You are the front desk of Acme Parts.',
      first_speaker: 'user',
      transcriber: { provider: 'deepgram', keywords: ['Acme'] },
      voice: { provider: 'elevenlabs', voice_id: 'voice-rachel', stability: 0.4 },
      llm: { provider: 'openai', model: 'gpt-4o-mini' },
      tools: [{ type: 'end_call' }],
    });
    deepgram.script = ['When do you open on Saturdays?', 'That is all, thank you.'];
    openai.script = [
      { text: 'We open at ten on Saturdays.' },
      { text: 'Goodbye.', toolCalls: [{ name: 'end_call', arguments: { reason: 'done' } }] },
    ];
    const deploymentCalls = deployment.requests.length;

    const caller = await dial(orgId, agentId);
    await caller.say('What are your opening hours?');
    const answer = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(answer.text)).toMatch(/ten|saturday/);
    // The model read Deepgram's words, not the local recognizer's.
    expect(openai.requests[0]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'When do you open on Saturdays?' });
    expect(openai.requests[0]!.model).toBe('gpt-4o-mini');
    expect(elevenlabs.texts).toContain('We open at ten on Saturdays.');
    const stream = elevenlabs.sockets[0]!;
    expect(stream.voiceId).toBe('voice-rachel');
    expect(stream.query.get('output_format')).toBe('ulaw_8000');
    expect(stream.opening).toMatchObject({ voice_settings: { stability: 0.4, speed: 1 } });
    expect(Object.fromEntries(deepgram.streams[0]!)).toMatchObject({
      encoding: 'mulaw',
      sample_rate: '8000',
      interim_results: 'true',
      model: 'nova-3',
    });

    await caller.say('That is everything thanks.');
    const closed = await caller.closed;
    expect(closed.by).toBe('engine');
    const ended = await finishedConversation(ctx, t.session, agentId);
    expect(ended.end_reason).toBe('agent_ended');
    expect(deployment.requests.length).toBe(deploymentCalls);
    // The streamed tool call reached the model's next request as one whole call.
    const turns = ended.turns as Turn[];
    expect(turns.find((turn) => turn.role === 'tool')?.audit).toMatchObject({ tool: 'end_call', input: { reason: 'done' } });
    const heard = turns.find((turn) => turn.role === 'caller')!;
    expect(heard.text).toBe('When do you open on Saturdays?');
    expect(heard.audit.providers.recognizer).toEqual({ asked: 'deepgram', used: 'deepgram:nova-3', fallback: null });
    const spoken = turns.find((turn) => turn.role === 'agent')!;
    expect(spoken.audit.providers).toEqual({
      voice: { asked: 'elevenlabs', used: 'elevenlabs:eleven_flash_v2_5', fallback: null },
      model: { asked: 'openai', used: 'openai:gpt-4o-mini', fallback: null },
    });
    expect(deepgram.controls.map((c) => JSON.parse(c).type)).toContain('CloseStream');
  }, 120_000);

  it('speaks the first message through Cartesia', async () => {
    cartesia.keys.add('car-key-a');
    const { t, orgId } = await tenantWithKeys({ cartesia: 'car-key-a' });
    const agentId = await publishedAgent(t, {
      instructions: 'Greet.',
      first_message: 'Hello, this is Acme Parts.',
      voice: { provider: 'cartesia', voice_id: 'a0e99841-438c-4a64-b679-ae501e7d6091' },
    });
    const caller = await dial(orgId, agentId);
    const greeting = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(greeting.text)).toMatch(/hello|acme/);
    expect(cartesia.requests.at(-1)).toMatchObject({
      transcript: 'Hello, this is Acme Parts.',
      voice: { mode: 'id', id: 'a0e99841-438c-4a64-b679-ae501e7d6091' },
      output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
      continue: false,
    });
    expect(cartesia.versions.at(-1)).toBe('2024-11-13');
    await caller.hangUp();
    const ended = await finishedConversation(ctx, t.session, agentId);
    const spoken = (ended.turns as Turn[]).find((turn) => turn.role === 'agent')!;
    expect(spoken.audit.providers.voice).toEqual({ asked: 'cartesia', used: 'cartesia:sonic-2', fallback: null });
    // No model provider named: the deployment's model, which is no fallback.
    expect(spoken.audit.providers.model).toEqual({ asked: 'deployment', used: 'openai:fake-chat', fallback: null });
  }, 120_000);

  it('falls back to the local models when the providers refuse the organization keys, and records it', async () => {
    for (const [fake, key] of [
      [deepgram, 'dg-key-b'],
      [elevenlabs, 'el-key-b'],
      [openai, 'sk-org-b'],
    ] as const)
      fake.keys.add(key);
    const { t, orgId, connections } = await tenantWithKeys({ deepgram: 'dg-key-b', elevenlabs: 'el-key-b', openai: 'sk-org-b' });
    // The keys are rotated at the providers after they were connected.
    for (const [fake, key] of [
      [deepgram, 'dg-key-b'],
      [elevenlabs, 'el-key-b'],
      [openai, 'sk-org-b'],
    ] as const)
      fake.keys.delete(key);
    const agentId = await publishedAgent(t, {
      instructions: 'You are the front desk of Acme Parts.',
      first_message: 'Hello, this is Acme Parts.',
      transcriber: { provider: 'deepgram' },
      voice: { provider: 'elevenlabs', voice_id: 'voice-rachel' },
      llm: { provider: 'openai', model: 'gpt-4o-mini' },
    });
    deployment.script = [{ text: 'We are open from nine to five.' }];
    const caller = await dial(orgId, agentId);
    const greeting = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(greeting.text)).toMatch(/hello|acme/);
    await caller.say('What are your opening hours?');
    const answer = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(answer.text)).toMatch(/nine|five|9|5/);
    // The local recognizer heard the caller's own words; the deployment's model answered.
    expect(words(deployment.requests.at(-1)!.messages.at(-1)!.content ?? '')).toMatch(/open|hour/);
    await caller.hangUp();
    const ended = await finishedConversation(ctx, t.session, agentId);
    const turns = ended.turns as Turn[];
    const heard = turns.find((turn) => turn.role === 'caller')!;
    expect(heard.audit.providers.recognizer).toMatchObject({ asked: 'deepgram', used: expect.stringMatching(/^local:/) });
    expect(heard.audit.providers.recognizer.fallback).toMatch(/deepgram refused the key \(401\)/);
    const answered = turns.filter((turn) => turn.role === 'agent').at(-1)!;
    expect(answered.audit.providers.voice).toMatchObject({ asked: 'elevenlabs', used: expect.stringMatching(/^local:/) });
    expect(answered.audit.providers.voice.fallback).toMatch(/elevenlabs refused the key \(401\)/);
    expect(answered.audit.providers.model).toMatchObject({ asked: 'openai', used: 'openai:fake-chat' });
    expect(answered.audit.providers.model.fallback).toMatch(/401/);
    // A refused key moves its connection to needs_reconnect.
    for (const id of Object.values(connections)) {
      await waitFor(
        async () => {
          const res = await ctx.request('GET', `/integrations/connections/${id}`, { token: t.session });
          return res.body.status === 'needs_reconnect' ? true : undefined;
        },
        10_000,
        'the refused connection marked',
      );
    }
  }, 120_000);
});
