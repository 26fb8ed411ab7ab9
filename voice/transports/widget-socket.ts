import type WebSocket from 'ws';
import { pcmFromBytes, pcmToBytes } from '../audio/pcm';
import type { CallTransport, TransportEvents } from './types';

// The widget's WebSocket: PCM16 16 kHz both ways, JSON control frames (protocol: docs/decisions/voice.md).

export class WidgetSocket implements CallTransport {
  readonly channel = 'widget' as const;
  readonly sampleRate = 16_000;
  readonly callId = null;
  private events?: TransportEvents;
  private readonly pending = new Set<string>();
  private ended = false;

  constructor(
    private readonly socket: WebSocket,
    conversationId: string,
  ) {
    socket.on('message', (data, binary) => this.onFrame(data, binary));
    socket.once('close', () => this.hangup('caller_hung_up'));
    this.json({ type: 'ready', conversation_id: conversationId, sample_rate: this.sampleRate });
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
    this.json({ type: 'end', reason });
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(1000);
  }
}
