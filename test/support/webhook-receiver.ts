import http from 'node:http';
import { freePort } from '../../dev-servers/ports';

// An integrator's webhook endpoint on 127.0.0.1: it keeps every request (headers as sent, the raw body)
// and answers as `answer` says. It can go down (nothing listens: the connection is refused) and come
// back on the same port.

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  /** Date.now() when the body was read. */
  at: number;
}

export interface Answer {
  status: number;
  body?: string;
  delayMs?: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** How to answer the next requests (default 204). */
  answer: (request: ReceivedWebhook) => Answer;
  /** Resolves once `predicate` holds over what was received, polling every 20 ms; throws after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Stops listening (attempts get a refused connection) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const port = await freePort();
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    answer: () => ({ status: 204 }),
    async waitFor(predicate, timeoutMs = 20_000, what = 'webhooks') {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    down: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    up: () => listen(),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const hook: ReceivedWebhook = {
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        signature: headers['webhook-signature'] ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const answer = receiver.answer(hook);
      const reply = () => {
        received.push(hook);
        res.writeHead(answer.status, { 'Content-Type': 'text/plain' });
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  server.keepAliveTimeout = 1000;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen();
  return receiver;
}
