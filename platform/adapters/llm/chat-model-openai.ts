import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { type ChatEvent, type ChatMessage, type ChatModel, type ChatRequest, withoutToolCallText } from './chat-model';
import type { Config } from '../../core/config';
import { DEFAULT_LLM_MODEL } from './llm';

export type OpenAiChatConfig = Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL' | 'LLM_CALL_TIMEOUT_MS'>;

/** The deadline of one call passed without the model finishing (distinct from a caller's abort). */
export class ModelDeadlineError extends Error {}

function toOpenAi(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content || null,
          ...(m.toolCalls?.length
            ? {
                tool_calls: m.toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
                })),
              }
            : {}),
        };
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

/** A tool call's arguments as the model wrote them: parsed JSON, or the raw text (the caller's validation then says what is wrong). */
function parseArguments(text: string): unknown {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The chat model door over an OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama,
 * llama.cpp's server): streamed text deltas and streamed `tool_calls`, assembled per index and handed
 * over whole once the model finished. Each call is bounded by LLM_CALL_TIMEOUT_MS from its start to
 * its last byte, and by the caller's signal; it is not retried here (the caller's workflow decides).
 * A call without tools never answers with a tool call written as text (`withoutToolCallText`).
 */
export function createOpenAiChatModel(config: OpenAiChatConfig): ChatModel {
  if (!config.LLM_BASE_URL) throw new Error('LLM_BASE_URL is not set');
  const modelName = config.LLM_MODEL ?? DEFAULT_LLM_MODEL;
  const timeoutMs = config.LLM_CALL_TIMEOUT_MS;
  const client = new OpenAI({
    baseURL: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY ?? 'not-needed',
    timeout: timeoutMs,
    maxRetries: 0,
  });
  async function* call(request: ChatRequest): AsyncIterable<ChatEvent> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([request.signal, deadline]);
    const calls = new Map<number, { id: string; name: string; args: string }>();
    let finish: string | null = null;
    let usage: { inputTokens?: number; outputTokens?: number } | undefined;
    try {
      const stream = await client.chat.completions.create(
        {
          model: modelName,
          stream: true,
          messages: toOpenAi(request.messages),
          ...(request.tools.length
            ? {
                tools: request.tools.map((t) => ({
                  type: 'function' as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
              }
            : {}),
          ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        },
        { signal },
      );
      for await (const chunk of stream) {
        if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (delta?.content) yield { type: 'text-delta', delta: delta.content };
        for (const piece of delta?.tool_calls ?? []) {
          const call = calls.get(piece.index) ?? { id: '', name: '', args: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.args += piece.function.arguments;
          calls.set(piece.index, call);
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      // An aborted stream may just end: an answer cut short is never handed over as complete.
      if (signal.aborted) throw signal.reason;
    } catch (error) {
      if (deadline.aborted && !request.signal.aborted) throw new ModelDeadlineError(`The model did not answer within ${timeoutMs} ms`);
      throw error;
    }
    const ordered = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    for (const [i, call] of ordered.entries()) {
      yield { type: 'tool-call', call: { id: call.id || `call_${i}`, name: call.name, input: parseArguments(call.args) } };
    }
    const reason = ordered.length > 0 ? 'tool-calls' : finish === 'length' ? 'length' : 'stop';
    yield { type: 'finish', reason, ...(usage ? { usage } : {}) };
  }
  return {
    name: `openai:${modelName}`,
    stream: (request) => (request.tools.length > 0 ? call(request) : withoutToolCallText(call(request))),
  };
}
