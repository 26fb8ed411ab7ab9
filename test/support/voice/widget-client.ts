import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { pcmToBytes } from '../../../voice/audio/pcm';
import { resample } from './pcm';
import { CALLER_RATE, synthesize } from './speech';

// The widget's page as the engine sees it, in Node: the socket opened with the page's Origin, microphone
// frames of 20 ms at 16 kHz sent in real time once `ready` (silence between sentences), the agent's
// segments "played" at their own pace and reported `played`, transcripts kept, and the page's resume:
// when the socket drops without `end`, the resume token from the last `ready` on the page's delays.

const RATE = 16_000;
const FRAME_SAMPLES = 320;
const FRAME_MS = 20;
/** The page's resume delays (api/pages/widget/page.js). */
export const RESUME_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000];

export interface WidgetReady {
  conversation_id: string;
  resume_token?: string;
}

export class WidgetClient {
  socket?: WebSocket;
  ready?: WidgetReady;
  resumeToken?: string;
  readonly transcripts: { role: string; text: string; at: number }[] = [];
  readonly frames: { type: string; at: number }[] = [];
  /** When each binary frame of agent audio arrived. */
  readonly audioAt: number[] = [];
  /** Close codes of sockets that closed, in order (refused resumes included). */
  readonly closes: number[] = [];
  private readonly changes = new EventEmitter();
  private mic: Int16Array[] = [];
  private micTimer?: NodeJS.Timeout;
  private playEndAt = 0;
  private playedTimers = new Set<NodeJS.Timeout>();
  private ended = false;

  constructor(
    private readonly origin: string,
    private readonly speechBaseUrl: string,
  ) {}

  /** Opens a socket; answers its `ready`, or the code it closed with before one. */
  connect(url: string, token: string): Promise<WidgetReady | { refused: number }> {
    const socket = new WebSocket(`${url}/widget?token=${encodeURIComponent(token)}`, { headers: { Origin: this.origin } });
    this.socket = socket;
    this.ready = undefined;
    return new Promise((resolve) => {
      socket.on('message', (data, binary) => {
        const ready = this.receive(data as Buffer, binary);
        if (ready) resolve(ready);
      });
      socket.on('error', () => {});
      socket.once('close', (code) => {
        this.closes.push(code);
        this.changes.emit('change');
        resolve({ refused: code });
      });
    });
  }

  /** The page's resume: tries on its delays until an engine at `url` takes the conversation; answers the codes refused on the way. */
  async resume(url: string): Promise<{ ready: WidgetReady; refused: number[] }> {
    const refused: number[] = [];
    for (const delay of RESUME_DELAYS_MS) {
      await new Promise((r) => setTimeout(r, delay));
      const result = await this.connect(url, this.resumeToken!);
      if ('conversation_id' in result) return { ready: result, refused };
      refused.push(result.refused);
      if ([4401, 4403, 4404, 4410].includes(result.refused)) break;
    }
    throw new Error(`no engine took the conversation back (refused: ${refused.join(', ')})`);
  }

  /** Resolves with the code once the current socket closes. */
  closed(): Promise<number> {
    const socket = this.socket!;
    if (socket.readyState === WebSocket.CLOSED) return Promise.resolve(this.closes.at(-1)!);
    return new Promise((resolve) => socket.once('close', (code) => resolve(code)));
  }

  /** Queues a sentence spoken by the speech server's voice; resolves once its last frame went out. */
  async say(text: string): Promise<void> {
    const pcm = resample(await synthesize(text, { speechBaseUrl: this.speechBaseUrl }), CALLER_RATE, RATE);
    const done = new Promise<void>((resolve) => this.changes.once('said', resolve));
    this.mic.push(pcm);
    return done;
  }

  /** The first agent transcript matching, from `since` on. */
  async waitForAgent(pattern: RegExp, timeoutMs: number, since = 0): Promise<{ text: string; at: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.transcripts.find((t) => t.role === 'agent' && t.at >= since && pattern.test(t.text));
      if (line) return line;
      if (Date.now() > deadline)
        throw new Error(`no agent line matching ${pattern} within ${timeoutMs} ms: ${JSON.stringify(this.transcripts)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.changes.once('change', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** When agent audio first arrived at or after `t` (performance.now()), or waits for it. */
  async firstAudioAfter(t: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.audioAt.find((a) => a >= t);
      if (at !== undefined) return at;
      if (Date.now() > deadline) throw new Error(`no agent audio within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  hangUp(): void {
    this.send({ type: 'hangup' });
    this.stop();
  }

  stop(): void {
    this.ended = true;
    clearInterval(this.micTimer);
    for (const t of this.playedTimers) clearTimeout(t);
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
  }

  private send(frame: Record<string, unknown>) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private receive(data: Buffer, binary: boolean): WidgetReady | undefined {
    const now = performance.now();
    if (binary) {
      this.audioAt.push(now);
      this.playEndAt = Math.max(now, this.playEndAt) + data.length / 2 / (RATE / 1000);
      return undefined;
    }
    const frame = JSON.parse(String(data)) as Record<string, any>;
    this.frames.push({ type: frame.type, at: now });
    let ready: WidgetReady | undefined;
    switch (frame.type) {
      case 'ready':
        ready = frame as WidgetReady;
        this.ready = ready;
        this.resumeToken = frame.resume_token;
        this.startMic();
        break;
      case 'resume_token':
        this.resumeToken = frame.token;
        break;
      case 'segment_end': {
        // Played when the audio queued before its end has played at its own pace.
        const timer = setTimeout(
          () => {
            this.playedTimers.delete(timer);
            this.send({ type: 'played', id: frame.id });
          },
          Math.max(0, this.playEndAt - now),
        );
        this.playedTimers.add(timer);
        break;
      }
      case 'clear':
        this.playEndAt = now;
        for (const t of this.playedTimers) clearTimeout(t);
        this.playedTimers.clear();
        break;
      case 'transcript':
        this.transcripts.push({ role: frame.role, text: frame.text, at: now });
        break;
    }
    this.changes.emit('change');
    return ready;
  }

  /** 20 ms frames on the clock: the sentence queued, else silence (the recognizer hears the pause that ends a turn). */
  private startMic() {
    if (this.micTimer || this.ended) return;
    let next = performance.now();
    let offset = 0;
    this.micTimer = setInterval(() => {
      while (performance.now() >= next) {
        next += FRAME_MS;
        const current = this.mic[0];
        let frame = new Int16Array(FRAME_SAMPLES);
        if (current) {
          frame = current.slice(offset, offset + FRAME_SAMPLES);
          offset += FRAME_SAMPLES;
          if (offset >= current.length) {
            this.mic.shift();
            offset = 0;
            this.changes.emit('said');
          }
        }
        if (this.socket?.readyState === WebSocket.OPEN && this.ready) this.socket.send(pcmToBytes(frame));
      }
    }, 10);
  }
}
