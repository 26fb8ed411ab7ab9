import type { ChatModel } from './chat-model';
import { createLocalChatModel } from './chat-model-local';
import { createOpenAiChatModel } from './chat-model-openai';
import type { Config } from '../../core/config';
import type { LocalLlmConfig } from './llm-local';
import type { Logger } from '../../core/logger';

export type ChatModelConfig = Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL'> & LocalLlmConfig;

/** The OpenAI-compatible model when LLM_BASE_URL is set, otherwise the local model run in this process. */
export function createChatModel(config: ChatModelConfig, logger?: Logger): ChatModel {
  return config.LLM_BASE_URL ? createOpenAiChatModel(config) : createLocalChatModel(config, logger);
}
