import type WebSocket from 'ws';
import { mulawToPcm, pcmToMulaw } from '../audio/mulaw';
import type { CallTransport, TransportEvents } from './types';

// Twilio's bidirectional Media Streams (`<Connect><Stream>`): JSON frames, μ-law 8 kHz audio in base64.
// Audio goes out as it is made (Twilio plays it at its own pace); a `mark` after each segment comes
// back when the segment has played; `clear` drops what Twilio still holds.

export interface TwilioStart {
  streamSid: string;
  callSid: string;
  accountSid: string;
  customParameters: Record<string, string>;
}

type Frame =
  | { event: 'connected' }
  | { event: 'start'; start: TwilioStart; streamSid: string }
  | { event: 'media'; media: { payload: string; track?: string } }
  | { event: 'dtmf'; dtmf: { digit: string } }
  | { event: 'mark'; mark: { name: string } }
  | { event: 'stop' };

/** Waits for the stream's `start` frame (within `timeoutMs`), then hands out a transport for it. */
export function acceptTwilioStream(socket: WebSocket, timeoutMs: number): Promise<TwilioMediaStream> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no start frame')), timeoutMs);
    const onMessage = (data: WebSocket.RawData) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(data)) as Frame;
      } catch {
        return;
      }
      if (frame.event !== 'start') return;
      clearTimeout(timer);
      socket.off('message', onMessage);
      resolve(new TwilioMediaStream(socket, frame.start));
    };
    socket.on('message', onMessage);
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error('closed before start'));
    });
  });
}

/** Twilio plays 20 ms frames; larger payloads are fine, but a frame each keeps `clear` precise. */
const FRAME_BYTES = 160;

export class TwilioMediaStream implements CallTransport {
  readonly channel = 'twilio' as const;
  readonly sampleRate = 8000;
  readonly callId: string;
  private events?: TransportEvents;
  private readonly pendingMarks = new Set<string>();
  private ended = false;

  constructor(
    private readonly socket: WebSocket,
    readonly start: TwilioStart,
  ) {
    this.callId = start.callSid;
    socket.on('message', (data) => this.onFrame(data));
    socket.once('close', () => this.hangup('caller_hung_up'));
  }

  /** Keys pressed and a hang-up while the conversation was opening are handed over once it listens. */
  private early: ((events: TransportEvents) => void)[] = [];

  bind(events: TransportEvents): void {
    this.events = events;
    for (const replay of this.early.splice(0)) replay(events);
  }

  private hangup(reason: string) {
    if (this.ended) return;
    this.ended = true;
    if (this.events) this.events.hangup(reason);
    else this.early.push((events) => events.hangup(reason));
  }

  private onFrame(data: WebSocket.RawData) {
    let frame: Frame;
    try {
      frame = JSON.parse(String(data)) as Frame;
    } catch {
      return;
    }
    switch (frame.event) {
      case 'media':
        if (frame.media.track && frame.media.track !== 'inbound') return;
        this.events?.audio(mulawToPcm(Buffer.from(frame.media.payload, 'base64')));
        return;
      case 'dtmf': {
        const digit = frame.dtmf.digit;
        if (this.events) this.events.dtmf(digit);
        else this.early.push((events) => events.dtmf(digit));
        return;
      }
      case 'mark':
        if (this.pendingMarks.delete(frame.mark.name)) this.events?.played(frame.mark.name);
        return;
      case 'stop':
        this.hangup('caller_hung_up');
        return;
    }
  }

  private send(frame: Record<string, unknown>) {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify({ ...frame, streamSid: this.start.streamSid }));
  }

  play(_segmentId: string, samples: Int16Array): void {
    const bytes = Buffer.from(pcmToMulaw(samples));
    for (let i = 0; i < bytes.length; i += FRAME_BYTES)
      this.send({ event: 'media', media: { payload: bytes.subarray(i, i + FRAME_BYTES).toString('base64') } });
  }

  endSegment(segmentId: string): void {
    this.pendingMarks.add(segmentId);
    this.send({ event: 'mark', mark: { name: segmentId } });
  }

  clear(): void {
    this.send({ event: 'clear' });
  }

  transcript(): void {
    // Twilio carries no text.
  }

  close(): void {
    this.ended = true;
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(1000);
  }
}
