import type WebSocket from 'ws';
import { pcmFromBytes, pcmToBytes } from '../audio/pcm';
import type { CallTransport, TransportEvents } from './types';

// The widget's WebSocket: PCM16 16 kHz both ways, JSON control frames (protocol: docs/decisions/voice.md).

/** The engine says it is alive this often; the page takes a socket silent for 4 s as lost and resumes elsewhere. */
const ALIVE_MS = 1_000;
/** A fresh resume token this often (each is good for two minutes). */
const RESUME_REFRESH_MS = 60_000;
/** The engine lets the conversation go (it drains): the page resumes it elsewhere (1012: service restart). */
const MOVE_CODE = 1012;

/** The page's way back to its conversation: a resume token now, and fresh ones later. */
export interface WidgetResume {
  token: string;
  refresh(): Promise<string>;
}

export class WidgetSocket implements CallTransport {
  readonly channel = 'widget' as const;
  readonly sampleRate = 16_000;
  readonly callId = null;
  private events?: TransportEvents;
  private readonly pending = new Set<string>();
  private ended = false;

  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly socket: WebSocket,
    conversationId: string,
    resume?: WidgetResume,
  ) {
    socket.on('message', (data, binary) => this.onFrame(data, binary));
    socket.once('close', () => {
      for (const timer of this.timers) clearInterval(timer);
      this.hangup('caller_hung_up');
    });
    this.json({ type: 'ready', conversation_id: conversationId, sample_rate: this.sampleRate, resume_token: resume?.token });
    if (!resume) return;
    this.timers.push(
      setInterval(() => this.json({ type: 'alive' }), ALIVE_MS),
      setInterval(
        () =>
          void resume.refresh().then(
            (token) => this.json({ type: 'resume_token', token }),
            () => {},
          ),
        RESUME_REFRESH_MS,
      ),
    );
  }

  bind(events: TransportEvents): void {
    this.events = events;
  }

  private hangup(reason: string) {
    if (this.ended) return;
    this.ended = true;
    this.events?.hangup(reason);
  }

  private onFrame(data: WebSocket.RawData, binary: boolean) {
    if (binary) {
      this.events?.audio(pcmFromBytes(data as Buffer));
      return;
    }
    let frame: { type?: string; id?: string; digit?: string };
    try {
      frame = JSON.parse(String(data)) as typeof frame;
    } catch {
      return;
    }
    if (frame.type === 'played' && frame.id && this.pending.delete(frame.id)) this.events?.played(frame.id);
    else if (frame.type === 'dtmf' && frame.digit && /^[0-9*#]$/.test(frame.digit)) this.events?.dtmf(frame.digit);
    else if (frame.type === 'hangup') this.hangup('caller_hung_up');
  }

  private json(frame: Record<string, unknown>) {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private started = new Set<string>();

  play(segmentId: string, samples: Int16Array): void {
    if (!this.started.has(segmentId)) {
      this.started.add(segmentId);
      this.json({ type: 'segment', id: segmentId });
    }
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(pcmToBytes(samples));
  }

  endSegment(segmentId: string): void {
    this.pending.add(segmentId);
    this.json({ type: 'segment_end', id: segmentId });
  }

  clear(): void {
    this.json({ type: 'clear' });
    // The page drops its queue at once; what was pending has ended.
    for (const id of this.pending) this.events?.played(id);
    this.pending.clear();
  }

  transcript(role: 'agent' | 'caller', text: string, final: boolean): void {
    this.json({ type: 'transcript', role, text, final });
  }

  close(reason: string): void {
    this.ended = true;
    for (const timer of this.timers) clearInterval(timer);
    // Released by a draining engine: the page takes the conversation to another engine, it has not ended.
    const moved = reason === 'moved';
    this.json(moved ? { type: 'move' } : { type: 'end', reason });
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(moved ? MOVE_CODE : 1000);
  }
}
