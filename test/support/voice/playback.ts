import { MULAW_SILENCE, mulawToPcm } from '../../../voice/audio/mulaw';
import { rms } from '../../../voice/audio/pcm';

// Twilio's side of the engine's audio: what it plays to the caller and when. Received media is queued
// and played at 8,000 bytes a second from the moment it arrives (or when the audio before it ends); a
// mark is echoed once everything queued before it has played; `clear` cuts the audio playing now, drops
// the rest and echoes the pending marks at once. Times are performance.now() milliseconds; every piece
// of audio keeps the instant it started playing, so what was heard when is exact, not rounded to frames.

const BYTES_PER_MS = 8;
const FRAME_BYTES = 160;

export interface PlayedSegment {
  /** When its first byte played. */
  startAt: number;
  /** μ-law bytes, cut short by a `clear` that came while it played. */
  bytes: Buffer;
}

export interface HeardFrame {
  at: number;
  endAt: number;
  rms: number;
  audible: boolean;
}

export interface ClearRecord {
  at: number;
  /** Audio dropped unplayed, in milliseconds. */
  droppedMs: number;
  /** Marks echoed by this clear, in order. */
  marks: string[];
}

export class Playback {
  readonly segments: PlayedSegment[] = [];
  readonly clears: ClearRecord[] = [];
  private queueEndAt = 0;
  private pendingMarks: { name: string; dueAt: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  // The ear's place in the played audio: segment index and byte offset.
  private earSegment = 0;
  private earOffset = 0;

  constructor(
    private readonly echoMark: (name: string, dueAt: number) => void,
    private readonly audibleRms: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Queues agent audio: it plays when the audio before it has. */
  enqueue(bytes: Buffer): void {
    if (this.stopped || !bytes.length) return;
    const startAt = Math.max(this.now(), this.queueEndAt);
    this.segments.push({ startAt, bytes });
    this.queueEndAt = startAt + bytes.length / BYTES_PER_MS;
  }

  /** A mark comes back when everything queued before it has played (at once when nothing is queued). */
  mark(name: string): void {
    if (this.stopped) return;
    this.pendingMarks.push({ name, dueAt: Math.max(this.now(), this.queueEndAt) });
    this.arm();
  }

  /** Stops the audio now, drops what is queued, echoes the pending marks in order. */
  clear(): ClearRecord {
    const now = this.now();
    let dropped = 0;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      if (s.startAt >= now) {
        dropped += s.bytes.length;
        this.segments.splice(i, 1);
        continue;
      }
      const played = Math.min(s.bytes.length, Math.floor((now - s.startAt) * BYTES_PER_MS));
      dropped += s.bytes.length - played;
      s.bytes = s.bytes.subarray(0, played);
      break;
    }
    this.queueEndAt = Math.min(this.queueEndAt, now);
    const marks = this.pendingMarks.map((m) => m.name);
    this.pendingMarks = [];
    for (const name of marks) this.echoMark(name, now);
    const record = { at: now, droppedMs: dropped / BYTES_PER_MS, marks };
    this.clears.push(record);
    return record;
  }

  /** Whether audio is playing at this instant. */
  get playing(): boolean {
    return this.queueEndAt > this.now();
  }

  /** Milliseconds of audio queued and not yet played. */
  get queuedMs(): number {
    return Math.max(0, this.queueEndAt - this.now());
  }

  /** The call ended: nothing more plays and no mark comes back. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    const now = this.now();
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      if (s.startAt >= now) this.segments.splice(i, 1);
      else {
        s.bytes = s.bytes.subarray(0, Math.min(s.bytes.length, Math.floor((now - s.startAt) * BYTES_PER_MS)));
        break;
      }
    }
    this.queueEndAt = Math.min(this.queueEndAt, now);
    this.pendingMarks = [];
  }

  private arm(): void {
    clearTimeout(this.timer);
    const next = this.pendingMarks[0];
    if (!next) return;
    this.timer = setTimeout(() => this.echoDue(), Math.max(0, next.dueAt - this.now()));
  }

  private echoDue(): void {
    const now = this.now();
    while (this.pendingMarks[0] && this.pendingMarks[0].dueAt <= now + 0.5) {
      const m = this.pendingMarks.shift()!;
      this.echoMark(m.name, m.dueAt);
    }
    this.arm();
  }

  /** The frames (20 ms, or a segment's shorter tail) that finished playing since the last call, in order. */
  listen(): HeardFrame[] {
    const now = this.now();
    const frames: HeardFrame[] = [];
    while (this.earSegment < this.segments.length) {
      const s = this.segments[this.earSegment]!;
      const played = Math.min(s.bytes.length, Math.floor((now - s.startAt) * BYTES_PER_MS));
      while (this.earOffset < played) {
        const end = Math.min(this.earOffset + FRAME_BYTES, s.bytes.length);
        // A frame is heard whole; a segment's tail is whole once the segment has played to its end.
        if (end > played) break;
        const level = rms(mulawToPcm(s.bytes.subarray(this.earOffset, end)));
        frames.push({
          at: s.startAt + this.earOffset / BYTES_PER_MS,
          endAt: s.startAt + end / BYTES_PER_MS,
          rms: level,
          audible: level >= this.audibleRms,
        });
        this.earOffset = end;
      }
      if (this.earOffset < s.bytes.length) break;
      this.earSegment++;
      this.earOffset = 0;
    }
    return frames;
  }

  /** What the caller heard between two instants, as μ-law at 8 kHz: silence where nothing played. */
  render(from: number, to: number): Buffer {
    const until = Math.min(to, this.now());
    const out = Buffer.alloc(Math.max(0, Math.round((until - from) * BYTES_PER_MS)), MULAW_SILENCE);
    for (const s of this.segments) {
      const segEnd = s.startAt + s.bytes.length / BYTES_PER_MS;
      if (segEnd <= from || s.startAt >= until) continue;
      const skip = Math.max(0, Math.round((from - s.startAt) * BYTES_PER_MS));
      const take = Math.min(s.bytes.length, Math.floor((until - s.startAt) * BYTES_PER_MS));
      if (take <= skip) continue;
      s.bytes.copy(out, Math.max(0, Math.round((s.startAt - from) * BYTES_PER_MS)), skip, take);
    }
    return out;
  }
}
