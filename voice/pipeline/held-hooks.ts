import type { AgentTurnHooks, ToolRun } from './agent-turn';

/**
 * The hooks of a reply made ahead, while the conversation still waits to know the caller is done: its
 * audio and sentence ends are held in order, and a tool call waits, so nothing is heard and nothing is
 * done before the turn is taken. `release` plays out what was held and lets the rest through; `drop`
 * (the caller went on) fails a waiting tool call, so the abandoned reply ends without running it.
 */
export class HeldHooks {
  private held: (() => void)[] | null = [];
  private readonly taken: Promise<void>;
  private take!: () => void;
  private refuse!: (error: Error) => void;

  constructor(private readonly live: AgentTurnHooks) {
    this.taken = new Promise((resolve, reject) => {
      this.take = resolve;
      this.refuse = reject;
    });
    this.taken.catch(() => {});
  }

  readonly hooks: AgentTurnHooks = {
    audio: (samples, index, sentence) => this.pass(() => this.live.audio(samples, index, sentence)),
    sentenceDone: (sentence, index) => this.pass(() => this.live.sentenceDone(sentence, index)),
    runTool: async (run: ToolRun) => {
      await this.taken;
      return this.live.runTool(run);
    },
  };

  private pass(call: () => void): void {
    if (this.held) this.held.push(call);
    else call();
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const call of held) call();
    this.take();
  }

  drop(): void {
    this.held = [];
    this.refuse(new Error('the caller went on'));
  }
}
