import type { AgentConfig } from '../../../domain/agent-config';

// A transient Vapi assistant rendered from the agent's published configuration (with the contact's
// overrides already merged in by the dispatcher): prompt, first message, voice, model, transcriber,
// limits and recording, plus the server URL and secret its messages are signed with.

const VOICE_PROVIDERS: Record<string, string> = {
  elevenlabs: '11labs',
  cartesia: 'cartesia',
  openai: 'openai',
  azure: 'azure',
  deepgram: 'deepgram',
  playht: 'playht',
};

/** The messages the service reads: progress, and the report with outcome, recording, transcript and summary. */
export const VAPI_SERVER_MESSAGES = ['status-update', 'end-of-call-report'] as const;

const fill = (text: string, variables: Record<string, string>) =>
  text.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]{0,63})\s*\}\}/g, (whole, name: string) => variables[name] ?? whole);

export function renderVapiAssistant(
  config: Partial<AgentConfig> | null,
  context: { agentId: string | null; initialContext: string | null; serverUrl: string; serverSecret: string },
): Record<string, unknown> {
  const c = (config ?? {}) as Partial<AgentConfig>;
  const variables = c.variables ?? {};
  const prompt = [fill(c.instructions ?? '', variables), context.initialContext ? `Context for this call: ${context.initialContext}` : '']
    .filter(Boolean)
    .join('\n\n');
  const assistant: Record<string, unknown> = {
    name: `agent ${context.agentId ?? ''}`.trim().slice(0, 40),
    firstMessageMode: c.first_speaker === 'user' ? 'assistant-waits-for-user' : 'assistant-speaks-first',
    model: {
      provider: 'openai',
      model: c.llm?.model ?? 'gpt-4o-mini',
      temperature: c.llm?.temperature ?? 0.7,
      maxTokens: c.llm?.max_tokens ?? 1024,
      messages: prompt ? [{ role: 'system', content: prompt }] : [],
    },
    voice: {
      provider: VOICE_PROVIDERS[c.voice?.provider ?? 'elevenlabs'] ?? '11labs',
      voiceId: c.voice?.voice_id ?? 'default',
      ...(c.voice?.speed !== undefined ? { speed: c.voice.speed } : {}),
    },
    transcriber: {
      provider: c.transcriber?.provider ?? 'deepgram',
      ...(c.transcriber?.model ? { model: c.transcriber.model } : {}),
      ...(c.language ? { language: c.language.split('-')[0] } : {}),
      ...(c.transcriber?.keywords?.length ? { keywords: c.transcriber.keywords } : {}),
    },
    maxDurationSeconds: c.limits?.max_duration_seconds ?? 1800,
    silenceTimeoutSeconds: c.limits?.silence_timeout_seconds ?? 30,
    artifactPlan: { recordingEnabled: c.recording?.enabled ?? true },
    server: { url: context.serverUrl, secret: context.serverSecret },
    serverMessages: [...VAPI_SERVER_MESSAGES],
  };
  if (c.first_message) assistant.firstMessage = fill(c.first_message, variables);
  if (c.end_call?.message) assistant.endCallMessage = c.end_call.message;
  if (c.end_call?.phrases?.length) assistant.endCallPhrases = c.end_call.phrases;
  return assistant;
}
