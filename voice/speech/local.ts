import WebSocket from 'ws';
import { pcmFromBytes, pcmToBytes } from '../audio/pcm';
import type { ListenEvent, ListenSession, Recognizer, SpeechStack, SpeechVoice, TurnModel } from './types';

// The local speech models, served by the speech server (voice/speech-server/, SPEECH_BASE_URL): a
// WebSocket per listening session, HTTP streams for speech, plain posts for turns and transcripts.

const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;

export interface LocalSpeechInfo {
  vad: string;
  stt: string;
  tts: string;
  turn: string | null;
}

export async function localSpeechInfo(baseUrl: string, signal = AbortSignal.timeout(CONNECT_TIMEOUT_MS)): Promise<LocalSpeechInfo> {
  const response = await fetch(new URL('/health', baseUrl), { signal });
  if (!response.ok) throw new Error(`the speech server answered ${response.status}`);
  return (await response.json()) as LocalSpeechInfo;
}

function deadline(signal: AbortSignal | undefined): AbortSignal {
  const bound = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  return signal ? AbortSignal.any([signal, bound]) : bound;
}

class LocalListenSession implements ListenSession {
  readonly closed: Promise<void>;
  constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }
  write(samples: Int16Array): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(pcmToBytes(samples));
  }
  partials(on: boolean): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'partials', on }));
  }
  reset(): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'reset' }));
  }
  close(): void {
    this.socket.close();
  }
}

export function localRecognizer(baseUrl: string, name: string): Recognizer {
  return {
    name,
    listen({ sampleRate, language, onEvent }) {
      const url = new URL(`/v1/listen?sample_rate=${sampleRate}&partials=0&language=${encodeURIComponent(language.slice(0, 2))}`, baseUrl);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      const socket = new WebSocket(url, { handshakeTimeout: CONNECT_TIMEOUT_MS });
      socket.on('message', (data, binary) => {
        if (binary) return;
        try {
          onEvent(JSON.parse(String(data)) as ListenEvent);
        } catch {
          // A malformed event is dropped: the next transcript carries the speech again.
        }
      });
      return new Promise((resolve, reject) => {
        socket.once('open', () => resolve(new LocalListenSession(socket)));
        socket.once('error', reject);
      });
    },
    async transcribe(samples, sampleRate, signal) {
      const response = await fetch(new URL(`/v1/transcribe?sample_rate=${sampleRate}`, baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: pcmToBytes(samples),
        signal: deadline(signal),
      });
      if (!response.ok) throw new Error(`the speech server answered ${response.status} to a transcription`);
      return (await response.json()) as { text: string; stt_ms: number };
    },
  };
}

export function localVoice(baseUrl: string, name: string): SpeechVoice {
  return {
    name,
    async *speak(text, { sampleRate, speed, signal }) {
      const response = await fetch(new URL('/v1/speak', baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // A provider's voice id means nothing to the local voice: it speaks with its own.
        body: JSON.stringify({ text, voice: 'default', sample_rate: sampleRate, speed }),
        signal: deadline(signal),
      });
      if (!response.ok || !response.body) throw new Error(`the speech server answered ${response.status} to speech`);
      let carry: Uint8Array = new Uint8Array(0);
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        const even = bytes.length - (bytes.length % 2);
        carry = bytes.subarray(even);
        if (even) yield pcmFromBytes(bytes.subarray(0, even));
      }
    },
  };
}

export function localTurnModel(baseUrl: string, name: string): TurnModel {
  return {
    name,
    async judge(samples, sampleRate, signal) {
      const response = await fetch(new URL(`/v1/turn?sample_rate=${sampleRate}`, baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: pcmToBytes(samples),
        signal: deadline(signal),
      });
      if (!response.ok) throw new Error(`the speech server answered ${response.status} to a turn`);
      return (await response.json()) as { complete: boolean; probability: number | null; turn_ms: number };
    },
  };
}

/** The local stack, named by the models the speech server reports. */
export async function localSpeechStack(baseUrl: string): Promise<SpeechStack> {
  const info = await localSpeechInfo(baseUrl);
  return {
    recognizer: localRecognizer(baseUrl, `local:${info.stt}`),
    voice: localVoice(baseUrl, `local:${info.tts}`),
    turn: localTurnModel(baseUrl, `local:${info.turn ?? 'vad-silence'}`),
  };
}
