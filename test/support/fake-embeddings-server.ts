import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible `/v1/embeddings` server on 127.0.0.1. Its "model" knows a few concepts: words of
 * one concept share a dimension, so "automobile" is near "car" although no word is shared, which a
 * lexical ranking cannot find. Every other word lands in a hashed dimension of its own.
 */
export const CONCEPTS: string[][] = [
  ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles'],
  ['doctor', 'physician', 'clinician', 'medic'],
  ['money', 'refund', 'reimbursement', 'repayment'],
];
const DIMENSION = 32;

export interface FakeEmbeddingsServer {
  baseUrl: string;
  apiKey: string;
  /** Every request body received (input_type only when the client sent one). */
  requests: { model: string; input: string[]; input_type?: string }[];
  /** Answer the next n requests with this status. */
  failNext(n: number, status: number): void;
  /** Answer every later request this late (a slow model). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(DIMENSION).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    if (concept >= 0) v[concept]! += 3;
    else {
      let h = 7;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[CONCEPTS.length + (h % (DIMENSION - CONCEPTS.length))]! += 1;
    }
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

export async function startFakeEmbeddingsServer(apiKey = 'sk-test-embeddings'): Promise<FakeEmbeddingsServer> {
  let failures: { n: number; status: number } = { n: 0, status: 500 };
  let delayMs = 0;
  const requests: FakeEmbeddingsServer['requests'] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(401, { error: { message: 'invalid api key', type: 'invalid_request_error' } });
      if (failures.n > 0) {
        failures.n--;
        return send(failures.status, { error: { message: 'simulated failure' } });
      }
      const body = JSON.parse(raw) as { model: string; input: string | string[]; input_type?: string };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push({ model: body.model, input, ...(body.input_type === undefined ? {} : { input_type: body.input_type }) });
      const answer = () =>
        send(200, {
          object: 'list',
          model: body.model,
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text) })),
          usage: { prompt_tokens: input.join(' ').length, total_tokens: input.join(' ').length },
        });
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    failNext: (n, status) => (failures = { n, status }),
    setDelay: (ms) => (delayMs = ms),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
