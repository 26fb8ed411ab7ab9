import { execFile } from 'node:child_process';
import { pcmFromBytes, pcmToBytes } from '../../../voice/audio/pcm';
import { readWav, resample } from './pcm';

// What the simulated caller says and understands: sentences synthesized by the speech server
// (POST /v1/speak at 8 kHz) or, without one, by espeak-ng (22.05 kHz WAV on stdout, resampled here:
// no other tool needed), and agent audio transcribed by the speech server (POST /v1/transcribe).

export const CALLER_RATE = 8000;

export type SpeechSource = { speechBaseUrl: string } | { espeak: true };

const cache = new Map<string, Promise<Int16Array>>();

/** A sentence as PCM16 at 8 kHz; the same text from the same source is synthesized once per process. */
export function synthesize(text: string, source: SpeechSource, options: { voice?: string; timeoutMs?: number } = {}): Promise<Int16Array> {
  const key = `${'speechBaseUrl' in source ? source.speechBaseUrl : 'espeak'}\u0000${options.voice ?? ''}\u0000${text}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = 'speechBaseUrl' in source ? speakWithServer(text, source.speechBaseUrl, options) : speakWithEspeak(text, options.timeoutMs);
    // A failure is not kept: the next call tries again.
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

async function speakWithServer(text: string, baseUrl: string, options: { voice?: string; timeoutMs?: number }): Promise<Int16Array> {
  const res = await fetch(new URL('/v1/speak', baseUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ text, sample_rate: CALLER_RATE, ...(options.voice ? { voice: options.voice } : {}) }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  if (!res.ok) throw new Error(`speech server /v1/speak answered ${res.status}: ${await res.text()}`);
  const rate = Number(/rate=(\d+)/.exec(res.headers.get('content-type') ?? '')?.[1] ?? CALLER_RATE);
  const pcm = pcmFromBytes(new Uint8Array(await res.arrayBuffer()));
  return resample(pcm, rate, CALLER_RATE);
}

function speakWithEspeak(text: string, timeoutMs = 30_000): Promise<Int16Array> {
  return new Promise((resolve, reject) => {
    execFile(
      'espeak-ng',
      ['-v', 'en-us', '--stdout', text],
      { encoding: 'buffer', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => {
        if (error) return reject(new Error(`espeak-ng failed: ${error.message}`));
        try {
          const wav = readWav(stdout);
          resolve(resample(wav.pcm, wav.sampleRate, CALLER_RATE));
        } catch (e) {
          reject(e);
        }
      },
    );
  });
}

/** The speech server's transcript of PCM16 audio at 8 kHz. */
export async function transcribe(pcm: Int16Array, speechBaseUrl: string, timeoutMs = 30_000): Promise<{ text: string; sttMs: number }> {
  const res = await fetch(new URL(`/v1/transcribe?sample_rate=${CALLER_RATE}`, speechBaseUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream' },
    body: pcmToBytes(pcm),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`speech server /v1/transcribe answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { text: string; stt_ms?: number };
  return { text: body.text, sttMs: body.stt_ms ?? 0 };
}
