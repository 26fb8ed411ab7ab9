import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../domain/agent-config';
import type { ChatEvent, ChatModel } from '../../platform/adapters/llm/chat-model';
import { createLogger } from '../../platform/core/logger';
import { deepgramRecognizer } from '../../voice/speech/deepgram';
import { selectProviders, type SelectionConfig } from '../../voice/speech/selection';
import type { ListenEvent, SpeechStack } from '../../voice/speech/types';
import { startFakeDeepgram, type FakeDeepgram } from '../support/voice/fake-deepgram';
import { startFakeOpenAi, type FakeOpenAi } from '../support/voice/fake-openai';

// The bounds and reasons of the provider fallback, without the engine: a Deepgram stream that answers
// nothing fails within its first-result bound, a Deepgram stream maps speech to the recognizer's events,
// and the reasons an agent's providers are replaced by the local ones are named on the turns.

const logger = createLogger('silent');
const local: SpeechStack = {
  recognizer: {
    name: 'local:whisper',
    listen: async () => ({ write() {}, reset() {}, close() {}, closed: Promise.resolve() }),
    transcribe: async () => ({ text: 'local', stt_ms: 1 }),
  },
  voice: {
    name: 'local:piper',
    async *speak() {
      yield new Int16Array(160);
    },
  },
  turn: { name: 'local:turn', judge: async () => ({ complete: true, probability: null, turn_ms: 0 }) },
};
const deployment: ChatModel = {
  name: 'local:deployment',
  async *stream(): AsyncIterable<ChatEvent> {
    yield { type: 'text-delta', delta: 'from the deployment' };
    yield { type: 'finish', reason: 'stop' };
  },
};

describe('cloud provider fallback', () => {
  let deepgram: FakeDeepgram;
  let openai: FakeOpenAi;
  let config: SelectionConfig;
  beforeAll(async () => {
    [deepgram, openai] = await Promise.all([startFakeDeepgram(), startFakeOpenAi()]);
    deepgram.keys.add('dg-key');
    config = {
      DEEPGRAM_API_BASE_URL: deepgram.url,
      ELEVENLABS_API_BASE_URL: 'http://127.0.0.1:9',
      CARTESIA_API_BASE_URL: 'http://127.0.0.1:9',
      CARTESIA_VERSION: '2024-11-13',
      OPENAI_API_BASE_URL: openai.baseUrl,
      SPEECH_PROVIDER_CONNECT_TIMEOUT_MS: 1000,
      SPEECH_PROVIDER_FIRST_RESULT_MS: 400,
      LLM_CALL_TIMEOUT_MS: 5000,
    };
  });
  afterAll(async () => {
    await Promise.all([deepgram?.close(), openai?.close()]);
  });

  const options = { baseUrl: '', apiKey: 'dg-key', model: 'nova-3', keywords: [], connectTimeoutMs: 1000, firstResultMs: 400 };
  const speech = (ms: number, level: number) => Int16Array.from({ length: (16000 * ms) / 1000 }, (_, i) => (i % 2 ? level : -level));

  it('turns Deepgram results into speech, partial, transcript and turn events', async () => {
    deepgram.mute = false;
    deepgram.script = ['My order is late.'];
    const events: ListenEvent[] = [];
    const session = await deepgramRecognizer({ ...options, baseUrl: deepgram.url }).listen({
      sampleRate: 16000,
      language: 'en-US',
      onEvent: (e) => events.push(e),
    });
    session.write(speech(200, 0));
    session.write(speech(600, 3000));
    session.write(speech(400, 0));
    await expect.poll(() => events.map((e) => e.type), { timeout: 3000 }).toContain('turn');
    // Partials while the caller speaks (one per interim result), then the end in this order.
    const order = events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]);
    expect(order).toEqual(['speech_started', 'partial', 'speech_stopped', 'transcript', 'turn']);
    expect(events.find((e) => e.type === 'transcript')).toMatchObject({ text: 'My order is late.', start_ms: 200 });
    expect(events.at(-1)).toMatchObject({ complete: true, probability: null });
    expect(deepgram.streams.at(-1)!.get('encoding')).toBe('linear16');
    session.close();
  });

  it('fails a stream that answers nothing within the first-result bound', async () => {
    deepgram.mute = true;
    const started = performance.now();
    const failed = new Promise<string>((resolve) => {
      void deepgramRecognizer({ ...options, baseUrl: deepgram.url })
        .listen({ sampleRate: 16000, language: 'en', onEvent: () => {}, onFailure: resolve })
        .then((session) => session.write(speech(100, 0)));
    });
    expect(await failed).toBe('deepgram sent no result within 400 ms');
    expect(performance.now() - started).toBeLessThan(1500);
    deepgram.mute = false;
  });

  it('names why each part runs on the local default', async () => {
    const agent = { ...defaultAgentConfig(), transcriber: { provider: 'assemblyai' as const, keywords: [] } };
    agent.llm = { ...agent.llm, provider: 'openai' };
    const selection = selectProviders({ config, agent, keys: [], local, model: deployment, logger, onRefused: () => {} });
    expect(selection.audit('caller')).toEqual({
      providers: { recognizer: { asked: 'assemblyai', used: 'local:whisper', fallback: 'the engine has no assemblyai recognizer' } },
    });
    expect(selection.audit('agent')).toEqual({
      providers: {
        voice: {
          asked: 'elevenlabs',
          used: 'local:piper',
          fallback: 'the organization has no ElevenLabs key (POST /integrations/speech-accounts)',
        },
        model: {
          asked: 'openai',
          used: 'local:deployment',
          fallback: 'the organization has no OpenAI key (POST /integrations/speech-accounts)',
        },
      },
    });
    expect(selection.audit('tool')).toEqual({});
  });

  it("answers with the deployment's model when the organization's refuses the key, and reports the refusal", async () => {
    const agent = { ...defaultAgentConfig() };
    agent.llm = { ...agent.llm, provider: 'openai' };
    const refused: string[] = [];
    const selection = selectProviders({
      config,
      agent,
      keys: [{ provider: 'openai', connectionId: 'c-1', apiKey: 'sk-unknown' }],
      local,
      model: deployment,
      logger,
      onRefused: (id) => refused.push(id),
    });
    expect(selection.model.name).toBe('openai:gpt-4o-mini');
    let text = '';
    for await (const event of selection.model.stream({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      signal: AbortSignal.timeout(5000),
    }))
      if (event.type === 'text-delta') text += event.delta;
    expect(text).toBe('from the deployment');
    expect(selection.model.name).toBe('local:deployment');
    expect(refused).toEqual(['c-1']);
    expect((selection.audit('agent').providers as { model: { fallback: string } }).model.fallback).toMatch(/401/);
  });
});
