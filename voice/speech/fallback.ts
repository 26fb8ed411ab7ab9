import type { ChatEvent, ChatModel } from '../../platform/adapters/llm/chat-model';
import { ProviderKeyRefused } from './provider-socket';
import type { ListenOptions, ListenSession, Recognizer, SpeechVoice } from './types';

// A cloud provider with the local default behind it: the first failure (no key, a refused key, no
// connection or no first result in time, a stream that breaks) switches the part to the local one for the
// rest of the conversation, and the choice records which answered and why (every turn's audit).

export type ProviderPart = 'recognizer' | 'voice' | 'model';

export class ProviderChoice {
  private failure: string | null;
  constructor(
    readonly part: ProviderPart,
    /** What the agent's configuration asked for (`deepgram`, `elevenlabs`, `deployment`...). */
    readonly asked: string,
    private readonly primary: { name: string } | null,
    private readonly fallback: { name: string },
    reason: string | null,
    private readonly onFail: (reason: string, refused: boolean) => void = () => {},
  ) {
    this.failure = primary ? null : reason;
  }

  get usingPrimary(): boolean {
    return this.primary !== null && this.failure === null;
  }

  /** The name of the part now answering. */
  get used(): string {
    return this.usingPrimary ? this.primary!.name : this.fallback.name;
  }

  /** Once: later failures of an already replaced provider change nothing. */
  fail(error: unknown): void {
    if (!this.usingPrimary) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.failure = reason.slice(0, 300);
    this.onFail(this.failure, error instanceof ProviderKeyRefused || /\b40[13]\b|invalid[_ ]api[_ ]key|unauthori[sz]ed/i.test(reason));
  }

  audit(): { asked: string; used: string; fallback: string | null } {
    return { asked: this.asked, used: this.used, fallback: this.failure };
  }
}

/** Listens through the provider; a stream that cannot open or breaks goes on with the local recognizer. */
export function fallbackRecognizer(primary: Recognizer | null, local: Recognizer, choice: ProviderChoice): Recognizer {
  return {
    get name() {
      return choice.used;
    },
    async listen(options) {
      if (!primary || !choice.usingPrimary) return local.listen(options);
      return new SwitchingSession(primary, local, choice, options).open();
    },
    async transcribe(samples, sampleRate, signal) {
      if (primary && choice.usingPrimary) {
        try {
          return await primary.transcribe(samples, sampleRate, signal);
        } catch (error) {
          if (signal?.aborted) throw error;
          choice.fail(error);
        }
      }
      return local.transcribe(samples, sampleRate, signal);
    },
  };
}

/** Audio buffered while the local stream opens after a provider's failure (10 s at 16 kHz). */
const MAX_BUFFERED_SAMPLES = 160_000;

class SwitchingSession implements ListenSession {
  private inner?: ListenSession;
  private pending: Int16Array[] | null = null;
  private pendingSamples = 0;
  private isClosed = false;
  private partialsOn = false;
  private resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => {
    this.resolveClosed = resolve;
  });

  constructor(
    private readonly primary: Recognizer,
    private readonly local: Recognizer,
    private readonly choice: ProviderChoice,
    private readonly options: ListenOptions,
  ) {}

  async open(): Promise<ListenSession> {
    try {
      this.inner = await this.primary.listen({ ...this.options, onFailure: (reason) => void this.switchToLocal(new Error(reason)) });
    } catch (error) {
      this.choice.fail(error);
      this.inner = await this.local.listen(this.options);
    }
    void this.inner.closed.then(() => this.innerClosed());
    return this;
  }

  private innerClosed(): void {
    if (this.isClosed && this.pending === null) this.resolveClosed();
  }

  private async switchToLocal(error: Error): Promise<void> {
    if (this.isClosed) return;
    this.choice.fail(error);
    this.pending = [];
    try {
      this.inner = await this.local.listen(this.options);
    } catch (localError) {
      this.options.onFailure?.(`the local recognizer failed too: ${(localError as Error).message}`);
      this.pending = null;
      return;
    }
    for (const samples of this.pending) this.inner.write(samples);
    this.pending = null;
    this.inner.partials?.(this.partialsOn);
    if (this.isClosed) this.inner.close();
    void this.inner.closed.then(() => this.innerClosed());
  }

  write(samples: Int16Array): void {
    if (this.pending) {
      if (this.pendingSamples + samples.length <= MAX_BUFFERED_SAMPLES) {
        this.pending.push(samples);
        this.pendingSamples += samples.length;
      }
      return;
    }
    this.inner?.write(samples);
  }

  partials(on: boolean): void {
    this.partialsOn = on;
    this.inner?.partials?.(on);
  }

  reset(): void {
    if (this.pending) this.pending = [];
    this.inner?.reset();
  }

  close(): void {
    this.isClosed = true;
    if (this.pending === null) this.inner?.close();
    // Whatever the inner stream does, the session counts as closed once asked.
    this.resolveClosed();
  }
}

/** Speaks through the provider; a sentence it cannot start is spoken by the local voice, and so is the rest of the call. */
export function fallbackVoice(primary: SpeechVoice | null, local: SpeechVoice, choice: ProviderChoice): SpeechVoice {
  return {
    get name() {
      return choice.used;
    },
    async *speak(text, options) {
      if (primary && choice.usingPrimary) {
        let spoke = false;
        try {
          for await (const chunk of primary.speak(text, options)) {
            spoke = true;
            yield chunk;
          }
          return;
        } catch (error) {
          if (options.signal.aborted) return;
          choice.fail(error);
          // Part of the sentence was heard: it ends there; the next ones are local.
          if (spoke) return;
        }
      }
      yield* local.speak(text, options);
    },
  };
}

/** Calls the organization's model; a call that fails before its first event is answered by the deployment's model. */
export function fallbackModel(primary: ChatModel | null, fallback: ChatModel, choice: ProviderChoice, firstResultMs: number): ChatModel {
  return {
    get name() {
      return choice.used;
    },
    prefill(request, opening) {
      (primary && choice.usingPrimary ? primary : fallback).prefill?.(request, opening);
    },
    async *stream(request) {
      if (primary && choice.usingPrimary) {
        const controller = new AbortController();
        const signal = AbortSignal.any([request.signal, controller.signal]);
        const events = primary.stream({ ...request, signal })[Symbol.asyncIterator]();
        let first: IteratorResult<ChatEvent> | undefined;
        try {
          const timer = setTimeout(() => controller.abort(new Error(`the model sent nothing within ${firstResultMs} ms`)), firstResultMs);
          try {
            first = await events.next();
          } finally {
            clearTimeout(timer);
          }
        } catch (error) {
          if (request.signal.aborted) throw error;
          choice.fail(controller.signal.aborted ? controller.signal.reason : error);
        }
        if (first) {
          if (first.done) return;
          yield first.value;
          for (;;) {
            const next = await events.next();
            if (next.done) return;
            yield next.value;
          }
        }
      }
      yield* fallback.stream(request);
    },
  };
}
