// PCM16 little-endian mono: the audio every stage of the pipeline passes along.

/** Samples of a little-endian PCM16 buffer (copied: a Buffer's offset may not be 2-aligned). */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const even = bytes.length - (bytes.length % 2);
  const out = new Int16Array(even / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, even);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export function pcmToBytes(samples: Int16Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/** Root mean square level in [0, 32768): what tells audible audio from line noise. */
export function rms(samples: Int16Array): number {
  if (!samples.length) return 0;
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / samples.length);
}

export const durationMs = (samples: number, sampleRate: number): number => (samples * 1000) / sampleRate;

/** A WAV file (RIFF, PCM16) of one or two channels, interleaving the channels sample by sample. */
export function wavFile(channels: Int16Array[], sampleRate: number): Buffer {
  const frames = Math.max(...channels.map((c) => c.length));
  const data = Buffer.alloc(frames * channels.length * 2);
  for (let i = 0; i < frames; i++)
    for (let c = 0; c < channels.length; c++) data.writeInt16LE(channels[c]![i] ?? 0, (i * channels.length + c) * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels.length, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels.length * 2, 28);
  header.writeUInt16LE(channels.length * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
