import {
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { expect } from 'vitest';
import type { TestContext } from './context';

// The AI chat read the way a client built on the `ai` package reads it: its transport posts the new
// message and parses the stream, readUIMessageStream builds the message.

export interface StreamRead {
  status: number;
  headers: Headers;
  /** The raw SSE text. */
  raw: string;
  chunks: UIMessageChunk[];
  /** SSE ids in order. */
  ids: number[];
}

/** Parses an SSE body with the `ai` package's own parser and chunk schema; every frame must validate. */
export async function parseStream(text: string): Promise<UIMessageChunk[]> {
  const body = new Response(text).body!;
  const chunks: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!value.success) throw value.error;
    chunks.push(value.value as UIMessageChunk);
  }
  return chunks;
}

export async function readSse(res: Response): Promise<StreamRead> {
  const raw = await res.text();
  const ids = [...raw.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  return { status: res.status, headers: res.headers, raw, chunks: res.status === 200 ? await parseStream(raw) : [], ids };
}

/** The message the chunks build, continuing `message` when given (a resumed turn). */
export async function messageFrom(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, message })) last = m;
  return JSON.parse(JSON.stringify(last ?? message)) as UIMessage;
}

/** The `ai` package's HTTP transport, pointed at a chat: it sends only the new message, as the API wants. */
export function chatTransport(ctx: TestContext, token: string, chatId: string) {
  return new DefaultChatTransport<UIMessage>({
    api: `${ctx.baseUrl}/ai/chats/${chatId}/messages`,
    headers: { Authorization: `Bearer ${token}` },
    prepareSendMessagesRequest: ({ messages }) => ({ body: { message: messages[messages.length - 1] } }),
    prepareReconnectToStreamRequest: () => ({ api: `${ctx.baseUrl}/ai/chats/${chatId}/stream` }),
  });
}

/** Sends a user message through the transport and collects every chunk of the answer. */
export async function send(ctx: TestContext, token: string, chatId: string, text: string, id = `u-${Math.random().toString(36).slice(2)}`) {
  const transport = chatTransport(ctx, token, chatId);
  const message: UIMessage = { id, role: 'user', parts: [{ type: 'text', text }] };
  const stream = await transport.sendMessages({
    chatId,
    messages: [message],
    abortSignal: undefined,
    trigger: 'submit-message',
    messageId: undefined,
  });
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return { message, chunks, answer: await messageFrom(chunks) };
}

export async function streamRequest(
  ctx: TestContext,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${ctx.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return readSse(res);
}

export async function newChat(ctx: TestContext, token: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await ctx.request('POST', '/ai/chats', { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

export const types = (chunks: { type: string }[]) => chunks.map((c) => c.type);
