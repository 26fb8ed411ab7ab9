import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local OpenAI-compatible server for an organization's own key: `GET /v1/models` checks the bearer key,
// `POST /v1/chat/completions` with `stream: true` answers scripted replies as server-sent events:
// `chat.completion.chunk`s with `delta.content` word by word, then `delta.tool_calls` fragments (index, id
// and name first, the arguments in pieces), the finish reason and `data: [DONE]`. A key it does not
// accept gets 401 with OpenAI's error body. `fallback` answers when the script is empty; `firstTokenMs` and
// `tokenMs` pace the stream as a hosted model's time to first token and its rate.

export interface FakeOpenAiReply {
  text?: string;
  toolCalls?: { name: string; arguments: unknown }[];
}

export interface FakeOpenAi {
  baseUrl: string;
  keys: Set<string>;
  script: FakeOpenAiReply[];
  requests: { model: string; messages: { role: string; content: string | null; tool_call_id?: string }[]; tools?: unknown[] }[];
  fallback: FakeOpenAiReply;
  /** Delay before the first content chunk, and between words (0: at once). */
  firstTokenMs: number;
  tokenMs: number;
  close(): Promise<void>;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const fake: FakeOpenAi = {
    baseUrl: '',
    keys: new Set(),
    script: [],
    requests: [],
    fallback: { text: 'OK.' },
    firstTokenMs: 0,
    tokenMs: 0,
    close: async () => {},
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (!key || !fake.keys.has(key))
        return json(401, {
          error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
        });
      if (req.method === 'GET' && req.url === '/v1/models')
        return json(200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'fake' }] });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(404, { error: { message: 'not found' } });
      const body = JSON.parse(raw) as FakeOpenAi['requests'][number] & { stream?: boolean };
      fake.requests.push(body);
      if (!body.stream) return json(400, { error: { message: 'this fake streams only' } });
      const reply = fake.script.shift() ?? fake.fallback;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = { id: 'chatcmpl-org', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      chunk({ role: 'assistant', content: '' });
      if (fake.firstTokenMs) await pause(fake.firstTokenMs);
      for (const [i, word] of (reply.text?.match(/\S+\s*/g) ?? []).entries()) {
        if (i > 0 && fake.tokenMs) await pause(fake.tokenMs);
        if (res.destroyed) return;
        chunk({ content: word });
      }
      for (const [index, call] of (reply.toolCalls ?? []).entries()) {
        const args = JSON.stringify(call.arguments);
        chunk({ tool_calls: [{ index, id: `call_org_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] });
        for (let at = 0; at < args.length; at += 5) chunk({ tool_calls: [{ index, function: { arguments: args.slice(at, at + 5) } }] });
      }
      chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}
