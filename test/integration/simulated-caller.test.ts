import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MULAW_SILENCE, mulawToPcm, pcmToMulaw } from '../../voice/audio/mulaw';
import { rms } from '../../voice/audio/pcm';
import { speechUrl } from '../support/speech';
import { tone } from '../support/voice/pcm';
import { SimulatedCaller } from '../support/voice/simulated-caller';
import { startStubMediaServer, type StubConnection } from '../support/voice/stub-media-server';

// The simulated caller is the yardstick of the voice runtime's tests and bench: it must pace its frames,
// play the engine's audio, echo marks and obey clears exactly as Twilio does, and measure latency right.
// Here it talks to a tiny Media Stream server whose timing is known.

const AUDIBLE = 250;
const ms = (bytes: number) => bytes / 8;
const mulaw = (pcm: Int16Array) => Buffer.from(pcmToMulaw(pcm));
const audible = (payload: string) => rms(mulawToPcm(Buffer.from(payload, 'base64'))) >= AUDIBLE;

/** Milliseconds per frame by least squares over arrival times: a stall of the machine moves a few frames, not the rate. */
function msPerFrame(times: number[]): number {
  const n = times.length;
  const meanX = (n - 1) / 2;
  const meanY = times.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  times.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return num / den;
}

async function poll<T>(check: () => T | undefined | false, timeoutMs = 10_000, what = 'the condition'): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * An agent that answers each caller utterance with the same audio, `delayMs` after the caller's last audible
 * frame arrived; the utterance ends at `hangMs` of silence (speech has pauses between words, a tone none).
 */
function replyAfter(c: StubConnection, delayMs: () => number, hangMs = 0) {
  let heard: Buffer[] = [];
  let lastAudibleAt = 0;
  c.socket.on('message', (data) => {
    const body = JSON.parse(String(data));
    if (body.event !== 'media') return;
    if (audible(body.media.payload)) {
      heard.push(Buffer.from(body.media.payload, 'base64'));
      lastAudibleAt = performance.now();
    } else if (heard.length && performance.now() - lastAudibleAt >= hangMs) {
      const reply = Buffer.concat(heard);
      heard = [];
      setTimeout(() => c.sendMedia(reply), lastAudibleAt + delayMs() - performance.now());
    }
  });
}

describe('simulated caller against a stub Media Stream server', () => {
  let server: Awaited<ReturnType<typeof startStubMediaServer>>;
  const onConnection: { next?: (c: StubConnection) => void } = {};
  const callers: SimulatedCaller[] = [];
  const connect = async (options: Partial<Parameters<typeof SimulatedCaller.connect>[0]> = {}) => {
    const caller = await SimulatedCaller.connect({ url: server.url, token: 'tok-1', audibleRms: AUDIBLE, ...options });
    callers.push(caller);
    const conn = await poll(
      () => server.connections.find((c) => c.messages.some((m) => m.body.streamSid === caller.streamSid)),
      5_000,
      'start',
    );
    return { caller, conn };
  };

  beforeAll(async () => {
    server = await startStubMediaServer((c) => onConnection.next?.(c));
  });
  afterAll(async () => {
    await Promise.all(callers.map((c) => c.hangUp().catch(() => {})));
    await server.close();
  });

  it('starts the stream as Twilio does and sends 20 ms frames in real time, silence when nothing is said', async () => {
    const { caller, conn } = await connect({ customParameters: { campaign: 'c1' } });
    expect(conn.path).toBe('/twilio/media-stream');
    const [connected, start] = conn.messages;
    expect(connected!.body).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    expect(start!.body).toEqual({
      event: 'start',
      sequenceNumber: '1',
      streamSid: caller.streamSid,
      start: {
        accountSid: caller.accountSid,
        streamSid: caller.streamSid,
        callSid: caller.callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: { campaign: 'c1', token: 'tok-1' },
      },
    });
    expect(caller.streamSid).toMatch(/^MZ[0-9a-f]{32}$/);
    expect(caller.callSid).toMatch(/^CA[0-9a-f]{32}$/);

    const media = () => conn.messages.filter((m) => m.event === 'media');
    await poll(() => media().length >= 161, 10_000, '161 frames');
    const frames = media().slice(0, 161);
    frames.forEach((m, i) => {
      expect(m.body.sequenceNumber).toBe(String(i + 2));
      expect(m.body.streamSid).toBe(caller.streamSid);
      expect(m.body.media).toMatchObject({ track: 'inbound', chunk: String(i + 1), timestamp: String(i * 20) });
      const bytes = Buffer.from(m.body.media.payload, 'base64');
      expect(bytes.length).toBe(160);
      expect(bytes.every((b) => b === MULAW_SILENCE)).toBe(true);
    });
    // 3 s of frames arrive at one every 20 ms of wall time (±10 %), and over 3 s of it.
    const rate = msPerFrame(frames.slice(10).map((m) => m.at));
    expect(rate).toBeGreaterThan(18);
    expect(rate).toBeLessThan(22);
    expect(frames[160]!.at - frames[10]!.at).toBeGreaterThan(3000 * 0.9);
    expect(frames[160]!.at - frames[10]!.at).toBeLessThan(3000 * 1.1);

    // A sentence: its 1 s goes out as 50 consecutive audible frames, on the same grid, then silence again.
    const before = media().length;
    const spoken = await caller.say(tone(1000));
    await poll(() => media().length >= before + 80, 5_000, 'frames after the sentence');
    const after = media().slice(before);
    const loud = after.map((m) => audible(m.body.media.payload));
    const first = loud.indexOf(true);
    expect(loud.slice(first, first + 50).every(Boolean)).toBe(true);
    expect(loud.slice(first + 50).some(Boolean)).toBe(false);
    expect(spoken.firstAudibleAt).toBeLessThan(spoken.lastAudibleAt!);
    expect(caller.sentences.at(-1)).toMatchObject({ text: null, turn: true, durationMs: 1000 });
  });

  it('plays received audio at 8,000 bytes a second and echoes each mark once the audio before it has played, in order', async () => {
    const { caller, conn } = await connect();
    const sentAt = performance.now();
    conn.sendMedia(mulaw(tone(1000)));
    conn.sendMark('a');
    conn.sendMedia(mulaw(tone(500, { hz: 660 })));
    conn.sendMark('b');
    conn.sendMark('c');
    const echoes = () => conn.messages.filter((m) => m.event === 'mark');
    await poll(() => echoes().length === 3, 5_000, 'three mark echoes');
    expect(echoes().map((m) => m.body.mark.name)).toEqual(['a', 'b', 'c']);
    expect(echoes()[0]!.body).toEqual({
      event: 'mark',
      sequenceNumber: expect.stringMatching(/^\d+$/),
      streamSid: caller.streamSid,
      mark: { name: 'a' },
    });
    // Timed from when the caller began playing (a stall of the machine before the audio arrived is not the caller's pace).
    const playedFrom = caller.heardSegments[0]!.startAt;
    expect(playedFrom - sentAt).toBeLessThan(300);
    const [a, b, c] = echoes().map((m) => m.at - playedFrom);
    expect(a).toBeGreaterThan(900);
    expect(a).toBeLessThan(1100);
    expect(b).toBeGreaterThan(1350);
    expect(b).toBeLessThan(1650);
    expect(c! - b!).toBeLessThan(20);
    // Sequence numbers keep counting across media and marks.
    const sequence = conn.messages.slice(1).map((m) => Number(m.body.sequenceNumber));
    expect(sequence).toEqual(sequence.map((_, i) => i + 1));

    // The timeline: 1.5 s of audio from the moment it arrived, silence elsewhere.
    const played = caller.heardSegments.reduce((sum, s) => sum + ms(s.bytes.length), 0);
    expect(played).toBe(1500);
    const heard = caller.heardAudio();
    const startIndex = Math.round((caller.heardSegments[0]!.startAt - caller.openedAt) * 8);
    expect(heard.subarray(0, startIndex).every((b) => b === MULAW_SILENCE)).toBe(true);
    expect(heard.subarray(startIndex, startIndex + 12000)).toEqual(Buffer.concat(caller.heardSegments.map((s) => s.bytes)));

    // A mark with nothing queued comes back at once.
    const lone = performance.now();
    conn.sendMark('idle');
    await poll(() => echoes().length === 4, 2_000, 'the idle mark');
    expect(echoes()[3]!.body.mark.name).toBe('idle');
    expect(echoes()[3]!.at - lone).toBeLessThan(100);
  });

  it('on clear stops at once, drops the queue and echoes the pending marks in order; audio after it plays at once', async () => {
    const { caller, conn } = await connect();
    const sentAt = performance.now();
    conn.sendMedia(mulaw(tone(2000)));
    conn.sendMark('m1');
    conn.sendMedia(mulaw(tone(1000)));
    conn.sendMark('m2');
    await caller.until(() => performance.now() - sentAt >= 500, 2_000, '500 ms of playback');
    const clearAt = performance.now();
    conn.sendClear();
    const echoes = () => conn.messages.filter((m) => m.event === 'mark');
    await poll(() => echoes().length === 2, 2_000, 'the pending marks');
    expect(echoes().map((m) => m.body.mark.name)).toEqual(['m1', 'm2']);
    expect(echoes()[1]!.at - clearAt).toBeLessThan(100);
    expect(caller.clears).toHaveLength(1);
    expect(caller.clears[0]!.marks).toEqual(['m1', 'm2']);
    // Cut at the instant the clear came: what played is the time from the start to it, the rest is dropped.
    const { at: clearedAt, droppedMs } = caller.clears[0]!;
    const playedMs = clearedAt - caller.heardSegments[0]!.startAt;
    expect(droppedMs).toBeGreaterThan(2500 * 0.9);
    expect(droppedMs).toBeLessThan(2500 * 1.1);
    expect(caller.playing).toBe(false);
    const heardMs = caller.heardSegments.reduce((sum, s) => sum + ms(s.bytes.length), 0);
    expect(Math.abs(heardMs - playedMs)).toBeLessThan(1);
    expect(heardMs + droppedMs).toBeCloseTo(3000, 0);

    // The cut utterance ends where the clear cut it, and it says it was cleared.
    const utterance = await caller.hear({ timeoutMs: 3_000 });
    expect(utterance.clears).toHaveLength(1);
    expect(Math.abs(utterance.endedAt - clearAt)).toBeLessThan(30);

    const resumeAt = performance.now();
    conn.sendMedia(mulaw(tone(200)));
    conn.sendMark('m3');
    await poll(() => echoes().length === 3, 2_000, 'm3');
    expect(echoes()[2]!.at - resumeAt).toBeGreaterThan(180);
    expect(echoes()[2]!.at - resumeAt).toBeLessThan(240);
  });

  it('measures voice-to-voice latency from its last audible frame to the agent first audible frame', async () => {
    const delays = [700, 300, 1000];
    let turn = 0;
    onConnection.next = (c) => replyAfter(c, () => delays[turn]!);
    const { caller, conn } = await connect();
    onConnection.next = undefined;
    for (const [i, delay] of delays.entries()) {
      turn = i;
      const spoken = await caller.say(tone(400 + i * 100));
      const utterance = await caller.hear({ timeoutMs: 5_000 });
      expect(utterance.answers).toEqual(spoken);
      expect(Math.abs(utterance.latencyMs! - delay), `turn ${i}: ${utterance.latencyMs} for ${delay}`).toBeLessThan(30);
      // The same instant read off the heard timeline, as the bench reads it.
      expect(caller.firstAudibleAfter(spoken.lastAudibleAt!)).toBe(utterance.startedAt);
      expect(utterance.durationMs).toBeGreaterThan((400 + i * 100) * 0.9);
      expect(utterance.durationMs).toBeLessThan((400 + i * 100) * 1.1 + 20);
      // What was heard is what was said (echoed byte for byte).
      expect(rms(mulawToPcm(utterance.audio))).toBeGreaterThan(4000);
    }
    // The agent speaking unprompted again answers nothing new: no latency.
    conn.sendMedia(mulaw(tone(300)));
    const extra = await caller.hear({ timeoutMs: 3_000 });
    expect(extra.latencyMs).toBeNull();
  });

  it('does not take a backchannel as a turn to answer', async () => {
    onConnection.next = (c) => replyAfter(c, () => 400);
    const { caller } = await connect();
    onConnection.next = undefined;
    const question = await caller.say(tone(500));
    const answer = await caller.hear({ timeoutMs: 5_000 });
    expect(answer.answers).toEqual(question);
    await caller.say(tone(200, { hz: 300 }), { turn: false });
    const echo = await caller.hear({ timeoutMs: 5_000 });
    expect(echo.latencyMs).toBeNull();
  });

  it('presses keys, hangs up with stop, and reports who closed the call', async () => {
    const { caller, conn } = await connect();
    await caller.pressDigits('12#');
    await poll(() => conn.messages.filter((m) => m.event === 'dtmf').length === 3, 3_000, 'three digits');
    const digits = conn.messages.filter((m) => m.event === 'dtmf');
    expect(digits.map((m) => m.body)).toEqual(
      ['1', '2', '#'].map((digit) => ({
        event: 'dtmf',
        streamSid: caller.streamSid,
        sequenceNumber: expect.stringMatching(/^\d+$/),
        dtmf: { track: 'inbound_track', digit },
      })),
    );
    expect(digits[1]!.at - digits[0]!.at).toBeGreaterThan(250);
    await expect(caller.pressDigits('12x')).rejects.toThrow(/not DTMF/);

    const closed = await caller.hangUp();
    expect(closed).toMatchObject({ code: 1000, by: 'caller' });
    const stop = conn.messages.at(-1)!;
    expect(stop.body).toEqual({
      event: 'stop',
      sequenceNumber: String(Number(conn.messages.at(-2)!.body.sequenceNumber) + 1),
      streamSid: caller.streamSid,
      stop: { accountSid: caller.accountSid, callSid: caller.callSid },
    });
    expect((await conn.closed).code).toBe(1000);
    await expect(caller.say(tone(100))).rejects.toThrow(/ended/);

    // The engine ends the next call: the caller stops sending, a pending hear() fails at once, the rest resolves.
    const second = await connect();
    const waiting = second.caller.hear({ timeoutMs: 10_000 });
    second.conn.socket.close(1000, 'conversation ended');
    await expect(waiting).rejects.toThrow(/ended/);
    expect(await second.caller.closed).toMatchObject({ code: 1000, reason: 'conversation ended', by: 'engine' });
    expect(second.caller.events.at(-1)).toMatchObject({ dir: 'local', event: 'closed' });
  });

  it('records what Twilio would refuse: another stream, no payload, an unknown event', async () => {
    const { caller, conn } = await connect();
    conn.socket.send(JSON.stringify({ event: 'media', streamSid: 'MZother', media: { payload: 'AAAA' } }));
    conn.socket.send(JSON.stringify({ event: 'media', streamSid: caller.streamSid, media: {} }));
    conn.socket.send(JSON.stringify({ event: 'hello', streamSid: caller.streamSid }));
    await poll(() => caller.protocolErrors.length === 3, 2_000, 'three protocol errors');
    expect(caller.protocolErrors).toEqual(['media with streamSid MZother', 'media without a base64 payload', 'unknown event hello']);
    expect(caller.stats.mediaReceived).toBe(0);
  });

  const espeak = (() => {
    try {
      execFileSync('espeak-ng', ['--version']);
      return true;
    } catch {
      return false;
    }
  })();
  // espeak-ng is the fallback voice when no speech server is given (Debian's espeak-ng package).
  it.skipIf(!espeak)('says a sentence with espeak-ng, resampled to 8 kHz', async () => {
    const { caller, conn } = await connect({ synth: 'espeak' });
    const before = conn.messages.length;
    const spoken = await caller.say('Hello, I would like to book an appointment.');
    expect(spoken.text).toBe('Hello, I would like to book an appointment.');
    const speechMs = spoken.lastAudibleAt! - spoken.firstAudibleAt!;
    expect(speechMs).toBeGreaterThan(1200);
    expect(speechMs).toBeLessThan(5000);
    await poll(() => conn.messages.length > before + speechMs / 20, 5_000, 'the sentence frames');
    const loud = conn.messages.slice(before).filter((m) => m.event === 'media' && audible(m.body.media.payload));
    expect(loud.length).toBeGreaterThan(speechMs / 20 / 2);
  });
});

// The real speech server (voice/speech-server) the global setup runs: a sentence it synthesized, echoed
// back by the stub, comes back as its own transcript. Skipped only where the setup could not start it,
// which it allows outside CI alone.
const speechBaseUrl = speechUrl();
describe.skipIf(!speechBaseUrl)('simulated caller with the real speech server', () => {
  it('says a sentence through /v1/speak and hears it back through /v1/transcribe', { timeout: 120_000 }, async () => {
    const server = await startStubMediaServer((c) => replyAfter(c, () => 700, 500));
    try {
      const caller = await SimulatedCaller.connect({ url: server.url, token: 'tok', speechBaseUrl });
      const sentence = 'What time do you open on Saturday?';
      const spoken = await caller.say(sentence);
      expect(spoken.lastAudibleAt! - spoken.firstAudibleAt!).toBeGreaterThan(800);
      const heard = await caller.hear({ timeoutMs: 30_000 });
      expect(Math.abs(heard.latencyMs! - 700)).toBeLessThan(30);
      const words = (s: string) => s.toLowerCase().match(/[a-z]+/g) ?? [];
      const said = new Set(words(sentence));
      const recognized = words(heard.text ?? '');
      expect(recognized.filter((w) => said.has(w)).length, heard.text).toBeGreaterThanOrEqual(4);
      await caller.hangUp();
    } finally {
      await server.close();
    }
  });
});
