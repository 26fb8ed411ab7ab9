import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible chat-completions server for the AI chat: each POST /v1/chat/completions
 * (stream: true) takes the next scripted reply and streams it as `chat.completion.chunk` events: text
 * token by token, then tool calls as streamed `tool_calls` deltas (id and name first, the arguments in
 * pieces), then `finish_reason` and `data: [DONE]`. Deterministic: the same script, the same bytes.
 */
export interface ScriptedReply {
  /** Text, streamed one token (word and its following space) per chunk. */
  text?: string;
  toolCalls?: { name: string; arguments: unknown }[];
  /** Pause between chunks. */
  delayMs?: number;
  /** Stop after this many text tokens and wait for `release()` (or the client going away). */
  holdAfterTokens?: number;
}

export interface FakeChatLlm {
  baseUrl: string;
  /** Replies, consumed in order; a function decides from the request. */
  script: (ScriptedReply | ((request: ChatRequestBody) => ScriptedReply))[];
  /** Used when the script is empty. */
  fallback: ScriptedReply;
  requests: ChatRequestBody[];
  /** Connections the server saw closed by the client before the reply ended. */
  abandoned: number;
  /** performance.now() of every text token written, in order (for latency figures). */
  sentAt: number[];
  /** Resolves when a held reply reached its hold. */
  held(): Promise<void>;
  release(): void;
  failWith: number | null;
  close(): Promise<void>;
}

export interface ChatRequestBody {
  model: string;
  stream?: boolean;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string; description: string; parameters: unknown } }[];
}

export const tokens = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];

export async function startFakeChatLlm(): Promise<FakeChatLlm> {
  let releaseHold: (() => void) | null = null;
  let heldWaiters: (() => void)[] = [];
  let heldReached = false;
  const fake: FakeChatLlm = {
    baseUrl: '',
    script: [],
    fallback: { text: 'OK.' },
    requests: [],
    abandoned: 0,
    sentAt: [],
    failWith: null,
    held: () => (heldReached ? Promise.resolve() : new Promise((resolve) => heldWaiters.push(resolve))),
    release: () => {
      heldReached = false;
      releaseHold?.();
      releaseHold = null;
    },
    close: async () => {
      fake.release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(raw) as ChatRequestBody;
      fake.requests.push(body);
      if (fake.failWith) {
        res
          .writeHead(fake.failWith, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
        return;
      }
      const next = fake.script.shift() ?? fake.fallback;
      const reply = typeof next === 'function' ? next(body) : next;
      let gone = false;
      res.on('close', () => {
        if (!res.writableEnded) {
          gone = true;
          fake.abandoned++;
          fake.release();
        }
      });
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      const base = { id: 'chatcmpl-fake', created: 1_700_000_000, model: body.model, object: 'chat.completion.chunk' };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        !gone && res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      chunk({ role: 'assistant', content: '' });
      for (const [i, token] of tokens(reply.text ?? '').entries()) {
        if (reply.holdAfterTokens !== undefined && i === reply.holdAfterTokens) {
          await new Promise<void>((resolve) => {
            releaseHold = resolve;
            heldReached = true;
            for (const w of heldWaiters) w();
            heldWaiters = [];
          });
        }
        if (gone) return;
        if (reply.delayMs) await sleep(reply.delayMs);
        chunk({ content: token });
        fake.sentAt.push(performance.now());
      }
      for (const [index, call] of (reply.toolCalls ?? []).entries()) {
        const args = JSON.stringify(call.arguments);
        chunk({ tool_calls: [{ index, id: `call_fake_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] });
        for (let at = 0; at < args.length; at += 12) chunk({ tool_calls: [{ index, function: { arguments: args.slice(at, at + 12) } }] });
      }
      chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
      if (!gone) res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
