import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ChatHistoryItem, GbnfJsonSchema, Llama, LlamaChat, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import type { Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import { PROJECT_ROOT } from '../../core/tools';

/**
 * The local language model: a GGUF file (SmolLM2-135M-Instruct by default, installed by
 * `scripts/install-tools.sh llm`) run in-process on the CPU by node-llama-cpp's prebuilt binaries.
 * The weights load on first use, once per process; the process's runner (`localLlm`) has one context on
 * them, so one call runs at a time (two cores), a bounded number wait, and every call has a deadline,
 * queue wait included.
 */

export type LocalLlmConfig = Pick<
  Config,
  'LLM_LOCAL_MODEL_PATH' | 'LLM_LOCAL_THREADS' | 'LLM_LOCAL_CONTEXT_SIZE' | 'LLM_LOCAL_QUEUE_LIMIT' | 'LLM_CALL_TIMEOUT_MS'
>;

/** `busy`: the queue is full; `timeout`: LLM_CALL_TIMEOUT_MS passed; `missing`: no model file. Callers answer 503. */
export class LocalModelError extends Error {
  constructor(
    readonly code: 'busy' | 'timeout' | 'missing',
    message: string,
  ) {
    super(message);
    this.name = 'LocalModelError';
  }
}

export interface LocalCall {
  /** The conversation in node-llama-cpp's terms (system, user, model); the chat template comes from the GGUF. */
  messages: ChatHistoryItem[];
  /** When set, the output is constrained by a grammar to JSON matching this schema. */
  schema?: GbnfJsonSchema;
  maxTokens: number;
  temperature?: number;
  /** The caller's deadline or hang-up; the call also ends at LLM_CALL_TIMEOUT_MS. */
  signal?: AbortSignal;
  /** Each piece of text as it is generated (about one token each). */
  onText?: (text: string) => void;
}

export interface LocalOutput {
  text: string;
  stopReason: 'stop' | 'length';
  inputTokens: number;
  /** Prompt tokens the sequence held already (an earlier call's, or read ahead), not read again. */
  cachedInputTokens: number;
  outputTokens: number;
}

export type LocalPiece = { type: 'text'; text: string } | { type: 'done'; output: LocalOutput };

/** `local:SmolLM2-135M-Instruct-Q4_1` for `.../SmolLM2-135M-Instruct.Q4_1.gguf`. */
export function localModelName(config: Pick<Config, 'LLM_LOCAL_MODEL_PATH'>): string {
  return `local:${path
    .basename(config.LLM_LOCAL_MODEL_PATH)
    .replace(/\.gguf$/i, '')
    .replace(/\./g, '-')}`;
}

/** A relative model path is taken from the project folder, so the API and workers find it wherever they start. */
export function localModelPath(config: Pick<Config, 'LLM_LOCAL_MODEL_PATH'>): string {
  return path.resolve(PROJECT_ROOT, config.LLM_LOCAL_MODEL_PATH);
}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  contextSize: number;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
}

/** One call at a time; at most `limit` callers wait, in order; a waiter whose signal aborts leaves the line. */
class CallQueue {
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get waiters(): number {
    return this.waiting.length;
  }

  get running(): boolean {
    return this.busy;
  }

  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (!this.busy) {
      this.busy = true;
      return this.releaser();
    }
    if (this.waiting.length >= this.limit) throw new LocalModelError('busy', 'The local language model is busy; try again shortly');
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(signal.reason);
      };
      this.waiting.push(turn);
      signal.addEventListener('abort', leave, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    };
  }
}

export class LocalLlm {
  readonly name: string;
  private readonly queue: CallQueue;
  private loading?: Promise<Loaded>;
  /** The prompt being evaluated ahead of its call (`prefillAhead`), stopped by the next one. */
  private ahead?: AbortController;

  constructor(
    private readonly config: LocalLlmConfig,
    private readonly logger?: Logger,
  ) {
    this.name = localModelName(config);
    this.queue = new CallQueue(config.LLM_LOCAL_QUEUE_LIMIT);
  }

  /** Calls waiting behind the running one. */
  get waiting(): number {
    return this.queue.waiters;
  }

  /** Whether a call holds the model (a timed-out call holds it until its native work has stopped). */
  get running(): boolean {
    return this.queue.running;
  }

  /** Loads the model now (it is otherwise loaded by the first call). */
  async load(): Promise<void> {
    await this.loaded();
  }

  /**
   * Evaluates a prompt while the model is idle, ahead of the call that will need it (a voice agent's next
   * turn, while the caller is still being heard): that call then starts from these tokens. It never waits
   * and never delays a call by more than one small piece: a model in use or not yet loaded is left alone,
   * the next prompt made ahead stops this one, and so does any call (`run`). It only extends what the model
   * holds, unless it is a conversation's `opening` prompt: that conversation's first call would replace it anyway.
   */
  prefillAhead(messages: ChatHistoryItem[], opening = false): void {
    if (!this.loading || this.queue.running) return;
    this.ahead?.abort();
    const controller = new AbortController();
    this.ahead = controller;
    void this.queue
      .acquire(controller.signal)
      .then(async (release) => {
        try {
          await prefill(await this.loaded(), messages, controller.signal, { chunk: AHEAD_CHUNK_TOKENS, extendOnly: !opening });
        } finally {
          release();
        }
      })
      .catch(() => {}) // stopped, or the model failed: the call itself will say
      .finally(() => {
        if (this.ahead === controller) this.ahead = undefined;
      });
  }

  /**
   * The same call as a stream: text pieces as they come, then the output. A reader that stops early
   * stops the generation (and frees the model for the next call).
   */
  async *stream(call: Omit<LocalCall, 'onText'>): AsyncIterable<LocalPiece> {
    const hangUp = new AbortController();
    const pieces = new Readable({ objectMode: true, read() {} });
    const running = this.run({
      ...call,
      signal: call.signal ? AbortSignal.any([call.signal, hangUp.signal]) : hangUp.signal,
      onText: (text) => pieces.push({ type: 'text', text } satisfies LocalPiece),
    }).then(
      (output) => {
        pieces.push({ type: 'done', output } satisfies LocalPiece);
        pieces.push(null);
      },
      (error: unknown) => pieces.destroy(error instanceof Error ? error : new Error(String(error))),
    );
    try {
      for await (const piece of pieces) yield piece as LocalPiece;
    } finally {
      hangUp.abort();
      await running;
    }
  }

  /**
   * One call. Its deadline (LLM_CALL_TIMEOUT_MS, queue wait included) and the caller's signal end it at
   * once: the caller never waits for the native evaluation, which stops at its next check (the prompt is
   * evaluated in small abortable pieces, the answer token by token) and holds the model until then.
   */
  async run(call: LocalCall): Promise<LocalOutput> {
    const timeoutMs = this.config.LLM_CALL_TIMEOUT_MS;
    const bound = AbortSignal.timeout(timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, bound]) : bound;
    let release: (() => void) | undefined;
    this.ahead?.abort();
    try {
      release = await this.queue.acquire(signal);
      const work = this.generate(call, signal);
      // The model is free for the next call only once its native work has really stopped.
      const free = release;
      release = undefined;
      work.then(free, free);
      return await abortable(work, signal);
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (bound.aborted) throw new LocalModelError('timeout', `The local language model did not answer within ${timeoutMs} ms`);
      throw error;
    } finally {
      release?.();
    }
  }

  private async generate(call: LocalCall, signal: AbortSignal): Promise<LocalOutput> {
    const loaded = await abortable(this.loaded(), signal);
    const { chat, sequence, llama } = loaded;
    const grammar = call.schema ? await llama.createGrammarForJsonSchema<GbnfJsonSchema>(call.schema) : undefined;
    signal.throwIfAborted();
    const cachedInputTokens = await prefill(loaded, call.messages, signal);
    let outputTokens = 0;
    const result = await chat.generateResponse(call.messages, {
      grammar,
      maxTokens: call.maxTokens,
      temperature: call.temperature ?? 0,
      seed: 1, // the same prompt gets the same answer when sampling too
      signal,
      onToken: (tokens) => {
        outputTokens += tokens.length;
      },
      onTextChunk: (text) => {
        if (!signal.aborted) call.onText?.(text);
      },
    });
    return {
      text: result.response,
      stopReason: result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop',
      inputTokens: Math.max(0, sequence.nextTokenIndex - outputTokens),
      cachedInputTokens,
      outputTokens,
    };
  }

  private loaded(): Promise<Loaded> {
    this.loading ??= this.open().catch((error: unknown) => {
      this.loading = undefined; // a model installed later is picked up by the next call
      throw error;
    });
    return this.loading;
  }

  private async open(): Promise<Loaded> {
    const threads = usableThreads(this.config.LLM_LOCAL_THREADS);
    if (threads < this.config.LLM_LOCAL_THREADS)
      this.logger?.warn({ requested: this.config.LLM_LOCAL_THREADS, threads }, 'LLM_LOCAL_THREADS capped at the cores left to the model');
    const { llama, model } = await loadWeights(localModelPath(this.config), threads, this.logger);
    const { LlamaChat } = await import('node-llama-cpp');
    const context = await model.createContext({
      contextSize: this.config.LLM_LOCAL_CONTEXT_SIZE,
      threads: { ideal: threads, min: 1 },
      sequences: 1,
    });
    const sequence = context.getSequence();
    this.logger?.info({ model: this.name, threads, contextSize: context.contextSize }, 'local language model loaded');
    return { llama, model, contextSize: context.contextSize, sequence, chat: new LlamaChat({ contextSequence: sequence }) };
  }
}

/**
 * The threads the model gets: LLM_LOCAL_THREADS, at most one less than the cores this process may run on
 * (at least one). llama.cpp's threads meet at a barrier after each step of a token's computation; with
 * more threads than free cores, each barrier waits for a thread the scheduler has not run yet, and the
 * model slows down tenfold or worse (0.2-1.8 tokens/s with two threads on two busy cores against 9-33
 * with one, node-llama-cpp's own CLI alike: docs/performance.md). One core stays with the event loop.
 */
export function usableThreads(requested: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(requested, cores - 1));
}

const weights = new Map<string, Promise<{ llama: Llama; model: LlamaModel }>>();

/** The weights are loaded once per process and file; each runner has its own context on them. */
function loadWeights(modelPath: string, threads: number, logger?: Logger): Promise<{ llama: Llama; model: LlamaModel }> {
  const key = `${threads}:${modelPath}`;
  let loading = weights.get(key);
  if (!loading) {
    loading = (async () => {
      if (!fs.existsSync(modelPath)) {
        throw new LocalModelError('missing', 'The local language model is not installed on this server (scripts/install-tools.sh llm)');
      }
      // Only node-llama-cpp's prebuilt CPU binaries from npm: never a GPU probe, a download or a build.
      const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
      const llama = await getLlama({
        gpu: false,
        build: 'never',
        skipDownload: true,
        usePrebuiltBinaries: true,
        progressLogs: false,
        maxThreads: threads,
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => logger?.warn({ llama: level }, message.trim()),
      });
      return { llama, model: await llama.loadModel({ modelPath, gpuLayers: 0 }) };
    })();
    // A failed load is forgotten, so a model installed later is picked up by the next call.
    loading.catch(() => weights.delete(key));
    weights.set(key, loading);
  }
  return loading;
}

const shared = new Map<string, LocalLlm>();

/** The process's one runner for this model and these settings (tests may hold a few with different limits). */
export function localLlm(config: LocalLlmConfig, logger?: Logger): LocalLlm {
  const key = JSON.stringify([
    localModelPath(config),
    config.LLM_LOCAL_THREADS,
    config.LLM_LOCAL_CONTEXT_SIZE,
    config.LLM_LOCAL_QUEUE_LIMIT,
    config.LLM_CALL_TIMEOUT_MS,
  ]);
  let runner = shared.get(key);
  if (!runner) shared.set(key, (runner = new LocalLlm(config, logger)));
  return runner;
}

/** Prompt tokens evaluated per native call ahead of the generation: the longest stretch an abort waits for. */
export const PREFILL_CHUNK_TOKENS = 32;
/** The same for a prompt evaluated ahead of its call: a call arriving waits for at most this many (about 50 ms). */
const AHEAD_CHUNK_TOKENS = 8;
/** A prompt made ahead must keep at least this share of the tokens the sequence holds. */
const EXTEND_SHARE = 0.75;

/**
 * Evaluates the prompt into the sequence in small pieces, checking the signal between them, as the chat
 * will render it (the same history, an empty model turn last). node-llama-cpp evaluates a prompt in one
 * go and looks at the signal only between generated tokens, so a long prompt on a busy CPU would
 * otherwise run on long past the deadline. The generation then reuses these tokens; a prompt the chat
 * renders differently (a history shortened to fit) is only evaluated again, never wrong. `extendOnly`: nothing
 * is done unless the prompt keeps most of what the sequence holds. Returns how many of the prompt's tokens the
 * sequence held already.
 */
async function prefill(
  loaded: Loaded,
  messages: ChatHistoryItem[],
  signal: AbortSignal,
  { chunk = PREFILL_CHUNK_TOKENS, extendOnly = false } = {},
): Promise<number> {
  const { chat, model, sequence } = loaded;
  const history: ChatHistoryItem[] = messages.at(-1)?.type === 'model' ? messages : [...messages, { type: 'model', response: [] }];
  const { contextText } = chat.chatWrapper.generateContextState({ chatHistory: history });
  // The chat evaluates the last token itself, to sample the first token of the answer from it.
  const tokens = contextText.tokenize(model.tokenizer).slice(0, -1);
  if (tokens.length + 16 >= loaded.contextSize) return 0;
  const { firstDifferentIndex } = sequence.compareContextTokens(tokens);
  // Made ahead, a prompt only extends what the sequence holds (the same conversation, its last reply perhaps cut):
  // it never replaces another conversation's context, which that conversation's next call would read again.
  if (extendOnly && firstDifferentIndex < sequence.nextTokenIndex * EXTEND_SHARE) return 0;
  if (firstDifferentIndex < sequence.nextTokenIndex) {
    await sequence.eraseContextTokenRanges([{ start: firstDifferentIndex, end: sequence.nextTokenIndex }]);
  }
  const held = sequence.nextTokenIndex;
  for (let at = held; at < tokens.length; at += chunk) {
    signal.throwIfAborted();
    await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(at, at + chunk));
  }
  signal.throwIfAborted();
  return held;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
