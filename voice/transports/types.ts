// A call's audio path, whatever carries it (Twilio Media Streams, the widget's WebSocket): caller audio
// in, agent audio out in segments, told when a segment has played, cleared at once on a barge-in.

export interface TransportEvents {
  audio(samples: Int16Array): void;
  dtmf(digit: string): void;
  /** Everything queued up to the end of this segment has played. */
  played(segmentId: string): void;
  /** The caller's side is gone (hang-up, closed socket). */
  hangup(reason: string): void;
}

export interface CallTransport {
  readonly channel: 'twilio' | 'widget';
  /** The sample rate of the audio both ways. */
  readonly sampleRate: number;
  /** The provider's id of the call (Twilio's CallSid), when there is one. */
  readonly callId: string | null;
  bind(events: TransportEvents): void;
  /** Queues agent audio of the segment. */
  play(segmentId: string, samples: Int16Array): void;
  /** The segment is complete: report `played` when it has. */
  endSegment(segmentId: string): void;
  /** Drops everything queued (barge-in); pending segments count as played. */
  clear(): void;
  /** A transcript line, where the client shows them (the widget). */
  transcript(role: 'agent' | 'caller', text: string, final: boolean): void;
  close(reason: string): void;
}
