import type { AgentConfig } from '../../domain/agent-config';
import { SPEECH_PROVIDER_NAMES, type SpeechProvider } from '../../domain/integrations';
import type { ChatModel } from '../../platform/adapters/llm/chat-model';
import { createOpenAiChatModel } from '../../platform/adapters/llm/chat-model-openai';
import type { Config } from '../../platform/core/config';
import type { Logger } from '../../platform/core/logger';
import type { ServiceDeps } from '../../services/deps';
import type { OpenedConversation } from '../../services/conversations/runtime';
import { markSpeechKeyRefused, speechKeysOf, type SpeechKey } from '../../services/integrations/speech-accounts';
import type { ConversationPorts } from '../pipeline/conversation';
import { cartesiaVoice } from './cartesia';
import { deepgramRecognizer } from './deepgram';
import { elevenLabsVoice } from './elevenlabs';
import { ProviderChoice, fallbackModel, fallbackRecognizer, fallbackVoice } from './fallback';
import type { Recognizer, SpeechStack, SpeechVoice } from './types';

// Which recognizer, voice and model a conversation runs with: the providers the agent's version names,
// with the organization's keys, each with the engine's local default behind it (./fallback.ts). Chosen
// when the conversation opens; every caller turn records its recognizer, every agent turn its voice and
// model, each with what was asked and why the default answered instead (audit.providers).

export type SelectionConfig = Pick<
  Config,
  | 'DEEPGRAM_API_BASE_URL'
  | 'ELEVENLABS_API_BASE_URL'
  | 'CARTESIA_API_BASE_URL'
  | 'CARTESIA_VERSION'
  | 'OPENAI_API_BASE_URL'
  | 'SPEECH_PROVIDER_CONNECT_TIMEOUT_MS'
  | 'SPEECH_PROVIDER_FIRST_RESULT_MS'
  | 'LLM_CALL_TIMEOUT_MS'
>;

/** The models used where the agent's configuration names none. */
export const DEFAULT_PROVIDER_MODELS = { deepgram: 'nova-3', elevenlabs: 'eleven_flash_v2_5', cartesia: 'sonic-2' } as const;

export interface ProviderSelection {
  speech: SpeechStack;
  model: ChatModel;
  /** What a turn of this role records of the providers that made it. */
  audit(role: string): Record<string, unknown>;
}

export interface SelectionInput {
  config: SelectionConfig;
  agent: AgentConfig;
  keys: SpeechKey[] | { unreadable: string };
  local: SpeechStack;
  model: ChatModel;
  logger: Logger;
  /** The provider refused the organization's key mid-call: its connection needs a new one. */
  onRefused(connectionId: string, reason: string): void;
}

export function selectProviders(input: SelectionInput): ProviderSelection {
  const { config, agent } = input;
  const bounds = { connectTimeoutMs: config.SPEECH_PROVIDER_CONNECT_TIMEOUT_MS, firstResultMs: config.SPEECH_PROVIDER_FIRST_RESULT_MS };

  /** The key for a provider, or why there is none. */
  const keyOf = (provider: SpeechProvider): { apiKey: string; connectionId: string } | { reason: string } => {
    if ('unreadable' in input.keys) return { reason: input.keys.unreadable };
    const key = input.keys.find((k) => k.provider === provider);
    if (!key) return { reason: `the organization has no ${SPEECH_PROVIDER_NAMES[provider]} key (POST /integrations/speech-accounts)` };
    return 'unusable' in key ? { reason: key.unusable } : key;
  };

  const choose = <T extends { name: string }>(
    part: ProviderChoice['part'],
    asked: string,
    local: T,
    make: (key: { apiKey: string }) => T | null,
  ): { choice: ProviderChoice; primary: T | null } => {
    const supported = asked in SPEECH_PROVIDER_NAMES ? keyOf(asked as SpeechProvider) : { reason: `the engine has no ${asked} ${part}` };
    const primary = 'apiKey' in supported ? make(supported) : null;
    const reason = 'reason' in supported ? supported.reason : primary ? null : `the engine has no ${asked} ${part}`;
    const choice = new ProviderChoice(part, asked, primary, local, reason, (why, refused) => {
      input.logger.warn({ part, provider: asked, reason: why }, 'a cloud provider failed: the local default goes on');
      if (refused && 'connectionId' in supported) input.onRefused(supported.connectionId, why);
    });
    return { choice, primary };
  };

  const listen = choose<Recognizer>('recognizer', agent.transcriber.provider, input.local.recognizer, ({ apiKey }) =>
    agent.transcriber.provider === 'deepgram'
      ? deepgramRecognizer({
          baseUrl: config.DEEPGRAM_API_BASE_URL,
          apiKey,
          model: agent.transcriber.model ?? DEFAULT_PROVIDER_MODELS.deepgram,
          keywords: agent.transcriber.keywords,
          ...bounds,
        })
      : null,
  );
  const speak = choose<SpeechVoice>('voice', agent.voice.provider, input.local.voice, ({ apiKey }) => {
    if (agent.voice.provider === 'elevenlabs')
      return elevenLabsVoice({
        baseUrl: config.ELEVENLABS_API_BASE_URL,
        apiKey,
        model: DEFAULT_PROVIDER_MODELS.elevenlabs,
        stability: agent.voice.stability,
        similarityBoost: agent.voice.similarity_boost,
        ...bounds,
      });
    if (agent.voice.provider === 'cartesia')
      return cartesiaVoice({
        baseUrl: config.CARTESIA_API_BASE_URL,
        apiKey,
        version: config.CARTESIA_VERSION,
        model: DEFAULT_PROVIDER_MODELS.cartesia,
        language: agent.language.slice(0, 2),
        ...bounds,
      });
    return null;
  });
  // No model provider named: the deployment's model, which is no fallback.
  const think = agent.llm.provider
    ? choose<ChatModel>('model', agent.llm.provider, input.model, ({ apiKey }) =>
        createOpenAiChatModel({
          LLM_BASE_URL: config.OPENAI_API_BASE_URL,
          LLM_API_KEY: apiKey,
          LLM_MODEL: agent.llm.model,
          LLM_CALL_TIMEOUT_MS: config.LLM_CALL_TIMEOUT_MS,
        }),
      )
    : { choice: new ProviderChoice('model', 'deployment', null, input.model, null), primary: null };

  return {
    speech: {
      recognizer: fallbackRecognizer(listen.primary, input.local.recognizer, listen.choice),
      voice: fallbackVoice(speak.primary, input.local.voice, speak.choice),
      turn: input.local.turn,
    },
    model: fallbackModel(think.primary, input.model, think.choice, config.SPEECH_PROVIDER_FIRST_RESULT_MS),
    audit(role) {
      if (role === 'caller') return { providers: { recognizer: listen.choice.audit() } };
      if (role === 'agent') return { providers: { voice: speak.choice.audit(), model: think.choice.audit() } };
      return {};
    },
  };
}

/** The conversation's providers, with the organization's keys read now (a key that cannot be read is no key). */
export async function conversationProviders(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'> & { speech: SpeechStack; model: ChatModel },
  opened: OpenedConversation,
): Promise<ProviderSelection> {
  const keys = await speechKeysOf(deps, opened.orgId).catch((error: Error) => ({
    unreadable: `the organization's keys could not be read: ${error.message}`.slice(0, 300),
  }));
  const logger = deps.logger.child({ conversationId: opened.id });
  return selectProviders({
    config: deps.config,
    agent: opened.config,
    keys,
    local: deps.speech,
    model: deps.model,
    logger,
    onRefused: (connectionId, reason) =>
      void markSpeechKeyRefused(deps, opened.orgId, connectionId, reason).catch((error: Error) =>
        logger.error({ err: error }, 'a refused provider key could not be marked'),
      ),
  });
}

/** The conversation's ports, each turn written with the providers that made it. */
export function withProviderAudit(ports: ConversationPorts, selection: ProviderSelection): ConversationPorts {
  return { ...ports, recordTurn: (turn) => ports.recordTurn({ ...turn, audit: { ...turn.audit, ...selection.audit(turn.role) } }) };
}
