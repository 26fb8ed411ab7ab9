// A conversation's recording, built as it happens: the caller's audio and the agent's, each placed at
// its time since the start, mixed to one channel or kept as two (caller left, agent right).

export class Recorder {
  private caller: Int16Array;
  private agent: Int16Array;
  private callerLength = 0;
  private agentLength = 0;
  private readonly muted: [number, number][] = [];

  constructor(
    readonly sampleRate: number,
    private readonly startedAt: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.caller = new Int16Array(sampleRate * 60);
    this.agent = new Int16Array(sampleRate * 60);
  }

  private grow(track: Int16Array, needed: number): Int16Array {
    if (needed <= track.length) return track;
    const next = new Int16Array(Math.max(needed, track.length * 2));
    next.set(track);
    return next;
  }

  /** The caller's audio arrives in real time, in order: appended. */
  addCaller(samples: Int16Array): void {
    this.caller = this.grow(this.caller, this.callerLength + samples.length);
    this.caller.set(samples, this.callerLength);
    this.callerLength += samples.length;
  }

  /** The agent's audio, at the moment it will play (`atMs` since the start). */
  addAgent(samples: Int16Array, atMs: number): void {
    const at = Math.max(0, Math.round((atMs * this.sampleRate) / 1000));
    this.agent = this.grow(this.agent, at + samples.length);
    this.agent.set(samples, at);
    this.agentLength = Math.max(this.agentLength, at + samples.length);
  }

  /** A barge-in: what was queued but never played is not in the recording. */
  truncateAgent(): void {
    const at = Math.round(((this.now() - this.startedAt) * this.sampleRate) / 1000);
    if (at < this.agentLength) {
      this.agent.fill(0, at, this.agentLength);
      this.agentLength = at;
    }
  }

  /** Silences the caller between two times (ms since the start): a span that held personal data. */
  mute(fromMs: number, toMs: number): void {
    this.muted.push([fromMs, toMs]);
  }

  channels(mode: 'mono' | 'dual'): Int16Array[] {
    const length = Math.max(this.callerLength, this.agentLength);
    const caller = this.caller.slice(0, length);
    for (const [from, to] of this.muted)
      caller.fill(0, Math.round((from * this.sampleRate) / 1000), Math.round((to * this.sampleRate) / 1000));
    const agent = this.agent.slice(0, length);
    if (mode === 'dual') return [caller, agent];
    const mixed = new Int16Array(length);
    for (let i = 0; i < length; i++) mixed[i] = Math.max(-32768, Math.min(32767, caller[i]! + agent[i]!));
    return [mixed];
  }
}
