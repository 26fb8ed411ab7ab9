// A small process manager for `npm start`: each service is started after the services it depends on
// are up, restarted with backoff when it dies, and the whole set is stopped with one clear line when
// one service keeps crashing.

export interface Running {
  pid: number | undefined;
  /** Resolves with a description of how the process ended ("code 1", "SIGKILL"). */
  exited: Promise<string>;
  /** A graceful stop (SIGINT, then SIGKILL after a grace period). */
  stop(): Promise<void>;
}

export interface ServiceSpec {
  name: string;
  /** Services that must be up before this one starts or restarts. */
  dependsOn?: string[];
  /** Starts the process and resolves once it is ready to serve. */
  start(output: OutputTail): Promise<Running>;
}

export interface SupervisorOptions {
  /** This many crashes within `crashWindowMs` stop everything. */
  maxCrashes: number;
  crashWindowMs: number;
  /** First restart delay, doubled per recent crash up to `maxBackoffMs`. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  say(line: string): void;
}

export const DEFAULT_SUPERVISOR_OPTIONS: Omit<SupervisorOptions, 'say'> = {
  maxCrashes: 5,
  crashWindowMs: 60_000,
  initialBackoffMs: 500,
  maxBackoffMs: 15_000,
};

/** The last lines a process wrote, for the line that explains why everything stopped. */
export class OutputTail {
  private readonly lines: string[] = [];
  private partial = '';

  constructor(private readonly max = 20) {}

  write(chunk: Buffer | string): void {
    const parts = (this.partial + String(chunk)).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.push(line);
  }

  push(line: string): void {
    const trimmed = line.trimEnd();
    if (!trimmed) return;
    this.lines.push(trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed);
    if (this.lines.length > this.max) this.lines.shift();
  }

  last(): string {
    return [...this.lines, this.partial.trim()].filter(Boolean).slice(-3).join(' | ') || '(no output)';
  }
}

interface State {
  spec: ServiceSpec;
  running?: Running;
  up: boolean;
  crashes: number[];
  output: OutputTail;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Supervisor {
  private readonly states = new Map<string, State>();
  private stopping = false;
  private readonly upWaiters = new Set<() => void>();
  /** Resolves with the exit code once everything has stopped. */
  readonly done: Promise<number>;
  private finish!: (code: number) => void;

  constructor(
    specs: ServiceSpec[],
    private readonly options: SupervisorOptions,
  ) {
    for (const spec of specs) this.states.set(spec.name, { spec, up: false, crashes: [], output: new OutputTail() });
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Starts every service in dependency order; rejects when a first start fails. */
  async startAll(): Promise<void> {
    for (const state of this.states.values()) await this.launch(state);
  }

  /** Stops dependents before what they depend on (API and worker, then Temporal, then Postgres). */
  async stopAll(code: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeWaiters();
    const order = [...this.states.values()].reverse();
    for (const state of order) {
      const dependents = order.filter((s) => s.spec.dependsOn?.includes(state.spec.name));
      await Promise.all(dependents.map((d) => d.running?.stop()));
      await state.running?.stop();
    }
    this.finish(code);
  }

  private async launch(state: State): Promise<void> {
    await this.dependenciesUp(state);
    if (this.stopping) return;
    state.output = new OutputTail(); // the last output that matters is that of the latest run
    const running = await state.spec.start(state.output);
    state.running = running;
    state.up = true;
    this.wakeWaiters();
    this.options.say(`${state.spec.name} running (pid ${running.pid ?? '?'})`);
    void running.exited.then((how) => this.onExit(state, running, how));
  }

  private async onExit(state: State, running: Running, how: string): Promise<void> {
    if (state.running !== running) return;
    state.up = false;
    if (this.stopping) return;
    const now = Date.now();
    state.crashes = [...state.crashes.filter((t) => now - t < this.options.crashWindowMs), now];
    if (state.crashes.length >= this.options.maxCrashes) {
      const seconds = Math.round(this.options.crashWindowMs / 1000);
      this.options.say(
        `${state.spec.name} exited ${state.crashes.length} times within ${seconds} s (last: ${how}); stopping everything. Last output of ${state.spec.name}: ${state.output.last()}`,
      );
      await this.stopAll(1);
      return;
    }
    const delay = Math.min(this.options.maxBackoffMs, this.options.initialBackoffMs * 2 ** (state.crashes.length - 1));
    this.options.say(
      `${state.spec.name} exited (${how}); restarting in ${(delay / 1000).toFixed(1)} s (restart ${state.crashes.length} of at most ${this.options.maxCrashes - 1} within ${Math.round(this.options.crashWindowMs / 1000)} s)`,
    );
    await sleep(delay);
    for (;;) {
      if (this.stopping) return;
      try {
        await this.launch(state);
        return;
      } catch (error) {
        const failedAt = Date.now();
        state.crashes = [...state.crashes.filter((t) => failedAt - t < this.options.crashWindowMs), failedAt];
        state.output.push(String((error as Error).message ?? error));
        if (state.crashes.length >= this.options.maxCrashes) {
          this.options.say(
            `${state.spec.name} could not be restarted (${(error as Error).message}); stopping everything. Last output of ${state.spec.name}: ${state.output.last()}`,
          );
          await this.stopAll(1);
          return;
        }
        const retry = Math.min(this.options.maxBackoffMs, this.options.initialBackoffMs * 2 ** (state.crashes.length - 1));
        this.options.say(`${state.spec.name} failed to start (${(error as Error).message}); retrying in ${(retry / 1000).toFixed(1)} s`);
        await sleep(retry);
      }
    }
  }

  /** A restart waits for its dependencies (which may be restarting themselves) to be up again. */
  private async dependenciesUp(state: State): Promise<void> {
    const deps = (state.spec.dependsOn ?? []).map((name) => this.states.get(name)).filter((s): s is State => s !== undefined);
    while (!this.stopping && deps.some((d) => !d.up)) {
      await new Promise<void>((resolve) => this.upWaiters.add(resolve));
    }
  }

  private wakeWaiters(): void {
    const waiters = [...this.upWaiters];
    this.upWaiters.clear();
    for (const wake of waiters) wake();
  }
}
