import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { MULAW_SILENCE, mulawToPcm, pcmToMulaw } from '../../../voice/audio/mulaw';
import { rms } from '../../../voice/audio/pcm';
import { Playback, type ClearRecord, type PlayedSegment } from './playback';
import { synthesize, transcribe, type SpeechSource } from './speech';

// A caller on the telephone as Twilio Media Streams present it to the engine: the `connected` and
// `start` messages, then 20 ms of μ-law every 20 ms in real time (silence when the caller says nothing,
// as on a real line), `dtmf` for key presses, `stop` on hang-up. The engine's audio is played as Twilio
// plays it (./playback.ts), and what was heard is cut into utterances at ~600 ms of silence, each with
// its transcript from the speech server and the voice-to-voice latency: from the caller's last audible
// frame of the sentence it answers to the agent's first audible frame.
// Times are performance.now() milliseconds (the same clock as any server in the same process).

const FRAME_MS = 20;
const FRAME_BYTES = 160;

export interface SimulatedCallerOptions {
  /** The engine's base address (ws://host:port), or the full Media Stream URL from a TwiML <Stream>. */
  url: string;
  /** The voice session token, sent as Twilio sends <Parameter>s: start.customParameters.token. */
  token?: string;
  customParameters?: Record<string, string>;
  accountSid?: string;
  callSid?: string;
  /** Headers of the WebSocket upgrade (Twilio sends X-Twilio-Signature). */
  headers?: Record<string, string>;
  /** The speech server: sentences are synthesized and agent speech transcribed there. */
  speechBaseUrl?: string;
  /** Who synthesizes text: the speech server (the default when its URL is given) or espeak-ng. */
  synth?: 'speech-server' | 'espeak';
  voice?: string;
  /** A frame (20 ms) is audible at or above this RMS level of its PCM16 samples. */
  audibleRms?: number;
  /** Silence that ends an agent utterance. */
  utteranceSilenceMs?: number;
  connectTimeoutMs?: number;
}

export interface CallerEvent {
  /** Milliseconds since the socket opened. */
  at: number;
  dir: 'sent' | 'received' | 'local';
  event: string;
  detail?: unknown;
}

export interface SpokenSentence {
  text: string | null;
  /** Whether it asks for an answer: a backchannel does not, and no latency is measured from it. */
  turn: boolean;
  /** Send time of its first frame. */
  startedAt: number;
  firstAudibleAt: number | null;
  /** Send time of its last audible frame: the end of the caller's speech. */
  lastAudibleAt: number | null;
  /** Send time of its last frame. */
  endedAt: number;
  durationMs: number;
}

export interface Utterance {
  /** When the agent's first audible frame started playing. */
  startedAt: number;
  /** When its last audible frame finished playing. */
  endedAt: number;
  durationMs: number;
  /** μ-law at 8 kHz from the first to the last audible frame, as heard (silence where nothing played). */
  audio: Buffer;
  /** The caller's sentence it answers: the last one started before it. */
  answers: SpokenSentence | null;
  /** Voice-to-voice latency (startedAt − answers.lastAudibleAt): only on the first utterance after that sentence. */
  latencyMs: number | null;
  /** `clear`s that came while it played or just after it. */
  clears: ClearRecord[];
  /** The speech server's transcript, when asked for. */
  text?: string;
  sttMs?: number;
}

export interface CallClosed {
  code: number;
  reason: string;
  /** Who closed the socket: the caller (hangUp) or the engine. */
  by: 'caller' | 'engine';
  at: number;
}

interface OutFrame {
  bytes: Buffer;
  audible: boolean;
  sentence?: SentenceState;
  last?: () => void;
}

interface SentenceState extends SpokenSentence {
  answered: boolean;
}

interface UtteranceState {
  startedAt: number;
  lastAudibleEnd: number;
  done: Utterance | null;
}

const newSid = (prefix: string) => `${prefix}${crypto.randomBytes(16).toString('hex')}`;

export class SimulatedCaller {
  readonly events: CallerEvent[] = [];
  /** Messages from the engine that Twilio would refuse (unknown event, wrong streamSid, bad payload). */
  readonly protocolErrors: string[] = [];
  /** Marks echoed back to the engine, in order. */
  readonly markEchoes: { name: string; at: number }[] = [];
  private readonly said: SentenceState[] = [];
  readonly streamSid = newSid('MZ');
  readonly callSid: string;
  readonly accountSid: string;
  readonly closed: Promise<CallClosed>;
  readonly stats = { mediaSent: 0, mediaReceived: 0, bytesReceived: 0, dtmfSent: 0 };
  /** performance.now() when the socket opened. */
  openedAt = 0;

  private readonly playback: Playback;
  private readonly changes = new EventEmitter();
  private readonly outbound: OutFrame[] = [];
  private readonly sentFrames: Buffer[] = [];
  private readonly utterances: UtteranceState[] = [];
  /** Every audible frame heard, in order: when it started and ended playing. */
  private readonly audibleFrames: { at: number; endAt: number }[] = [];
  private readonly silenceMs: number;
  private readonly audibleRms: number;
  private readonly source: SpeechSource | null;
  private sequence = 0;
  private chunk = 0;
  private nextFrameAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private heardIndex = 0;
  private hangingUp = false;
  private ended: CallClosed | null = null;
  private resolveClosed!: (c: CallClosed) => void;

  private constructor(
    private readonly ws: WebSocket,
    private readonly options: SimulatedCallerOptions,
  ) {
    this.callSid = options.callSid ?? newSid('CA');
    this.accountSid = options.accountSid ?? newSid('AC');
    this.silenceMs = options.utteranceSilenceMs ?? 600;
    this.audibleRms = options.audibleRms ?? 250;
    const synth = options.synth ?? (options.speechBaseUrl ? 'speech-server' : 'espeak');
    this.source = synth === 'espeak' ? { espeak: true } : options.speechBaseUrl ? { speechBaseUrl: options.speechBaseUrl } : null;
    this.playback = new Playback((name, dueAt) => this.echoMark(name, dueAt), this.audibleRms);
    this.changes.setMaxListeners(0);
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  /** Opens the Media Stream and starts it as Twilio does; audio flows (silence) from then on. */
  static async connect(options: SimulatedCallerOptions): Promise<SimulatedCaller> {
    const url = new URL(options.url);
    if (url.pathname === '/' || url.pathname === '') url.pathname = '/twilio/media-stream';
    const ws = new WebSocket(url, { headers: options.headers, handshakeTimeout: options.connectTimeoutMs ?? 10_000 });
    const caller = new SimulatedCaller(ws, options);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`the engine refused the Media Stream: HTTP ${res.statusCode}`)));
    });
    caller.begin();
    return caller;
  }

  private begin(): void {
    this.openedAt = performance.now();
    this.ws.on('message', (data, binary) => this.receive(data as Buffer, binary));
    this.ws.on('close', (code, reason) => this.finish(code, reason.toString()));
    this.ws.on('error', (error) => this.log('local', 'socket-error', error.message));
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      sequenceNumber: this.nextSequence(),
      start: {
        accountSid: this.accountSid,
        streamSid: this.streamSid,
        callSid: this.callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: { ...this.options.customParameters, ...(this.options.token ? { token: this.options.token } : {}) },
      },
      streamSid: this.streamSid,
    });
    this.nextFrameAt = performance.now() + FRAME_MS;
    this.timer = setTimeout(() => this.tick(), FRAME_MS);
  }

  // ---- what the caller sends ----

  /**
   * Says a sentence (text, synthesized; or PCM16 at 8 kHz) in real-time frames after whatever is already
   * queued; resolves once its last frame is sent. `turn: false` for a backchannel ("uh-huh"), which no
   * agent utterance answers.
   */
  async say(input: string | Int16Array, options: { turn?: boolean } = {}): Promise<SpokenSentence> {
    const text = typeof input === 'string' ? input : null;
    const pcm = typeof input === 'string' ? await this.synthesize(input) : input;
    this.ensureOpen();
    const mulaw = Buffer.from(pcmToMulaw(pcm));
    const sentence: SentenceState = {
      text,
      turn: options.turn ?? true,
      startedAt: Number.NaN,
      firstAudibleAt: null,
      lastAudibleAt: null,
      endedAt: Number.NaN,
      durationMs: Math.ceil(mulaw.length / FRAME_BYTES) * FRAME_MS,
      answered: false,
    };
    return new Promise((resolve) => {
      for (let offset = 0; offset < mulaw.length; offset += FRAME_BYTES) {
        const bytes = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);
        mulaw.copy(bytes, 0, offset, Math.min(offset + FRAME_BYTES, mulaw.length));
        const frame: OutFrame = { bytes, audible: rms(mulawToPcm(bytes)) >= this.audibleRms, sentence };
        if (offset + FRAME_BYTES >= mulaw.length) frame.last = () => resolve(publicSentence(sentence));
        this.outbound.push(frame);
      }
      if (!mulaw.length) resolve(publicSentence(sentence));
      this.said.push(sentence);
    });
  }

  /** Synthesizes ahead of time (cached), so a later say() of the same text starts at once. */
  synthesize(text: string): Promise<Int16Array> {
    if (!this.source) throw new Error('no speech source: give speechBaseUrl or synth: "espeak"');
    return synthesize(text, this.source, { voice: this.options.voice });
  }

  /** Silence queued after what is being said (a pause between spelled groups); resolves when it has been sent. */
  pause(ms: number): Promise<void> {
    this.ensureOpen();
    return new Promise((resolve) => {
      const frames = Math.max(1, Math.round(ms / FRAME_MS));
      for (let i = 0; i < frames; i++)
        this.outbound.push({
          bytes: Buffer.alloc(FRAME_BYTES, MULAW_SILENCE),
          audible: false,
          last: i === frames - 1 ? resolve : undefined,
        });
    });
  }

  /** Presses keys: one `dtmf` message a digit, `gapMs` apart (audio keeps flowing). */
  async pressDigits(digits: string, options: { gapMs?: number } = {}): Promise<void> {
    if (!/^[0-9*#A-D]+$/.test(digits)) throw new Error(`not DTMF digits: ${digits}`);
    for (const [i, digit] of [...digits].entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, options.gapMs ?? 300));
      this.ensureOpen();
      this.send({
        event: 'dtmf',
        streamSid: this.streamSid,
        sequenceNumber: this.nextSequence(),
        dtmf: { track: 'inbound_track', digit },
      });
      this.stats.dtmfSent++;
    }
  }

  /** Hangs up as Twilio reports it: `stop`, then the socket closes. */
  async hangUp(): Promise<CallClosed> {
    if (!this.ended && !this.hangingUp) {
      this.hangingUp = true;
      if (this.ws.readyState === WebSocket.OPEN) {
        this.send({
          event: 'stop',
          sequenceNumber: this.nextSequence(),
          streamSid: this.streamSid,
          stop: { accountSid: this.accountSid, callSid: this.callSid },
        });
        this.ws.close(1000, 'call ended');
      }
      // A peer that never answers the close handshake is cut off.
      const cut = setTimeout(() => this.ws.terminate(), 5_000);
      void this.closed.finally(() => clearTimeout(cut));
    }
    return this.closed;
  }

  // ---- what the caller hears ----

  /** The next agent utterance (awaits its ~600 ms of closing silence), with its transcript when the speech server is known. */
  hear(options: { timeoutMs?: number; transcribe?: boolean } = {}): Promise<Utterance> {
    return this.waitForSpeech(options);
  }

  async waitForSpeech(options: { timeoutMs?: number; transcribe?: boolean } = {}): Promise<Utterance> {
    const state = await this.until(
      () => {
        const u = this.utterances[this.heardIndex];
        return u?.done ? u : undefined;
      },
      options.timeoutMs ?? 15_000,
      'the agent to speak',
    );
    this.heardIndex++;
    const utterance = state.done!;
    const wantsText = options.transcribe ?? Boolean(this.options.speechBaseUrl);
    if (wantsText && utterance.text === undefined) {
      if (!this.options.speechBaseUrl) throw new Error('transcription needs speechBaseUrl');
      const result = await transcribe(mulawToPcm(utterance.audio), this.options.speechBaseUrl);
      utterance.text = result.text;
      utterance.sttMs = result.sttMs;
    }
    return utterance;
  }

  /** When the next utterance (not yet returned by hear()) starts: its first audible frame. */
  async waitForSpeechStart(options: { timeoutMs?: number } = {}): Promise<{ startedAt: number }> {
    const state = await this.until(() => this.utterances[this.heardIndex], options.timeoutMs ?? 15_000, 'the agent to start speaking');
    return { startedAt: state.startedAt };
  }

  /** What the caller said so far (a sentence still being said has its times so far). */
  get sentences(): SpokenSentence[] {
    return this.said.map(publicSentence);
  }

  /** When the first audible agent frame at or after `t` started playing; null if none yet. */
  firstAudibleAfter(t: number): number | null {
    let lo = 0;
    let hi = this.audibleFrames.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.audibleFrames[mid]!.at < t) lo = mid + 1;
      else hi = mid;
    }
    return this.audibleFrames[lo]?.at ?? null;
  }

  /** When the last audible agent frame heard finished playing; null if none yet. */
  get lastAudibleHeardAt(): number | null {
    return this.audibleFrames.at(-1)?.endAt ?? null;
  }

  /**
   * Awaits the agent's reply to what ended at `after` (e.g. a sentence's lastAudibleAt): its first audible
   * frame at or after that instant, then `utteranceSilenceMs` without one and nothing queued. Independent of hear().
   */
  async waitForReply(after: number, options: { timeoutMs?: number } = {}): Promise<{ startedAt: number; endedAt: number }> {
    const deadline = performance.now() + (options.timeoutMs ?? 30_000);
    const startedAt = await this.until(() => this.firstAudibleAfter(after), deadline - performance.now(), 'a reply');
    const endedAt = await this.waitForQuiet({ timeoutMs: Math.max(0, deadline - performance.now()) });
    return { startedAt, endedAt };
  }

  /** Awaits `utteranceSilenceMs` without an audible agent frame and nothing queued; resolves with when the last audible frame ended. */
  waitForQuiet(options: { timeoutMs?: number } = {}): Promise<number> {
    return this.until(
      () => {
        const last = this.lastAudibleHeardAt ?? this.openedAt;
        return performance.now() - last >= this.silenceMs && this.playback.queuedMs < FRAME_MS ? last : undefined;
      },
      options.timeoutMs ?? 30_000,
      'the agent to be quiet',
    );
  }

  /** Every utterance heard so far, finished or not (for assertions after the call). */
  get heardUtterances(): readonly { startedAt: number; endedAt: number | null }[] {
    return this.utterances.map((u) => ({ startedAt: u.startedAt, endedAt: u.done ? u.done.endedAt : null }));
  }

  /** The `clear`s received, with what each dropped and the marks it echoed. */
  get clears(): readonly ClearRecord[] {
    return this.playback.clears;
  }

  /** Whether the engine's audio is playing now. */
  get playing(): boolean {
    return this.playback.playing;
  }

  get queuedMs(): number {
    return this.playback.queuedMs;
  }

  /** The played audio as it started playing, each piece cut where a clear cut it. */
  get heardSegments(): readonly PlayedSegment[] {
    return this.playback.segments;
  }

  /** All the caller heard from the socket's opening to now (or the call's end), μ-law 8 kHz, silence where nothing played. */
  heardAudio(): Buffer {
    return this.playback.render(this.openedAt, this.ended?.at ?? performance.now());
  }

  /** All the caller sent, frame after frame (μ-law 8 kHz). */
  sentAudio(): Buffer {
    return Buffer.concat(this.sentFrames);
  }

  /** Resolves when the condition holds (checked on every frame and message); rejects past the bound or when the call ended first. */
  until<T>(check: () => T | undefined | null | false, timeoutMs: number, what = 'the condition'): Promise<T> {
    return new Promise((resolve, reject) => {
      const test = () => {
        const value = check();
        if (value) {
          done();
          resolve(value);
        } else if (this.ended) {
          done();
          reject(new Error(`the call ended (${this.ended.code} ${this.ended.reason}, by the ${this.ended.by}) before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.changes.off('change', test);
      };
      this.changes.on('change', test);
      test();
    });
  }

  // ---- the wire ----

  private tick(): void {
    if (this.ended || this.hangingUp) return;
    // Frames go out on a fixed 20 ms grid; a late timer sends the frames it owes at once, as a real stream catches up.
    while (this.nextFrameAt <= performance.now() + 0.5 && this.ws.readyState === WebSocket.OPEN) {
      this.sendFrame();
      this.nextFrameAt += FRAME_MS;
    }
    this.listen();
    this.changes.emit('change');
    this.timer = setTimeout(() => this.tick(), Math.max(0, this.nextFrameAt - performance.now()));
  }

  private sendFrame(): void {
    const frame = this.outbound.shift() ?? { bytes: Buffer.alloc(FRAME_BYTES, MULAW_SILENCE), audible: false };
    this.chunk++;
    this.send({
      event: 'media',
      sequenceNumber: this.nextSequence(),
      media: {
        track: 'inbound',
        chunk: String(this.chunk),
        timestamp: String((this.chunk - 1) * FRAME_MS),
        payload: frame.bytes.toString('base64'),
      },
      streamSid: this.streamSid,
    });
    const at = performance.now();
    this.stats.mediaSent++;
    this.sentFrames.push(frame.bytes);
    const s = frame.sentence;
    if (s) {
      if (Number.isNaN(s.startedAt)) {
        s.startedAt = at;
        this.log('local', 'say', { text: s.text, turn: s.turn });
      }
      if (frame.audible) {
        s.firstAudibleAt ??= at;
        s.lastAudibleAt = at;
      }
      s.endedAt = at;
    }
    if (frame.last) {
      if (s) this.log('local', 'said', { text: s.text, durationMs: s.durationMs });
      frame.last();
    }
  }

  private receive(data: Buffer, binary: boolean): void {
    const problem = this.apply(data, binary);
    if (problem) this.protocolError(problem);
    this.changes.emit('change');
  }

  /** Plays one message from the engine; what Twilio would refuse comes back as a description. */
  private apply(data: Buffer, binary: boolean): string | undefined {
    if (binary) return 'a binary frame (Twilio takes JSON text)';
    let message: { event?: string; streamSid?: string; media?: { payload?: unknown }; mark?: { name?: unknown } };
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return `not JSON: ${data.toString('utf8').slice(0, 80)}`;
    }
    if (message.streamSid !== this.streamSid) return `${message.event} with streamSid ${message.streamSid}`;
    if (message.event === 'media') {
      const payload = message.media?.payload;
      if (typeof payload !== 'string' || !payload || !/^[A-Za-z0-9+/]+=*$/.test(payload)) return 'media without a base64 payload';
      const bytes = Buffer.from(payload, 'base64');
      this.stats.mediaReceived++;
      this.stats.bytesReceived += bytes.length;
      this.playback.enqueue(bytes);
    } else if (message.event === 'mark') {
      const name = message.mark?.name;
      if (typeof name !== 'string' || !name) return 'mark without a name';
      this.log('received', 'mark', { name });
      this.playback.mark(name);
    } else if (message.event === 'clear') {
      const record = this.playback.clear();
      this.log('received', 'clear', { droppedMs: Math.round(record.droppedMs), marks: record.marks });
    } else {
      return `unknown event ${message.event}`;
    }
    return undefined;
  }

  private echoMark(name: string, dueAt: number): void {
    if (this.ended || this.ws.readyState !== WebSocket.OPEN) return;
    this.send({ event: 'mark', sequenceNumber: this.nextSequence(), streamSid: this.streamSid, mark: { name } });
    this.markEchoes.push({ name, at: performance.now() });
    this.log('sent', 'mark', { name, lateMs: Math.round(performance.now() - dueAt) });
    this.changes.emit('change');
  }

  /** Cuts the heard audio into utterances: one starts at an audible frame and ends after `utteranceSilenceMs` without one. */
  private listen(final = false): void {
    for (const frame of this.playback.listen()) {
      if (!frame.audible) continue;
      this.audibleFrames.push({ at: frame.at, endAt: frame.endAt });
      let current = this.utterances.at(-1);
      if (!current || current.done) {
        current = { startedAt: frame.at, lastAudibleEnd: frame.endAt, done: null };
        this.utterances.push(current);
        this.log('local', 'agent-speech-start', {});
      }
      current.lastAudibleEnd = frame.endAt;
    }
    const current = this.utterances.at(-1);
    if (current && !current.done && (final || performance.now() - current.lastAudibleEnd >= this.silenceMs)) this.close(current);
  }

  private close(u: UtteranceState): void {
    const answers = [...this.said].reverse().find((s) => s.turn && s.firstAudibleAt !== null && s.firstAudibleAt < u.startedAt) ?? null;
    const first = answers !== null && !answers.answered;
    if (answers) answers.answered = true;
    u.done = {
      startedAt: u.startedAt,
      endedAt: u.lastAudibleEnd,
      durationMs: u.lastAudibleEnd - u.startedAt,
      audio: this.playback.render(u.startedAt, u.lastAudibleEnd),
      answers: answers && publicSentence(answers),
      latencyMs: first && answers.lastAudibleAt !== null ? u.startedAt - answers.lastAudibleAt : null,
      clears: this.playback.clears.filter((c) => c.at >= u.startedAt && c.at <= u.lastAudibleEnd + FRAME_MS),
    };
    this.log('local', 'agent-speech-end', {
      durationMs: Math.round(u.done.durationMs),
      latencyMs: u.done.latencyMs && Math.round(u.done.latencyMs),
    });
  }

  private finish(code: number, reason: string): void {
    if (this.ended) return;
    clearTimeout(this.timer);
    this.playback.stop();
    this.listen(true);
    const at = performance.now();
    this.ended = { code, reason, by: this.hangingUp ? 'caller' : 'engine', at };
    this.log('local', 'closed', { code, reason, by: this.ended.by });
    // What was still being said is not: its promises settle so no one waits on a dead line.
    for (const frame of this.outbound.splice(0)) frame.last?.();
    this.resolveClosed(this.ended);
    this.changes.emit('change');
  }

  private ensureOpen(): void {
    if (this.ended || this.hangingUp) throw new Error('the call has ended');
  }

  private nextSequence(): string {
    this.sequence++;
    return String(this.sequence);
  }

  private send(message: { event: string } & Record<string, unknown>): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(message));
    if (message.event !== 'media') this.log('sent', message.event, message.event === 'dtmf' ? message.dtmf : undefined);
  }

  private protocolError(what: string): void {
    this.protocolErrors.push(what);
    this.log('received', 'protocol-error', what);
  }

  private log(dir: CallerEvent['dir'], event: string, detail?: unknown): void {
    this.events.push({
      at: Math.round((performance.now() - this.openedAt) * 10) / 10,
      dir,
      event,
      ...(detail === undefined ? {} : { detail }),
    });
  }
}

function publicSentence(s: SentenceState): SpokenSentence {
  const { answered: _answered, ...rest } = s;
  return rest;
}
