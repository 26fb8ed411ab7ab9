import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

// A stand-in for the engine's Media Stream endpoint, for the harness's own tests: it records every
// message a connection sends with its arrival time and lets the test send media, marks and clears back.

export interface StubMessage {
  at: number;
  event: string;
  body: any;
}

export interface StubConnection {
  socket: WebSocket;
  path: string;
  headers: http.IncomingHttpHeaders;
  messages: StubMessage[];
  streamSid(): string;
  sendMedia(bytes: Buffer, chunkBytes?: number): void;
  sendMark(name: string): void;
  sendClear(): void;
  closed: Promise<{ code: number; reason: string }>;
}

export async function startStubMediaServer(onConnection: (c: StubConnection) => void = () => {}) {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: '/twilio/media-stream' });
  const connections: StubConnection[] = [];
  wss.on('connection', (socket, req) => {
    const messages: StubMessage[] = [];
    const streamSid = () => messages.find((m) => m.event === 'start')?.body.streamSid as string;
    const send = (body: unknown) => socket.send(JSON.stringify(body));
    const c: StubConnection = {
      socket,
      path: req.url ?? '',
      headers: req.headers,
      messages,
      streamSid,
      sendMedia(bytes, chunkBytes = 160) {
        for (let i = 0; i < bytes.length; i += chunkBytes)
          send({ event: 'media', streamSid: streamSid(), media: { payload: bytes.subarray(i, i + chunkBytes).toString('base64') } });
      },
      sendMark: (name) => send({ event: 'mark', streamSid: streamSid(), mark: { name } }),
      sendClear: () => send({ event: 'clear', streamSid: streamSid() }),
      closed: new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
    };
    socket.on('message', (data) => {
      const body = JSON.parse(String(data));
      messages.push({ at: performance.now(), event: body.event, body });
    });
    connections.push(c);
    onConnection(c);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    async close() {
      for (const c of connections) c.socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
