import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../../platform/core/config';
import { type VoiceSessionClaims, verifyVoiceSessionToken } from '../../services/conversations/session-tokens';

// A stand-in for the conversation engine's widget WebSocket (`WS /widget?token=`), speaking its protocol
// (/tmp/voice-protocols.md, "The widget's WebSocket"): it checks the token and that the socket's Origin is the
// token's origin claim, as the engine does, then lets the test drive it: send `ready`, segments of audio,
// `clear`, transcripts, `end`; it records every binary frame (microphone audio) and JSON message it receives.

export interface ReceivedFrame {
  at: number;
  bytes: Buffer;
}

export interface WidgetEngineSession {
  claims: VoiceSessionClaims;
  origin: string | undefined;
  frames: ReceivedFrame[];
  messages: { at: number; message: Record<string, unknown> }[];
  closed: boolean;
  send(message: Record<string, unknown>): void;
  /** `segment` then its PCM16 16 kHz audio, in binary frames of `chunkMs`. */
  sendSegment(id: string, pcm: Int16Array, chunkMs?: number): void;
  /** The first received message of a type (and id), within a bound. */
  waitForMessage(type: string, id?: string, timeoutMs?: number): Promise<{ at: number; message: Record<string, unknown> }>;
  /** Until at least `count` binary frames came, within a bound. */
  waitForFrames(count: number, timeoutMs?: number): Promise<ReceivedFrame[]>;
  waitForClose(timeoutMs?: number): Promise<void>;
}

export interface FakeWidgetEngine {
  /** VOICE_PUBLIC_URL for the API. */
  url: string;
  /** Sockets refused (bad token, wrong Origin), with why. */
  refused: string[];
  nextSession(timeoutMs?: number): Promise<WidgetEngineSession>;
  close(): Promise<void>;
}

async function until<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`fake widget engine: no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type KeyConfig = Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>;

/** `config`: the API's, read when a socket opens (the engine starts first: the API is given its address). */
export async function startFakeWidgetEngine(config: () => KeyConfig): Promise<FakeWidgetEngine> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const sessions: WidgetEngineSession[] = [];
  const refused: string[] = [];
  let taken = 0;

  server.on('upgrade', async (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://engine');
    const claims = url.pathname === '/widget' ? await verifyVoiceSessionToken(config(), url.searchParams.get('token') ?? '') : null;
    const why = !claims
      ? 'invalid token'
      : claims.channel !== 'widget'
        ? 'not a widget token'
        : req.headers.origin !== claims.origin
          ? 'origin mismatch'
          : null;
    if (why) {
      refused.push(why);
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => sessions.push(session(ws, claims!, req.headers.origin)));
  });

  function session(ws: WebSocket, claims: VoiceSessionClaims, origin: string | undefined): WidgetEngineSession {
    const s: WidgetEngineSession = {
      claims,
      origin,
      frames: [],
      messages: [],
      closed: false,
      send: (message) => ws.send(JSON.stringify(message)),
      sendSegment(id, pcm, chunkMs = 100) {
        ws.send(JSON.stringify({ type: 'segment', id }));
        const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
        const chunk = (16_000 * 2 * chunkMs) / 1000;
        for (let offset = 0; offset < bytes.length; offset += chunk) ws.send(bytes.subarray(offset, offset + chunk));
      },
      waitForMessage: (type, id, timeoutMs = 10_000) =>
        until(
          () => s.messages.find((m) => m.message.type === type && (id === undefined || m.message.id === id)),
          `${type} ${id ?? ''}`,
          timeoutMs,
        ),
      waitForFrames: (count, timeoutMs = 10_000) =>
        until(() => (s.frames.length >= count ? s.frames : undefined), `${count} frames`, timeoutMs),
      waitForClose: (timeoutMs = 10_000) => until(() => (s.closed ? true : undefined), 'close', timeoutMs).then(() => {}),
    };
    ws.on('message', (data, isBinary) => {
      const at = Date.now();
      if (isBinary) s.frames.push({ at, bytes: Buffer.from(data as Buffer) });
      else s.messages.push({ at, message: JSON.parse(String(data)) });
    });
    ws.on('close', () => {
      s.closed = true;
    });
    return s;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    refused,
    nextSession: (timeoutMs = 15_000) => until(() => (sessions.length > taken ? sessions[taken++] : undefined), 'session', timeoutMs),
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
