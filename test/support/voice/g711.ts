// G.711 μ-law, as Twilio Media Streams carry it (8 kHz, one byte a sample).
// A stand-in kept private to the test harness until the engine's voice/audio/mulaw.ts is committed; the
// names and shapes are that module's (pcmToMulaw, mulawToPcm, MULAW_SILENCE), so the switch is one import.

const BIAS = 0x84;
const CLIP = 32635;

/** One PCM16 sample to its μ-law byte (the ITU-T G.711 table, written out as the classic Sun code does). */
export function mulawFromLinear(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** One μ-law byte to its PCM16 sample. */
export function linearFromMulaw(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  // −0 (0x7F) is plain 0, as in the engine's table.
  return u & 0x80 && magnitude ? -magnitude : magnitude;
}

const DECODE = Int16Array.from({ length: 256 }, (_, b) => linearFromMulaw(b));

export function pcmToMulaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = mulawFromLinear(pcm[i]!);
  return out;
}

export function mulawToPcm(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE[bytes[i]!]!;
  return out;
}

/** The μ-law byte of digital silence (+0), what Twilio sends when nobody speaks. */
export const MULAW_SILENCE = 0xff;
