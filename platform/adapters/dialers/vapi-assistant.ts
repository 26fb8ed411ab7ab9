import { AgentConfig } from '../../../domain/agent-config';
import { vapiTools } from './vapi-tools';
import { vapiModel, vapiTranscriber, vapiVoice } from './vapi-voice';

// A transient Vapi assistant (CreateAssistantDTO) rendered from the agent's published configuration,
// with the contact's overrides already merged in by the dispatcher: prompt and first message, model with
// the version's tools (vapi-tools.ts), voice and transcriber (vapi-voice.ts), end-call phrases and
// message, voicemail, recording and limits, and the server its messages go to. Vapi no longer takes a
// server `secret`: the `x-vapi-secret` the service verifies is one of the server's `headers`.

/** The messages the service reads: progress, and the report with outcome, recording, transcript and summary. */
export const VAPI_SERVER_MESSAGES = ['status-update', 'end-of-call-report'] as const;

export interface VapiAssistantContext {
  agentId: string | null;
  initialContext: string | null;
  /** Where status updates and reports go. */
  serverUrl: string;
  /** Where tool calls go; without it the webhook and knowledge-base tools are left out (nothing would answer them). */
  toolServerUrl?: string;
  serverSecret: string;
}

const fill = (text: string, variables: Record<string, string>) =>
  text.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]{0,63})\s*\}\}/g, (whole, name: string) => variables[name] ?? whole);

/** Vapi's end-call phrases are 2 to 140 characters. */
const endPhrases = (phrases: string[]) => phrases.map((p) => p.trim()).filter((p) => p.length >= 2 && p.length <= 140);

export function renderVapiAssistant(config: Record<string, unknown> | null, context: VapiAssistantContext): Record<string, unknown> {
  // The stored version and the contact's overrides, with every default the engine would run with.
  const c = AgentConfig.parse(config ?? {});
  const prompt = [fill(c.instructions, c.variables), context.initialContext ? `Context for this call: ${context.initialContext}` : '']
    .filter(Boolean)
    .join('\n\n');
  const tools = vapiTools(c, context.toolServerUrl ? { url: context.toolServerUrl, secret: context.serverSecret } : null);
  const phrases = endPhrases(c.end_call.phrases);
  // On a voicemail greeting the engine hangs up, or leaves the end-call message when told not to hang up.
  const voicemailMessage = !c.end_call.end_on_voicemail && c.end_call.message ? c.end_call.message : null;
  return {
    name: `agent ${context.agentId ?? ''}`.trim().slice(0, 40),
    firstMessageMode: c.first_speaker === 'user' ? 'assistant-waits-for-user' : 'assistant-speaks-first',
    ...(c.first_message ? { firstMessage: fill(c.first_message, c.variables) } : {}),
    model: vapiModel(c.llm, prompt, tools),
    voice: vapiVoice(c.voice),
    transcriber: vapiTranscriber(c.transcriber, c.language),
    ...(c.end_call.message ? { endCallMessage: c.end_call.message } : {}),
    ...(phrases.length ? { endCallPhrases: phrases } : {}),
    voicemailDetection: { provider: 'vapi' },
    ...(voicemailMessage ? { voicemailMessage } : {}),
    maxDurationSeconds: c.limits.max_duration_seconds,
    silenceTimeoutSeconds: c.limits.silence_timeout_seconds,
    artifactPlan: { recordingEnabled: c.recording.enabled },
    server: { url: context.serverUrl, headers: { 'x-vapi-secret': context.serverSecret } },
    serverMessages: [...VAPI_SERVER_MESSAGES],
  };
}
