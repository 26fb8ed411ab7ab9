import { durationMs } from '../audio/pcm';

/**
 * Where the caller's playback stands: audio sent is queued at the far end and plays in real time, so
 * at any moment the part still unplayed is what was sent beyond the elapsed time. A barge-in keeps only
 * what was heard; `heardMs` of the current agent turn says how much that was.
 */
export class Playout {
  private endsAt = 0;
  private turnSentMs = 0;

  constructor(
    private readonly sampleRate: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  startTurn(): void {
    this.turnSentMs = 0;
  }

  sent(samples: number): void {
    const ms = durationMs(samples, this.sampleRate);
    this.endsAt = Math.max(this.now(), this.endsAt) + ms;
    this.turnSentMs += ms;
  }

  /** Milliseconds of audio still to play. */
  pendingMs(): number {
    return Math.max(0, this.endsAt - this.now());
  }

  /** Milliseconds of the current turn the caller has heard. */
  heardMs(): number {
    return Math.max(0, this.turnSentMs - this.pendingMs());
  }

  clear(): void {
    this.endsAt = this.now();
  }
}
