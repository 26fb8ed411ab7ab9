import { randomUUID } from 'node:crypto';
import { type ProviderServer, pieces, spokenBytes, startProviderServer } from './fake-provider-server';

// A local Cartesia: `GET /voices` checks the key (`X-API-Key` or a bearer), and the TTS socket
// (`/tts/websocket?api_key=…&cartesia_version=…`) takes generation requests (model_id, transcript, voice by
// id, raw output_format pcm_s16le or pcm_mulaw at a rate, context_id, continue) and answers each context
// with `chunk` messages (base64 `data`), then `done`; a malformed request gets `error`. The audio is the
// transcript spoken by the run's speech server.

export interface FakeCartesia extends ProviderServer {
  requests: Record<string, unknown>[];
  versions: (string | null)[];
}

export async function startFakeCartesia(speechBaseUrl: string): Promise<FakeCartesia> {
  const fake = { requests: [] as Record<string, unknown>[], versions: [] as (string | null)[] } as FakeCartesia;
  const server = await startProviderServer({
    keyOf: (req, url) =>
      url.searchParams.get('api_key') ??
      (req.headers['x-api-key'] as string | undefined) ??
      /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1],
    check: (url) =>
      url.pathname === '/voices' ? { status: 200, body: { data: [{ id: randomUUID(), name: 'Fake' }], has_more: false } } : null,
    isSocketPath: (url) => url.pathname === '/tts/websocket',
    socket(url, socket) {
      fake.versions.push(url.searchParams.get('cartesia_version'));
      socket.on('message', async (data) => {
        const request = JSON.parse(String(data)) as {
          model_id?: string;
          transcript?: string;
          voice?: { mode?: string; id?: string };
          output_format?: { container?: string; encoding?: string; sample_rate?: number };
          context_id?: string;
        };
        fake.requests.push(request as Record<string, unknown>);
        const contextId = request.context_id ?? randomUUID();
        const format = request.output_format;
        const encoding = format?.encoding === 'pcm_mulaw' ? 'mulaw' : format?.encoding === 'pcm_s16le' ? 'pcm' : null;
        if (
          !request.model_id ||
          !request.transcript ||
          request.voice?.mode !== 'id' ||
          format?.container !== 'raw' ||
          !encoding ||
          !format.sample_rate
        ) {
          socket.send(JSON.stringify({ type: 'error', done: true, status_code: 400, context_id: contextId, error: 'Invalid request' }));
          return;
        }
        const bytes = await spokenBytes(request.transcript, speechBaseUrl, encoding, format.sample_rate);
        for (const piece of pieces(bytes, encoding === 'mulaw' ? format.sample_rate : format.sample_rate * 2)) {
          if (socket.readyState !== socket.OPEN) return;
          socket.send(
            JSON.stringify({
              type: 'chunk',
              data: piece.toString('base64'),
              done: false,
              status_code: 206,
              step_time: 12,
              context_id: contextId,
            }),
          );
        }
        if (socket.readyState === socket.OPEN)
          socket.send(JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: contextId }));
      });
    },
  });
  return Object.assign(fake, server);
}
