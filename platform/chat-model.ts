/**
 * The door to a model that converses and calls tools (the AI chat and the Analytics Assistant).
 * Two implementations: an OpenAI-compatible chat-completions client (`LLM_BASE_URL`, streamed
 * `tool_calls`) and the local model run in-process by node-llama-cpp (tool calls produced under a
 * JSON grammar). Callers never know which one answers beyond `name`, which they record on what the
 * model wrote.
 */

/** A tool the model may call: name, one-line description, JSON Schema of its input object. */
export interface ChatTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** One tool call the model made, with its parsed input. */
export interface ChatToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** The conversation as the model sees it (OpenAI chat-completions roles). */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ChatToolCall[] }
  /** A tool's output; callers wrap it so the model reads it as untrusted data, never as instructions. */
  | { role: 'tool'; toolCallId: string; content: string };

export interface ChatRequest {
  messages: ChatMessage[];
  tools: ChatTool[];
  /** Aborts the call: the stream ends with an AbortError. Callers always pass a deadline here. */
  signal: AbortSignal;
  maxTokens?: number;
  temperature?: number;
}

/** What one model call produces, in order: text deltas and/or tool calls, then exactly one finish. */
export type ChatEvent =
  | { type: 'text-delta'; delta: string }
  | { type: 'tool-call'; call: ChatToolCall }
  | { type: 'finish'; reason: 'stop' | 'tool-calls' | 'length'; usage?: { inputTokens?: number; outputTokens?: number } };

export interface ChatModel {
  /** Which model answers (e.g. `openai:gpt-4o-mini`, `local:SmolLM2-135M-Instruct-Q4_1`). */
  readonly name: string;
  /** One model call (one step of a turn). Throws on transport or model failure. */
  stream(request: ChatRequest): AsyncIterable<ChatEvent>;
}
