import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { pcmFromBytes, rms } from '../../voice/audio/pcm';
import { hasSpeechServer, speechUrl } from '../support/speech';

// The local speech server (voice/speech-server) the global setup runs, with its real models: the Piper
// voice speaks, Whisper hears it back, Silero VAD and Smart Turn segment a stream. (Outside CI a machine
// without it skips this file; under CI the setup fails instead.)

type ListenEvent = { type: string; [key: string]: unknown };

const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .replace(/'/g, '')
    .split(/\s+/)
    .filter(Boolean);

/** Word error rate of `heard` against `said`. */
function wer(said: string, heard: string): number {
  const ref = words(said);
  const hyp = words(heard);
  let row = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const next = [i];
    for (let j = 1; j <= hyp.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    row = next;
  }
  return row[hyp.length]! / ref.length;
}

async function speak(body: Record<string, unknown>) {
  const response = await fetch(`${speechUrl()}/v1/speak`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { response, audio: Buffer.from(await response.arrayBuffer()) };
}

/** The index of the first 20 ms frame of PCM16 `audio` loud enough to hear (RMS at least 250, as the voice bench counts). */
function firstAudibleFrame(audio: Buffer, rate: number): number {
  const samples = pcmFromBytes(audio);
  const size = rate / 50;
  for (let frame = 0; frame * size < samples.length; frame++) {
    if (rms(samples.subarray(frame * size, (frame + 1) * size)) >= 250) return frame;
  }
  return -1;
}

/** Speech of `text` as PCM16 at `rate`, with `before` and `after` seconds of silence around it. */
async function spoken(text: string, rate: number, before = 0.5, after = 1.5): Promise<Buffer> {
  const { response, audio } = await speak({ text, voice: 'default', sample_rate: rate, speed: 1.0 });
  expect(response.status).toBe(200);
  return Buffer.concat([Buffer.alloc(Math.round(before * rate) * 2), audio, Buffer.alloc(Math.round(after * rate) * 2)]);
}

/** Streams `audio` in 20 ms frames and collects the events until `until` says stop (bounded by 60 s). */
async function listen(audio: Buffer, rate: number, until: (events: ListenEvent[]) => boolean, query = ''): Promise<ListenEvent[]> {
  const socket = new WebSocket(`${speechUrl().replace(/^http/, 'ws')}/v1/listen?sample_rate=${rate}&language=en${query}`);
  const events: ListenEvent[] = [];
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no end of listening within 60 s: ${JSON.stringify(events)}`)), 60_000);
    socket.on('message', (data) => {
      events.push(JSON.parse(String(data)) as ListenEvent);
      if (until(events)) {
        clearTimeout(timer);
        resolve();
      }
    });
    socket.once('error', reject);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const frame = (rate / 50) * 2;
  for (let i = 0; i < audio.length; i += frame) socket.send(audio.subarray(i, i + frame));
  try {
    await done;
  } finally {
    socket.close();
  }
  return events;
}

const turnCount = (n: number) => (events: ListenEvent[]) => events.filter((e) => e.type === 'turn').length >= n;

describe.skipIf(!hasSpeechServer())('the local speech server', () => {
  it('reports its models once they are loaded', async () => {
    const response = await fetch(`${speechUrl()}/health`);
    expect(response.status).toBe(200);
    const models = await response.json();
    expect(models).toEqual({ vad: 'silero-vad-6', stt: 'whisper-base', tts: 'en_US-joe-medium', turn: 'smart-turn-v3.2' });
  });

  it('speaks a sentence as PCM16 at the asked rate, and hears it back', async () => {
    const text = 'Thank you for calling. I can help you book a meeting or check the status of your order.';
    const { response, audio } = await speak({ text, voice: 'default', sample_rate: 16000, speed: 1.0 });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/L16;rate=16000;channels=1');
    expect(response.headers.get('x-voice')).toBe('en_US-joe-medium');
    const seconds = audio.length / 2 / 16000;
    expect(audio.length % 2).toBe(0);
    expect(seconds).toBeGreaterThan(3); // eighteen words: about 5 s spoken
    expect(seconds).toBeLessThan(9);

    // The voice's quiet onset is cut: the first word is heard within the first 20 ms frame or the next.
    expect(firstAudibleFrame(audio, 16000)).toBeLessThanOrEqual(1);

    const narrow = await speak({ text, voice: 'en_US-joe-medium', sample_rate: 8000, speed: 1.0 });
    expect(narrow.response.headers.get('content-type')).toBe('audio/L16;rate=8000;channels=1');
    expect(narrow.audio.length / 2 / 8000).toBeCloseTo(seconds, 0);
    const faster = await speak({ text, sample_rate: 8000, speed: 1.5 });
    expect(faster.audio.length).toBeLessThan(narrow.audio.length * 0.85);

    for (const rate of [16000, 8000] as const) {
      const body = rate === 16000 ? audio : narrow.audio;
      const heard = await fetch(`${speechUrl()}/v1/transcribe?sample_rate=${rate}`, { method: 'POST', body });
      expect(heard.status).toBe(200);
      const result = (await heard.json()) as { text: string; stt_ms: number };
      expect(wer(text, result.text), result.text).toBeLessThanOrEqual(0.2);
      expect(result.stt_ms).toBeGreaterThan(0);
    }
  });

  it('refuses what it cannot speak or hear with 400 and a detail', async () => {
    for (const body of [
      { text: '', sample_rate: 16000 },
      { text: '   ', sample_rate: 16000 },
      { text: 42 },
      { text: 'Hello.', sample_rate: 44100 },
      { text: 'Hello.', sample_rate: '16000' },
      { text: 'Hello.', voice: 'someone-else' },
      { text: 'Hello.', speed: 3 },
      { text: 'Hello.', speed: true },
      { text: 'x'.repeat(5001) },
    ]) {
      const { response, audio } = await speak(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(audio.toString())).toHaveProperty('detail');
    }
    const notJson = await fetch(`${speechUrl()}/v1/speak`, { method: 'POST', body: 'text=hello' });
    expect(notJson.status).toBe(400);
    for (const [path, body] of [
      ['/v1/transcribe?sample_rate=44100', Buffer.alloc(3200)],
      ['/v1/transcribe?sample_rate=16000', Buffer.alloc(0)],
      ['/v1/transcribe?sample_rate=16000', Buffer.alloc(3201)],
      ['/v1/transcribe?sample_rate=16000&language=xx', Buffer.alloc(3200)],
      ['/v1/turn?sample_rate=11025', Buffer.alloc(3200)],
    ] as const) {
      const response = await fetch(`${speechUrl()}${path}`, { method: 'POST', body });
      expect(response.status, path).toBe(400);
      expect(await response.json()).toHaveProperty('detail');
    }
    const tooLong = await fetch(`${speechUrl()}/v1/transcribe?sample_rate=8000`, { method: 'POST', body: Buffer.alloc(121 * 8000 * 2) });
    expect(tooLong.status).toBe(413);
    const upgrade = await fetch(`${speechUrl()}/v1/listen?sample_rate=44100`);
    expect(upgrade.status).toBe(400);
  });

  it('judges a turn on posted audio', async () => {
    const audio = await spoken('Can you send me the pricing by email?', 16000, 0, 0.3);
    const response = await fetch(`${speechUrl()}/v1/turn?sample_rate=16000`, { method: 'POST', body: audio });
    expect(response.status).toBe(200);
    const verdict = (await response.json()) as { complete: boolean; probability: number; turn_ms: number };
    expect(verdict.probability).toBeGreaterThanOrEqual(0);
    expect(verdict.probability).toBeLessThanOrEqual(1);
    expect(verdict.complete).toBe(verdict.probability >= 0.5);
    expect(verdict.turn_ms).toBeGreaterThanOrEqual(0);
  });

  it('segments a stream: speech_started, speech_stopped, transcript, then turn, at stream times', async () => {
    const text = 'Can you send me the pricing by email?';
    const audio = await spoken(text, 8000);
    const events = await listen(audio, 8000, turnCount(1));
    const types = events.filter((e) => e.type !== 'partial').map((e) => e.type);
    expect(types).toEqual(['speech_started', 'speech_stopped', 'transcript', 'turn']);
    const [started, stopped, transcript, turn] = events.filter((e) => e.type !== 'partial');
    const streamMs = (audio.length / 2 / 8000) * 1000;
    expect(started!.at_ms).toBeGreaterThanOrEqual(400); // 500 ms of silence first
    expect(started!.at_ms).toBeLessThan(900);
    expect(stopped!.at_ms).toBeGreaterThan(started!.at_ms as number);
    expect(stopped!.at_ms).toBeLessThan(streamMs - 1000); // 1.5 s of silence after
    expect(transcript).toMatchObject({ start_ms: started!.at_ms, end_ms: stopped!.at_ms });
    expect(wer(text, transcript!.text as string), transcript!.text as string).toBeLessThanOrEqual(0.2);
    expect(transcript!.stt_ms).toEqual(expect.any(Number));
    expect(turn).toMatchObject({ complete: expect.any(Boolean), probability: expect.any(Number), turn_ms: expect.any(Number) });
    for (const partial of events.filter((e) => e.type === 'partial')) {
      expect(events.indexOf(partial)).toBeGreaterThan(events.indexOf(started!));
      expect(events.indexOf(partial)).toBeLessThan(events.indexOf(stopped!));
    }
  });

  it('never drops a short "yes."', async () => {
    const events = await listen(await spoken('Yes.', 16000), 16000, turnCount(1), '&partials=0');
    const transcript = events.find((e) => e.type === 'transcript');
    expect(words(String(transcript?.text))).toEqual(['yes']);
  });

  it('serves two streams at once, each with its own transcript', async () => {
    const [first, second] = ['I want to cancel my subscription.', 'Is there a free trial?'];
    const [a, b] = await Promise.all([spoken(first, 8000), spoken(second, 16000)]);
    const [heardA, heardB] = await Promise.all([listen(a, 8000, turnCount(1)), listen(b, 16000, turnCount(1))]);
    const text = (events: ListenEvent[]) => String(events.find((e) => e.type === 'transcript')?.text);
    expect(wer(first, text(heardA)), text(heardA)).toBeLessThanOrEqual(0.2);
    expect(wer(second, text(heardB)), text(heardB)).toBeLessThanOrEqual(0.2);
  });

  it('sends partial transcripts only while they are asked for', async () => {
    const speech = await spoken('I would like to move my appointment from Thursday morning to Friday afternoon.', 16000);
    const socket = new WebSocket(`${speechUrl().replace(/^http/, 'ws')}/v1/listen?sample_rate=16000&partials=0`);
    const events: ListenEvent[] = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data)) as ListenEvent));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const turns = async (n: number) => {
      const deadline = Date.now() + 60_000;
      while (events.filter((e) => e.type === 'turn').length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    const play = async () => {
      for (let i = 0; i < speech.length; i += 640) {
        socket.send(speech.subarray(i, i + 640));
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await play();
    await turns(1);
    const partialsWhileOff = events.filter((e) => e.type === 'partial').length;
    socket.send(JSON.stringify({ type: 'partials', on: true }));
    await play();
    await turns(2);
    socket.close();
    expect(partialsWhileOff).toBe(0);
    expect(events.filter((e) => e.type === 'partial').length).toBeGreaterThan(0);
    expect(
      events
        .filter((e) => e.type === 'transcript')
        .map((e) => wer('I would like to move my appointment from Thursday morning to Friday afternoon.', String(e.text))),
    ).toSatisfy((errors: number[]) => errors.length === 2 && errors.every((x) => x <= 0.2));
  });

  it('forgets the speech buffered before a reset', async () => {
    const speech = await spoken('Please update my address to twelve Oak Street.', 16000, 0.5, 0);
    const socket = new WebSocket(`${speechUrl().replace(/^http/, 'ws')}/v1/listen?sample_rate=16000&partials=0`);
    const events: ListenEvent[] = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data)) as ListenEvent));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    // Half the sentence, a reset, a second of silence, then a whole short answer.
    socket.send(speech.subarray(0, speech.length / 2 - ((speech.length / 2) % 2)));
    socket.send(JSON.stringify({ type: 'reset' }));
    socket.send(Buffer.alloc(16000 * 2));
    socket.send(await spoken('Not right now.', 16000));
    const deadline = Date.now() + 60_000;
    while (!events.some((e) => e.type === 'turn') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    socket.send('not json');
    while (!events.some((e) => e.type === 'error') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    socket.close();
    const transcripts = events.filter((e) => e.type === 'transcript');
    expect(transcripts).toHaveLength(1);
    expect(words(String(transcripts[0]!.text))).toEqual(['not', 'right', 'now']);
    // The forgotten speech's start may have been told before the reset; it is never stopped or transcribed.
    expect(events.filter((e) => e.type === 'speech_stopped')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'error', detail: expect.any(String) });
  });
});
