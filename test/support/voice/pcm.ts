import { pcmFromBytes } from '../../../voice/audio/pcm';

// What the simulated caller needs beside the engine's audio helpers (voice/audio): WAV reading
// (espeak-ng's --stdout), resampling to the telephone rate, test tones.

/** The samples and rate of a mono 16-bit PCM WAV file (espeak-ng writes a data size of 0 or ~0 on a pipe: read to the end). */
export function readWav(wav: Buffer): { sampleRate: number; pcm: Int16Array } {
  if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let sampleRate = 0;
  let channels = 1;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      const format = wav.readUInt16LE(body);
      channels = wav.readUInt16LE(body + 2);
      sampleRate = wav.readUInt32LE(body + 4);
      const bits = wav.readUInt16LE(body + 14);
      if (format !== 1 || bits !== 16) throw new Error(`WAV format ${format}/${bits} bits: only PCM16 is read`);
    } else if (id === 'data') {
      const end = size === 0 || body + size > wav.length ? wav.length : body + size;
      const mono = pcmFromBytes(wav.subarray(body, end - ((end - body) % 2)));
      if (channels === 1) return { sampleRate, pcm: mono };
      return { sampleRate, pcm: mono.filter((_, i) => i % channels === 0) };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV file without a data chunk');
}

/**
 * Band-limited resampling by a Blackman-windowed sinc (cut-off just under the lower Nyquist rate), so a
 * 22.05 kHz voice comes down to 8 kHz without aliasing; slow next to a polyphase filter, plenty for sentences.
 */
export function resample(pcm: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return pcm;
  const ratio = fromRate / toRate;
  const cutoff = 0.95 * Math.min(1, toRate / fromRate); // of the input's Nyquist frequency
  const half = Math.ceil(16 / cutoff); // taps either side, in input samples
  const out = new Int16Array(Math.floor(pcm.length / ratio));
  for (let i = 0; i < out.length; i++) {
    const center = i * ratio;
    const first = Math.max(0, Math.ceil(center - half));
    const last = Math.min(pcm.length - 1, Math.floor(center + half));
    let sum = 0;
    let norm = 0;
    for (let j = first; j <= last; j++) {
      const x = j - center;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
      const w = 0.42 + 0.5 * Math.cos((Math.PI * x) / half) + 0.08 * Math.cos((2 * Math.PI * x) / half);
      const h = sinc * w;
      sum += pcm[j]! * h;
      norm += h;
    }
    out[i] = Math.max(-32768, Math.min(32767, Math.round(norm ? sum / norm : 0)));
  }
  return out;
}

/** A sine tone, for tests that need audible audio without a voice. */
export function tone(ms: number, options: { hz?: number; amplitude?: number; sampleRate?: number } = {}): Int16Array {
  const rate = options.sampleRate ?? 8000;
  const hz = options.hz ?? 440;
  const amplitude = options.amplitude ?? 8000;
  return Int16Array.from({ length: Math.round((ms * rate) / 1000) }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)),
  );
}
