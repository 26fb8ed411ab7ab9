import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for an OpenAI-compatible provider: POST /v1/chat/completions, answering JSON or,
 * with `stream: true`, server-sent events (`data: {choices:[{delta:{content}}]}` … `data: [DONE]`).
 */
export interface FakeLlm {
  /** What to give as LLM_BASE_URL. */
  baseUrl: string;
  /** Every request body received, in order. */
  requests: { model: string; stream?: boolean; messages: { role: string; content: string }[] }[];
  /** The reply of non-streamed completions. */
  reply: string;
  /** The pieces of streamed completions, sent one event each. */
  chunks: string[];
  /** Answer every request with this HTTP status instead (e.g. 500), until set back to null. */
  failWith: number | null;
  /** Hold the next stream before its last piece until the returned function is called. */
  holdNextStream(): () => void;
  close(): Promise<void>;
}

export async function startFakeLlmServer(): Promise<FakeLlm> {
  let hold: Promise<void> | null = null;
  const fake: FakeLlm = {
    baseUrl: '',
    requests: [],
    reply: 'You are the agent written by the fake LLM.',
    chunks: ['The fake LLM ', 'compared the ', 'two versions.'],
    failWith: null,
    holdNextStream() {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return release;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(raw);
      fake.requests.push(body);
      if (fake.failWith) {
        res
          .writeHead(fake.failWith, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
        return;
      }
      const base = { id: 'chatcmpl-fake', created: Math.floor(Date.now() / 1000), model: body.model };
      if (!body.stream) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: fake.reply }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      const event = (delta: Record<string, unknown>, finish: string | null = null) =>
        res.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      const gate = hold;
      hold = null;
      event({ role: 'assistant', content: '' });
      for (const [i, chunk] of fake.chunks.entries()) {
        if (gate && i === fake.chunks.length - 1) await gate;
        event({ content: chunk });
      }
      event({}, 'stop');
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
