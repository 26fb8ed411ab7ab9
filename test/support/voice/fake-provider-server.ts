import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { pcmToMulaw } from '../../../voice/audio/mulaw';
import { pcmToBytes } from '../../../voice/audio/pcm';
import { resample } from './pcm';
import { CALLER_RATE, synthesize } from './speech';

// What the fake speech providers share: one HTTP server for the key check and the WebSocket upgrade, the
// set of keys each accepts (a key taken out is refused from then on, as a rotated key is), and speech made
// by the run's speech server so the caller hears words.

export interface ProviderServer {
  url: string;
  /** Keys the provider accepts. */
  keys: Set<string>;
  close(): Promise<void>;
}

export interface ProviderRoutes {
  /** The key a request carries, as the provider reads it. */
  keyOf(req: http.IncomingMessage, url: URL): string | undefined;
  /** The cheap authenticated read a key is checked with. */
  check(url: URL): { status: number; body: unknown } | null;
  /** A WebSocket the provider serves at this path, opened with an accepted key. */
  socket(url: URL, socket: WebSocket, req: http.IncomingMessage): void;
  isSocketPath(url: URL): boolean;
}

export async function startProviderServer(routes: ProviderRoutes): Promise<ProviderServer> {
  const keys = new Set<string>();
  const accepted = (req: http.IncomingMessage, url: URL) => {
    const key = routes.keyOf(req, url);
    return key !== undefined && keys.has(key);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const answer = routes.check(url);
    if (!answer) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    if (!accepted(req, url)) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"Invalid credentials"}');
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, raw, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (!routes.isSocketPath(url)) return void raw.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (!accepted(req, url)) return void raw.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    sockets.handleUpgrade(req, raw, head, (socket) => routes.socket(url, socket, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    async close() {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The text spoken by the run's speech server, as the provider's encoding at its rate. */
export async function spokenBytes(text: string, speechBaseUrl: string, encoding: 'mulaw' | 'pcm', sampleRate: number): Promise<Buffer> {
  const pcm = resample(await synthesize(text, { speechBaseUrl }), CALLER_RATE, sampleRate);
  return encoding === 'mulaw' ? Buffer.from(pcmToMulaw(pcm)) : pcmToBytes(pcm);
}

/** Bytes cut in pieces of about 100 ms. */
export function pieces(bytes: Buffer, bytesPerSecond: number): Buffer[] {
  const size = Math.max(2, Math.round(bytesPerSecond / 10) & ~1);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}
