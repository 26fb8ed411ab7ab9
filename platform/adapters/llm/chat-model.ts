import { JsonTextStream } from './json-text-stream';

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
  | { type: 'finish'; reason: 'stop' | 'tool-calls' | 'length'; usage?: Usage };

/** What a call read and wrote; `cachedInputTokens`: prompt tokens the model held already (its earlier calls, a prefill). */
export interface Usage {
  inputTokens?: number;
  cachedInputTokens?: number;
  outputTokens?: number;
}

export interface ChatModel {
  /** Which model answers (e.g. `openai:gpt-4o-mini`, `local:SmolLM2-135M-Instruct-Q4_1`). */
  readonly name: string;
  /** One model call (one step of a turn). Throws on transport or model failure. */
  stream(request: ChatRequest): AsyncIterable<ChatEvent>;
  /**
   * A hint that a call on this prompt is likely soon: a model that reads its prompt itself (the local one) reads
   * it now if it is idle, so that call starts from it. Returns at once; never fails. Absent where it would not help.
   * `opening`: the first prompt of a conversation, which may set aside what the model read for another one.
   */
  prefill?(request: Pick<ChatRequest, 'messages' | 'tools'>, opening?: boolean): void;
}

/** What a call made without tools answers when all it wrote was a tool call (written as text). */
export const TOOL_CALL_AS_TEXT_ANSWER =
  'I could not finish looking this up within this answer. Ask me again, perhaps more narrowly, and I will continue from here.';

/**
 * The events of a call made without tools, with any tool call the model wrote as text left out: a
 * model that called tools earlier in the conversation may go on writing them (`{"type":"tool_call",…}`,
 * `{"name":…,"arguments":…}`, in a code fence or not) when none is offered, and that JSON is no answer
 * for the user. Text that opens with `{` is held until its object closes: a tool call is dropped, a
 * `{"type":"text","text":…}` reply gives its text, any other object goes out as written; the rest
 * streams as it comes. An answer that was nothing but tool calls becomes `TOOL_CALL_AS_TEXT_ANSWER`.
 */
export async function* withoutToolCallText(events: AsyncIterable<ChatEvent>): AsyncIterable<ChatEvent> {
  let held = '';
  let deciding = true;
  let wrote = false;
  let dropped = false;
  for await (const event of events) {
    if (event.type !== 'text-delta') {
      if (event.type === 'finish' && deciding) {
        const { body } = leadingObject(held);
        // An object cut off before it closed: the start of a text reply is its text, anything else goes.
        const partial = new JsonTextStream().push(body);
        if (partial) {
          wrote = true;
          yield { type: 'text-delta', delta: partial };
        } else if (/^\{\s*"/.test(body)) dropped = true;
        else if (held.trim()) {
          wrote = true;
          yield { type: 'text-delta', delta: held };
        }
        held = '';
      }
      if (event.type === 'finish' && dropped && !wrote) yield { type: 'text-delta', delta: TOOL_CALL_AS_TEXT_ANSWER };
      yield event;
      continue;
    }
    if (!deciding) {
      wrote = true;
      yield event;
      continue;
    }
    held += event.delta;
    for (;;) {
      const verdict = leadingObject(held);
      if (verdict.kind === 'pending') break;
      if (verdict.kind === 'text') {
        deciding = false;
        wrote = true;
        yield { type: 'text-delta', delta: dropped ? held.trimStart() : held };
        held = '';
        break;
      }
      if (verdict.kind === 'tool-call') dropped = true;
      else {
        wrote = true;
        yield { type: 'text-delta', delta: verdict.text };
        deciding = false;
      }
      held = verdict.rest;
      if (!deciding) {
        if (held) yield { type: 'text-delta', delta: held };
        held = '';
        break;
      }
    }
  }
}

type Leading =
  | { kind: 'pending'; body: string }
  | { kind: 'text'; body: string }
  | { kind: 'tool-call'; body: string; rest: string }
  | { kind: 'reply'; body: string; text: string; rest: string };

const FENCE = /^```[A-Za-z]*[ \t]*\r?\n/;

/** What the answer so far opens with: not decided yet, plain text, a tool call, or a text reply in JSON. */
function leadingObject(held: string): Leading {
  let body = held.trimStart();
  let fenced = false;
  if (body.startsWith('`')) {
    const fence = FENCE.exec(body);
    if (!fence) return /^`{1,3}[A-Za-z]*[ \t]*$/.test(body) ? { kind: 'pending', body } : { kind: 'text', body };
    body = body.slice(fence[0].length).trimStart();
    fenced = true;
  }
  if (!body) return { kind: 'pending', body };
  if (body[0] !== '{') return { kind: 'text', body };
  const end = objectEnd(body);
  if (end < 0) return { kind: 'pending', body };
  let value: unknown;
  try {
    value = JSON.parse(body.slice(0, end));
  } catch {
    return { kind: 'text', body };
  }
  let rest = body.slice(end);
  if (fenced) rest = rest.replace(/^\s*```/, '');
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  if (object.type === 'text' && typeof object.text === 'string') return { kind: 'reply', body, text: object.text, rest: rest.trimStart() };
  if (looksLikeToolCall(object)) return { kind: 'tool-call', body, rest };
  return { kind: 'text', body };
}

function looksLikeToolCall(o: Record<string, unknown>): boolean {
  if (o.type === 'tool_call' || o.type === 'function' || o.type === 'tool_use') return true;
  if ('tool_calls' in o || 'function_call' in o || 'tool' in o) return true;
  return typeof o.name === 'string' && ('input' in o || 'arguments' in o || 'parameters' in o);
}

/** The index just past the JSON object `text` opens with, or -1 while it is not closed. */
function objectEnd(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
