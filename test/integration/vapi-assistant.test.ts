import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderVapiAssistant } from '../../platform/adapters/dialers/vapi-assistant';
import { VAPI_DEFAULT_VOICES } from '../../platform/adapters/dialers/vapi-voice';
import { waitFor } from '../support/campaigns';
import { knownVoice } from '../support/fake-vapi-assistant';
import { startFakeVapi, type FakeVapi } from '../support/fake-vapi';

// Agent versions of several shapes rendered as Vapi's transient assistant and placed through the fake
// Vapi, which checks the assistant field by field as Vapi's API does: each is accepted, carries what the
// version says under Vapi's names, and speaks with a voice its provider has; a wrong rendering is refused.

const context = {
  agentId: '0190f1e2-0000-7000-8000-000000000001',
  initialContext: 'The contact asked about pricing.',
  serverUrl: 'https://crm.example.test/telephony/vapi/events?account=a',
  toolServerUrl: 'https://crm.example.test/telephony/vapi/tool-calls?account=a',
  serverSecret: 'tool-secret-0123456789',
};
const DATASET = '0190f1e2-0000-7000-8000-0000000000d1';

let fake: FakeVapi;
beforeAll(async () => {
  fake = await startFakeVapi({ stepMs: 20 });
});
afterAll(async () => {
  await fake?.close();
});

let n = 0;
async function place(assistant: Record<string, unknown>) {
  const res = await fetch(`${fake.url}/call`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${fake.apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      phoneNumberId: fake.phoneNumberId,
      customer: { number: `+1415666${String(1000 + n++)}` },
      assistant,
      metadata: { idempotency_key: `k${n}` },
    }),
  });
  return { status: res.status, body: (await res.json()) as { id: string; message?: string[] } };
}

const full = {
  instructions: 'Help {{company}} customers.',
  first_message: 'Hello from {{company}}!',
  first_speaker: 'agent',
  language: 'fr-FR',
  variables: { company: 'Acme' },
  llm: { model: 'claude-sonnet-4-20250514', temperature: 0.3, max_tokens: 20 },
  voice: { provider: 'elevenlabs', voice_id: '21m00Tcm4TlvDq8ikWAM', speed: 1.8, stability: 0.4, similarity_boost: 0.9 },
  transcriber: { provider: 'assemblyai', keywords: ['Acme', 'Zebra Garage'] },
  tools: [
    {
      type: 'webhook',
      name: 'order_status',
      description: 'Look up an order',
      url: 'https://hooks.example.test/orders',
      headers: { Authorization: 'Bearer customer-secret' },
      parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      timeout_seconds: 12,
      speak_while_waiting: 'Let me check that order.',
    },
    { type: 'knowledge_base', name: 'parking', description: 'Where to park', dataset_ids: [DATASET] },
    {
      type: 'transfer_call',
      name: 'to_sales',
      description: 'Sales questions',
      mode: 'warm',
      message: 'Connecting you to sales.',
      destinations: [{ sip_uri: 'sip:sales@pbx.example.test', description: 'the sales desk' }],
    },
    { type: 'end_call', message: 'Goodbye from Acme.' },
  ],
  knowledge_base: { dataset_ids: [DATASET], results_count: 3 },
  transfer: {
    enabled: true,
    default_destination: '+14155550199',
    rules: [{ condition: 'the caller asks for billing', destination: '+14155550142', message: 'Transferring you to billing.' }],
  },
  end_call: { phrases: ['goodbye', 'talk soon'], message: 'Thanks for calling.', end_on_voicemail: false },
  limits: { max_duration_seconds: 600, silence_timeout_seconds: 20 },
  recording: { enabled: false },
};

describe('the Vapi assistant of an agent version', () => {
  it('renders a full version under Vapi’s names, accepted by the API', async () => {
    const assistant = renderVapiAssistant(full, context);
    const placed = await place(assistant);
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    expect(assistant).toMatchObject({
      firstMessage: 'Hello from Acme!',
      firstMessageMode: 'assistant-speaks-first',
      voice: { provider: '11labs', voiceId: '21m00Tcm4TlvDq8ikWAM', speed: 1.2, stability: 0.4, similarityBoost: 0.9 },
      transcriber: { provider: 'assembly-ai', language: 'multi', wordBoost: ['Acme', 'Zebra Garage'] },
      endCallMessage: 'Thanks for calling.',
      endCallPhrases: ['goodbye', 'talk soon'],
      voicemailDetection: { provider: 'vapi' },
      voicemailMessage: 'Thanks for calling.',
      maxDurationSeconds: 600,
      silenceTimeoutSeconds: 20,
      artifactPlan: { recordingEnabled: false },
      server: { url: context.serverUrl, headers: { 'x-vapi-secret': context.serverSecret } },
    });
    const model = assistant.model as Record<string, unknown> & { tools: Record<string, unknown>[]; messages: { content: string }[] };
    expect(model).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-20250514', temperature: 0.3, maxTokens: 50 });
    expect(model.messages[0]!.content).toBe('Help Acme customers.\n\nContext for this call: The contact asked about pricing.');
    const toolServer = (timeoutSeconds: number) => ({
      url: context.toolServerUrl,
      headers: { 'x-vapi-secret': context.serverSecret },
      timeoutSeconds,
    });
    expect(model.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'order_status',
          description: 'Look up an order',
          parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
        },
        // The customer's URL and headers stay with the service: Vapi only knows the way back to it.
        server: toolServer(17),
        messages: [{ type: 'request-start', content: 'Let me check that order.' }],
      },
      {
        type: 'function',
        function: { name: 'parking', description: 'Where to park', parameters: expect.objectContaining({ required: ['query'] }) },
        server: toolServer(20),
      },
      {
        type: 'function',
        function: {
          name: 'search_knowledge_base',
          description: expect.any(String),
          parameters: expect.objectContaining({ type: 'object' }),
        },
        server: toolServer(20),
      },
      {
        type: 'transferCall',
        destinations: [
          {
            type: 'sip',
            sipUri: 'sip:sales@pbx.example.test',
            description: 'the sales desk',
            message: 'Connecting you to sales.',
            transferPlan: { mode: 'warm-transfer-say-summary' },
          },
          { type: 'number', number: '+14155550142', description: 'the caller asks for billing', message: 'Transferring you to billing.' },
          { type: 'number', number: '+14155550199', description: 'anything else' },
        ],
      },
      { type: 'endCall', messages: [{ type: 'request-start', content: 'Goodbye from Acme.' }] },
    ]);
    expect(JSON.stringify(assistant)).not.toContain('customer-secret');
  });

  it.each([
    ['elevenlabs', '11labs'],
    ['cartesia', 'cartesia'],
    ['openai', 'openai'],
    ['azure', 'azure'],
    ['deepgram', 'deepgram'],
    ['playht', 'playht'],
  ] as const)('renders the default %s voice as the provider’s real default voice', async (ours, theirs) => {
    const assistant = renderVapiAssistant({ voice: { provider: ours, voice_id: 'default', speed: 0.6 } }, context);
    const voice = assistant.voice as { provider: string; voiceId: string };
    expect(voice).toMatchObject({ provider: theirs, voiceId: VAPI_DEFAULT_VOICES[theirs] });
    expect(voice.voiceId).not.toBe('default');
    expect(knownVoice(voice.provider, voice.voiceId)).toBe(true);
    const placed = await place(assistant);
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    // The call plays to its end with the voice speaking.
    await waitFor(async () => fake.calls.get(placed.body.id)?.status === 'ended', 10_000, 'the call to end');
    expect(fake.calls.get(placed.body.id)!.endedReason).toBe('customer-ended-call');
  });

  it.each([
    ['an empty version (every default)', {}],
    [
      'Gemini, OpenAI transcription and an Azure neural voice',
      {
        llm: { model: 'gemini-2.5-flash' },
        transcriber: { provider: 'openai' },
        voice: { provider: 'azure', voice_id: 'en-US-JennyNeural' },
        language: 'es-MX',
      },
    ],
    [
      'Deepgram nova-2 keywords and a Deepgram voice',
      {
        transcriber: { provider: 'deepgram', model: 'nova-2', keywords: ['Acme', 'Zebra Garage', 'SKU:2'] },
        voice: { provider: 'deepgram', voice_id: 'luna' },
        language: 'pt-BR',
      },
    ],
    [
      'Azure transcription, a provider-prefixed model, the user first',
      {
        transcriber: { provider: 'azure' },
        llm: { model: 'groq/llama-3.3-70b-versatile' },
        first_speaker: 'user',
        end_call: { phrases: ['x', 'bye now'] },
      },
    ],
  ])('renders %s, accepted by the API', async (_, config) => {
    const assistant = renderVapiAssistant(config, { ...context, initialContext: null });
    const placed = await place(assistant);
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const voice = assistant.voice as { provider: string; voiceId: string };
    expect(knownVoice(voice.provider, voice.voiceId)).toBe(true);
    // Keywords Deepgram's older models cannot take (phrases) are left out rather than refused.
    if (JSON.stringify(config).includes('nova-2'))
      expect(assistant.transcriber).toEqual({ provider: 'deepgram', model: 'nova-2', language: 'pt-BR', keywords: ['Acme', 'SKU:2'] });
    if (JSON.stringify(config).includes('first_speaker')) {
      expect(assistant).toMatchObject({ firstMessageMode: 'assistant-waits-for-user', endCallPhrases: ['bye now'] });
      expect(assistant.model).toMatchObject({ provider: 'groq', model: 'llama-3.3-70b-versatile' });
    }
  });

  it('leaves out the tools nothing would answer when no tool server is given', () => {
    const assistant = renderVapiAssistant(full, { ...context, toolServerUrl: undefined });
    expect((assistant.model as { tools: { type: string }[] }).tools.map((t) => t.type)).toEqual(['transferCall', 'endCall']);
  });

  it('is refused by the API when rendered wrong, with Vapi’s message array', async () => {
    // What the rendering used to send: a server secret Vapi no longer takes, the word `default` for a
    // Deepgram voice, a model no provider has, and a field Vapi does not know.
    const wrong = {
      ...renderVapiAssistant({ voice: { provider: 'deepgram' } }, context),
      server: { url: context.serverUrl, secret: context.serverSecret },
      voice: { provider: 'deepgram', voiceId: 'default' },
      model: { provider: 'openai', model: 'gpt-unknown', messages: [] },
      recordingEnabled: true,
    };
    const refused = await place(wrong);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'Bad Request', statusCode: 400 });
    expect(refused.body.message).toEqual(
      expect.arrayContaining([
        'assistant.property recordingEnabled should not exist',
        expect.stringMatching(/^assistant\.model\.model must be one of the following values: /),
        expect.stringMatching(/^assistant\.voice\.voiceId must be one of the following values: asteria/),
        'assistant.server.property secret should not exist',
      ]),
    );
    const provider = await place({ ...renderVapiAssistant({}, context), voice: { provider: 'elevenlabs', voiceId: 'sarah' } });
    expect(provider.status).toBe(400);
    expect(provider.body.message).toEqual([
      expect.stringMatching(/^assistant\.voice\.provider must be one of the following values: 11labs/),
    ]);
  });

  it('ends the call as Vapi does when the provider has no such voice', async () => {
    const placed = await place({ ...renderVapiAssistant({}, context), voice: { provider: '11labs', voiceId: 'default' } });
    expect(placed.status).toBe(201); // ElevenLabs' voice ids are free text to the API
    await waitFor(async () => fake.calls.get(placed.body.id)?.status === 'ended', 10_000, 'the call to end');
    expect(fake.calls.get(placed.body.id)!.endedReason).toBe('pipeline-error-eleven-labs-voice-failed');
  });
});
