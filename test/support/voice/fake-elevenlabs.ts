import { type ProviderServer, pieces, spokenBytes, startProviderServer } from './fake-provider-server';

// A local ElevenLabs: `GET /v1/user` checks the key (`xi-api-key`), and the streaming speech socket
// (`/v1/text-to-speech/{voice_id}/stream-input`) takes the opening message (a space and the voice
// settings), text chunks, a flush and the empty text that ends the input, and answers each generation
// with `audio` (base64, in the query's `output_format`: ulaw_8000 or pcm_<rate>) and `normalizedAlignment`,
// then `isFinal`. The audio is the text spoken by the run's speech server, its first piece sent no sooner
// than `firstAudioMs` after the generation was asked for. A key no longer accepted is refused at the
// handshake (401).

export interface FakeElevenLabs extends ProviderServer {
  /** Every generation's text, in order. */
  texts: string[];
  /** Each socket's voice id, query and opening message. */
  sockets: { voiceId: string; query: URLSearchParams; opening: Record<string, unknown> | null }[];
  /** The provider's time to first audio of a generation (0: as soon as it is synthesized). */
  firstAudioMs: number;
}

export async function startFakeElevenLabs(speechBaseUrl: string): Promise<FakeElevenLabs> {
  const fake = { texts: [] as string[], sockets: [] as FakeElevenLabs['sockets'], firstAudioMs: 0 } as FakeElevenLabs;
  const server = await startProviderServer({
    keyOf: (req) => req.headers['xi-api-key'] as string | undefined,
    check: (url) => (url.pathname === '/v1/user' ? { status: 200, body: { user_id: 'u-1', subscription: { tier: 'creator' } } } : null),
    isSocketPath: (url) => /^\/v1\/text-to-speech\/[^/]+\/stream-input$/.test(url.pathname),
    socket(url, socket) {
      const entry = {
        voiceId: decodeURIComponent(url.pathname.split('/')[3]!),
        query: url.searchParams,
        opening: null as Record<string, unknown> | null,
      };
      fake.sockets.push(entry);
      const format = url.searchParams.get('output_format') ?? 'mp3_44100_128';
      const match = /^(ulaw|pcm)_(\d+)$/.exec(format);
      let buffered = '';
      let chain = Promise.resolve();
      const generate = (text: string, final: boolean) => {
        const askedAt = performance.now();
        chain = chain.then(async () => {
          if (text.trim()) {
            fake.texts.push(text.trim());
            const rate = Number(match![2]);
            const bytes = await spokenBytes(text.trim(), speechBaseUrl, match![1] === 'ulaw' ? 'mulaw' : 'pcm', rate);
            const wait = askedAt + fake.firstAudioMs - performance.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
            for (const piece of pieces(bytes, match![1] === 'ulaw' ? rate : rate * 2)) {
              if (socket.readyState !== socket.OPEN) return;
              const chars = [...text.trim()];
              socket.send(
                JSON.stringify({
                  audio: piece.toString('base64'),
                  isFinal: null,
                  normalizedAlignment: { chars, charStartTimesMs: chars.map((_, i) => i * 60), charDurationsMs: chars.map(() => 60) },
                  alignment: null,
                }),
              );
            }
          }
          if (final && socket.readyState === socket.OPEN) {
            socket.send(JSON.stringify({ isFinal: true }));
            socket.close(1000);
          }
        });
      };
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as {
          text?: string;
          voice_settings?: unknown;
          flush?: boolean;
          try_trigger_generation?: boolean;
        };
        if (!match) {
          socket.send(JSON.stringify({ message: `Unsupported output_format ${format}`, error: 'invalid_output_format', code: 1008 }));
          return void socket.close(1008, 'invalid_output_format');
        }
        if (entry.opening === null) {
          // The first message opens the stream: a single space, with the voice's settings.
          if (message.text !== ' ') return void socket.close(1008, 'the first message must be a single space');
          entry.opening = message as Record<string, unknown>;
          return;
        }
        if (message.text === '') return generate(buffered, true);
        buffered += message.text ?? '';
        if (message.flush) {
          generate(buffered, false);
          buffered = '';
        }
      });
    },
  });
  return Object.assign(fake, server);
}
