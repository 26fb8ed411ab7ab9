import { pcmFromBytes } from '../audio/pcm';

// The caller's side of a recording: a WAV file (PCM16, one channel mixed or two with the caller first,
// as voice/audio/recorder.ts writes it) read back, and a caller turn's slice of it.

export interface CallerTrack {
  sampleRate: number;
  samples: Int16Array;
}

/** The caller channel of a dual-channel WAV; null for a mono one (the agent is mixed in) or an unreadable file. */
export function callerTrack(wav: Buffer): CallerTrack | null {
  if (wav.length < 44 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      channels = wav.readUInt16LE(body + 2);
      sampleRate = wav.readUInt32LE(body + 4);
      bits = wav.readUInt16LE(body + 14);
    } else if (id === 'data') {
      if (channels !== 2 || bits !== 16 || !sampleRate) return null;
      const all = pcmFromBytes(wav.subarray(body, Math.min(wav.length, body + size)));
      const samples = new Int16Array(Math.floor(all.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = all[i * 2]!;
      return { sampleRate, samples };
    }
    offset = body + size + (size % 2);
  }
  return null;
}

/** Around a turn's recognized span: the recognizer's times trim a word's first and last sounds. */
const LEAD_MS = 200;
const TAIL_MS = 300;

/** The caller's audio between two times of the conversation (ms since its start); null when that span holds nothing. */
export function sliceTurn(track: CallerTrack, startedMs: number | null, endedMs: number | null): Int16Array | null {
  if (startedMs === null || endedMs === null || endedMs <= startedMs) return null;
  const at = (ms: number) => Math.max(0, Math.min(track.samples.length, Math.round((ms * track.sampleRate) / 1000)));
  const slice = track.samples.subarray(at(startedMs - LEAD_MS), at(endedMs + TAIL_MS));
  return slice.length ? slice : null;
}
