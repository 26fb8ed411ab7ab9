import { mulawToPcm } from '../../../voice/audio/mulaw';
import { pcmFromBytes, rms } from '../../../voice/audio/pcm';
import { type ProviderServer, startProviderServer } from './fake-provider-server';

// A local Deepgram: `GET /v1/projects` checks the key (`Authorization: Token`), and the live
// transcription socket (`/v1/listen`) reads binary audio in the encoding and rate its query names, finds
// speech by its level, and answers as Deepgram does: SpeechStarted (vad_events), interim Results while the
// caller speaks, a final Result with speech_final once `endpointing` ms of silence follow, UtteranceEnd,
// empty finals over silence, KeepAlive kept, CloseStream answered with Metadata and a close. What it
// "heard" is scripted: each utterance takes the next transcript of `script` (then `fallback`). `latencyMs`
// delays every message, as the provider's processing and the network do.

export interface FakeDeepgram extends ProviderServer {
  script: string[];
  /** Each stream's query, in order of opening. */
  streams: URLSearchParams[];
  /** Text messages received (KeepAlive, CloseStream). */
  controls: string[];
  /** Streams stay open and send nothing (a provider that hangs). */
  mute: boolean;
  /** The transcript of an utterance when the script is empty. */
  fallback: string;
  /** Delay of every message sent (0: at once). */
  latencyMs: number;
}

const LEVEL = 300;
const FRAME_MS = 20;

export async function startFakeDeepgram(): Promise<FakeDeepgram> {
  const fake = {
    script: [] as string[],
    streams: [] as URLSearchParams[],
    controls: [] as string[],
    mute: false,
    fallback: '',
    latencyMs: 0,
  } as FakeDeepgram;
  const server = await startProviderServer({
    keyOf: (req) => /^Token (.+)$/.exec(req.headers.authorization ?? '')?.[1],
    check: (url) => (url.pathname === '/v1/projects' ? { status: 200, body: { projects: [{ project_id: 'p-1', name: 'Acme' }] } } : null),
    isSocketPath: (url) => url.pathname === '/v1/listen',
    socket(url, socket) {
      const q = url.searchParams;
      fake.streams.push(q);
      const rate = Number(q.get('sample_rate') ?? 16000);
      const mulaw = q.get('encoding') === 'mulaw';
      const endpointing = Number(q.get('endpointing') ?? 10);
      const sendNow = (message: unknown) => !fake.mute && socket.readyState === socket.OPEN && socket.send(JSON.stringify(message));
      const send = (message: unknown) => (fake.latencyMs ? setTimeout(() => sendNow(message), fake.latencyMs) : sendNow(message));
      let samples: Int16Array = new Int16Array(0);
      let at = 0; // seconds of audio read
      let speechFrom: number | null = null;
      let lastVoice = 0;
      let lastEmit = 0;
      let lastInterim = 0;
      const result = (text: string, start: number, end: number, isFinal: boolean, speechFinal: boolean) => {
        const words = text.split(/\s+/).filter(Boolean);
        const step = words.length ? (end - start) / words.length : 0;
        send({
          type: 'Results',
          channel_index: [0, 1],
          duration: end - start,
          start,
          is_final: isFinal,
          speech_final: speechFinal,
          channel: {
            alternatives: [
              {
                transcript: text,
                confidence: 0.98,
                words: words.map((w, i) => ({
                  word: w.toLowerCase().replace(/[^a-z0-9']/g, ''),
                  punctuated_word: w,
                  start: start + i * step,
                  end: start + (i + 1) * step,
                  confidence: 0.98,
                })),
              },
            ],
          },
          metadata: { request_id: 'fake', model_info: { name: q.get('model') } },
          from_finalize: false,
        });
      };
      socket.on('message', (data, binary) => {
        if (!binary) {
          const text = String(data);
          fake.controls.push(text);
          if (JSON.parse(text).type === 'CloseStream') {
            send({ type: 'Metadata', request_id: 'fake', duration: at, channels: 1 });
            socket.close(1000);
          }
          return;
        }
        const bytes = new Uint8Array(data as Buffer);
        const pcm = mulaw ? mulawToPcm(bytes) : pcmFromBytes(bytes);
        const joined = new Int16Array(samples.length + pcm.length);
        joined.set(samples);
        joined.set(pcm, samples.length);
        samples = joined;
        const frame = (rate * FRAME_MS) / 1000;
        while (samples.length >= frame) {
          const level = rms(samples.subarray(0, frame));
          samples = samples.slice(frame);
          at += FRAME_MS / 1000;
          if (level > LEVEL) {
            if (speechFrom === null) {
              speechFrom = at - FRAME_MS / 1000;
              send({ type: 'SpeechStarted', channel: [0], timestamp: speechFrom });
            }
            lastVoice = at;
            if (at - lastInterim >= 0.4) {
              lastInterim = at;
              result((fake.script[0] ?? '').split(' ')[0] ?? '', speechFrom, at, false, false);
            }
          } else if (speechFrom !== null && at - lastVoice >= endpointing / 1000) {
            const text = fake.script.shift() ?? fake.fallback;
            result(text, speechFrom, lastVoice, true, true);
            if (text) send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: lastVoice });
            speechFrom = null;
            lastEmit = at;
          } else if (speechFrom === null && at - lastEmit >= 1) {
            result('', lastEmit, at, true, false);
            lastEmit = at;
          }
        }
      });
    },
  });
  return Object.assign(fake, server);
}
