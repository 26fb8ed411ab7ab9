// G.711 μ-law, the encoding of Twilio Media Streams (8 kHz, 8 bits a sample): PCM16 in, bytes out and back.

const BIAS = 0x84;
const CLIP = 32635;

const DECODE = new Int16Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff;
  const exponent = (u >> 4) & 0x07;
  const sample = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  DECODE[i] = u & 0x80 ? -sample : sample;
}

function encodeSample(pcm: number): number {
  const sign = pcm < 0 ? 0x80 : 0;
  let magnitude = Math.min(Math.abs(pcm), CLIP) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  magnitude = ~(sign | (exponent << 4) | mantissa) & 0xff;
  return magnitude;
}

/** μ-law bytes → PCM16 samples. */
export function mulawToPcm(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE[bytes[i]!]!;
  return out;
}

/** PCM16 samples → μ-law bytes. */
export function pcmToMulaw(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encodeSample(samples[i]!);
  return out;
}

/** The μ-law byte of silence. */
export const MULAW_SILENCE = 0xff;
