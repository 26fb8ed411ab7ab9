import { describe, expect, it } from 'vitest';
import { MULAW_SILENCE, mulawToPcm, pcmToMulaw } from '../../voice/audio/mulaw';
import { rms } from '../../voice/audio/pcm';
import { readWav, resample, tone } from '../support/voice/pcm';

// The simulated caller's audio arithmetic: what it sends is what it meant to say.

/** The amplitude of one frequency in the signal (a single-bin DFT). */
function amplitudeAt(pcm: Int16Array, hz: number, rate: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < pcm.length; i++) {
    re += pcm[i]! * Math.cos((2 * Math.PI * hz * i) / rate);
    im -= pcm[i]! * Math.sin((2 * Math.PI * hz * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / pcm.length;
}

// The simulated caller encodes and decodes with the engine's own G.711 (voice/audio/mulaw.ts): checked
// here against the standard's table, since every level and latency the caller reports rests on it.
describe('G.711 μ-law', () => {
  const encode = (sample: number) => pcmToMulaw(Int16Array.of(sample))[0]!;
  const decode = (byte: number) => mulawToPcm(Uint8Array.of(byte))[0]!;

  it('encodes silence as 0xFF and known values as the standard table does', () => {
    expect(encode(0)).toBe(MULAW_SILENCE);
    expect(decode(0xff)).toBe(0);
    expect(decode(0x7f)).toBe(0);
    expect(encode(32767)).toBe(0x80);
    expect(encode(-32768)).toBe(0x00);
    expect(decode(0x80)).toBe(32124);
    expect(decode(0x00)).toBe(-32124);
  });

  it('round-trips every code, and samples within the quantization step of their segment', () => {
    for (let b = 0; b < 256; b++) {
      if (b === 0x7f) continue; // −0 decodes to 0, which encodes as +0
      expect(encode(decode(b))).toBe(b);
    }
    for (let s = -32000; s <= 32000; s += 37) expect(Math.abs(decode(encode(s)) - s)).toBeLessThanOrEqual(Math.max(4, Math.abs(s) / 16));
    expect(mulawToPcm(pcmToMulaw(tone(100)))).toHaveLength(800);
  });
});

describe('WAV reading and resampling', () => {
  it('reads a WAV written to a pipe (data size unknown) and keeps a tone through 22.05 kHz → 8 kHz', () => {
    const source = tone(1000, { hz: 1000, amplitude: 10_000, sampleRate: 22050 });
    const header = Buffer.alloc(44);
    header.write('RIFF', 0);
    header.writeUInt32LE(0xffffffff, 4);
    header.write('WAVEfmt ', 8);
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(22050, 24);
    header.writeUInt32LE(44100, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36);
    header.writeUInt32LE(0xffffffff, 40);
    const wav = readWav(Buffer.concat([header, Buffer.from(source.buffer)]));
    expect(wav.sampleRate).toBe(22050);
    expect(wav.pcm).toEqual(source);

    const down = resample(wav.pcm, 22050, 8000);
    expect(down.length).toBe(Math.floor(22050 / (22050 / 8000)));
    const middle = down.subarray(400, 7600);
    expect(amplitudeAt(middle, 1000, 8000)).toBeGreaterThan(9_500);
    expect(amplitudeAt(middle, 1000, 8000)).toBeLessThan(10_500);
  });

  it('filters what 8 kHz cannot carry instead of folding it back (a 6 kHz tone would alias to 2 kHz)', () => {
    const high = resample(tone(1000, { hz: 6000, amplitude: 10_000, sampleRate: 22050 }), 22050, 8000);
    expect(rms(high.subarray(400, 7600))).toBeLessThan(200);
    expect(amplitudeAt(high.subarray(400, 7600), 2000, 8000)).toBeLessThan(100);
  });
});
