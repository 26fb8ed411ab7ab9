import { mulawToPcm } from '../audio/mulaw';
import { pcmFromBytes } from '../audio/pcm';
import { fromBase64, openProviderSocket, wsBase } from './provider-socket';
import { streamedAudio } from './streamed-audio';
import type { SpeechVoice } from './types';

// ElevenLabs' streaming speech (WebSocket /v1/text-to-speech/{voice_id}/stream-input), one socket per
// sentence: the opening message with the voice's settings, the sentence flushed, the empty text that
// ends the input; audio comes back base64 in `audio` (μ-law at 8 kHz, PCM16 otherwise) until `isFinal`.

export interface ElevenLabsOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  stability?: number;
  similarityBoost?: number;
  connectTimeoutMs: number;
  firstResultMs: number;
}

const PCM_RATES = new Set([16_000, 22_050, 24_000, 44_100]);
/** Between two chunks of one sentence. */
const IDLE_MS = 10_000;

function outputFormat(sampleRate: number): string {
  if (sampleRate === 8000) return 'ulaw_8000';
  if (PCM_RATES.has(sampleRate)) return `pcm_${sampleRate}`;
  throw new Error(`elevenlabs has no output at ${sampleRate} Hz`);
}

export function elevenLabsVoice(options: ElevenLabsOptions): SpeechVoice {
  return {
    name: `elevenlabs:${options.model}`,
    async *speak(text, { sampleRate, voice, speed, signal }) {
      const format = outputFormat(sampleRate);
      const query = new URLSearchParams({ model_id: options.model, output_format: format });
      const socket = await openProviderSocket(
        `${wsBase(options.baseUrl)}/v1/text-to-speech/${encodeURIComponent(voice)}/stream-input?${query}`,
        { 'xi-api-key': options.apiKey },
        options.connectTimeoutMs,
        'elevenlabs',
      );
      const settings: Record<string, number> = { speed: Math.min(1.2, Math.max(0.7, speed)) };
      if (options.stability !== undefined) settings.stability = options.stability;
      if (options.similarityBoost !== undefined) settings.similarity_boost = options.similarityBoost;
      socket.send(JSON.stringify({ text: ' ', voice_settings: settings }));
      // A whole sentence is known: generate it now rather than wait for the provider's chunk schedule.
      socket.send(JSON.stringify({ text: `${text.trim()} `, try_trigger_generation: true, flush: true }));
      socket.send(JSON.stringify({ text: '' }));
      yield* streamedAudio(
        socket,
        {
          read(message) {
            const body = JSON.parse(message) as { audio?: string | null; isFinal?: boolean | null; error?: string; message?: string };
            if (body.error || (body.message && body.audio === undefined)) throw new Error(`elevenlabs: ${body.message ?? body.error}`);
            const bytes = body.audio ? fromBase64(body.audio) : null;
            const audio = bytes ? (format === 'ulaw_8000' ? mulawToPcm(bytes) : pcmFromBytes(bytes)) : null;
            return { audio, done: body.isFinal === true };
          },
        },
        { firstMs: options.firstResultMs, idleMs: IDLE_MS, what: 'elevenlabs' },
        signal,
      );
    },
  };
}
