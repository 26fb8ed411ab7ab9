import { randomUUID } from 'node:crypto';
import { mulawToPcm } from '../audio/mulaw';
import { pcmFromBytes } from '../audio/pcm';
import { fromBase64, openProviderSocket, wsBase } from './provider-socket';
import { streamedAudio } from './streamed-audio';
import type { SpeechVoice } from './types';

// Cartesia's streaming speech (WebSocket /tts/websocket), one socket and one context per sentence: the
// generation request with the voice by id and raw output (μ-law at 8 kHz, PCM16 otherwise) at the call's
// rate; `chunk` messages carry base64 audio until `done`, an `error` ends it.

export interface CartesiaOptions {
  baseUrl: string;
  apiKey: string;
  version: string;
  model: string;
  language: string;
  connectTimeoutMs: number;
  firstResultMs: number;
}

const IDLE_MS = 10_000;

export function cartesiaVoice(options: CartesiaOptions): SpeechVoice {
  return {
    name: `cartesia:${options.model}`,
    async *speak(text, { sampleRate, voice, signal }) {
      const query = new URLSearchParams({ api_key: options.apiKey, cartesia_version: options.version });
      const socket = await openProviderSocket(
        `${wsBase(options.baseUrl)}/tts/websocket?${query}`,
        {},
        options.connectTimeoutMs,
        'cartesia',
      );
      const encoding = sampleRate === 8000 ? 'pcm_mulaw' : 'pcm_s16le';
      const contextId = randomUUID();
      socket.send(
        JSON.stringify({
          model_id: options.model,
          transcript: text.trim(),
          voice: { mode: 'id', id: voice },
          language: options.language,
          output_format: { container: 'raw', encoding, sample_rate: sampleRate },
          context_id: contextId,
          continue: false,
        }),
      );
      yield* streamedAudio(
        socket,
        {
          read(message) {
            const body = JSON.parse(message) as {
              type?: string;
              data?: string;
              done?: boolean;
              context_id?: string;
              error?: string;
              message?: string;
              title?: string;
            };
            if (body.context_id && body.context_id !== contextId) return { audio: null, done: false };
            if (body.type === 'error') throw new Error(`cartesia: ${body.message ?? body.error ?? body.title ?? 'error'}`);
            const bytes = body.type === 'chunk' && body.data ? fromBase64(body.data) : null;
            const audio = bytes ? (encoding === 'pcm_mulaw' ? mulawToPcm(bytes) : pcmFromBytes(bytes)) : null;
            return { audio, done: body.type === 'done' || body.done === true };
          },
        },
        { firstMs: options.firstResultMs, idleMs: IDLE_MS, what: 'cartesia' },
        signal,
      );
    },
  };
}
