import type { ChatMessage, ChatModel, ChatTool, ChatToolCall } from '../../platform/adapters/llm/chat-model';
import { SentenceSplitter } from '../../domain/voice-turns';
import type { VoiceTool } from '../../domain/voice-tools';
import type { SpeechVoice } from '../speech/types';

// One agent turn: the model streamed, its text cut into sentences, each sentence spoken as soon as it is
// complete (speech of sentence n+1 is made once sentence n's is, while n plays), tool calls run in between with a
// line said while they run. Cancelled as a whole by its signal (a barge-in). A model that starts saying a
// sentence of the turn again (small models loop: "I'm sorry. I'm sorry.") is stopped there: the caller
// never hears a sentence twice in one turn.

export interface SpokenSentence {
  text: string;
  durationMs: number;
}

export interface TurnTimings {
  llm_first_token_ms: number | null;
  /** The model's first piece complete (a clause or a sentence): what speech waits for. */
  llm_first_clause_ms: number | null;
  tts_first_audio_ms: number | null;
  first_audio_ms: number | null;
}

export interface ToolRun {
  call: ChatToolCall;
  tool: VoiceTool | undefined;
}

export interface AgentTurnHooks {
  /** Audio of the turn, in order, as it is made. */
  audio(samples: Int16Array, sentenceIndex: number, sentence: string): void;
  /** A sentence's audio is complete. */
  sentenceDone(sentence: SpokenSentence, index: number): void;
  /** Runs a tool call (once, through the conversation's workflow); answers what the model reads back. */
  runTool(run: ToolRun): Promise<string>;
}

export interface AgentTurnOptions {
  model: ChatModel;
  voice: SpeechVoice;
  tools: VoiceTool[];
  messages: ChatMessage[];
  sampleRate: number;
  voiceId: string;
  speed: number;
  maxTokens: number;
  temperature: number;
  signal: AbortSignal;
  /** Text to speak before asking the model (a first message, an idle prompt): no model call. */
  fixedText?: string;
}

const MAX_TOOL_STEPS = 3;
const FILLER = 'One moment.';

/** What the model is told of the version's tools: name, description, parameters (never their endpoints or settings). */
export const toModelTools = (tools: VoiceTool[]): ChatTool[] =>
  tools.map(({ name, description, parameters }) => ({ name, description, parameters }));

export class AgentTurn {
  readonly sentences: SpokenSentence[] = [];
  readonly timings: TurnTimings = {
    llm_first_token_ms: null,
    llm_first_clause_ms: null,
    tts_first_audio_ms: null,
    first_audio_ms: null,
  };
  /** Messages the turn added to the context (assistant text, tool calls and results). */
  readonly added: ChatMessage[] = [];
  readonly toolsCalled: { name: string; input: unknown; output: string }[] = [];
  private readonly started = performance.now();
  private speaking: Promise<void> = Promise.resolve();
  /** The last sentence's synthesis, settled once all its audio is made. */
  private synthesized: Promise<void> = Promise.resolve();
  private sentenceCount = 0;

  constructor(
    private readonly options: AgentTurnOptions,
    private readonly hooks: AgentTurnHooks,
  ) {}

  get text(): string {
    return this.sentences.map((s) => s.text).join(' ');
  }

  /** Speaks sentences one after another; synthesis of the next starts once the one before has been made. */
  private say(sentence: string): void {
    const index = this.sentenceCount++;
    const previous = this.speaking;
    const made = this.synthesize(sentence, this.synthesized);
    this.speaking = (async () => {
      const audio = await made;
      await previous;
      if (this.options.signal.aborted) return;
      let samples = 0;
      for await (const chunk of audio) {
        if (this.options.signal.aborted) return;
        if (this.timings.first_audio_ms === null) this.timings.first_audio_ms = performance.now() - this.started;
        samples += chunk.length;
        this.hooks.audio(chunk, index, sentence);
      }
      const spoken = { text: sentence, durationMs: (samples * 1000) / this.options.sampleRate };
      this.sentences[index] = spoken;
      this.hooks.sentenceDone(spoken, index);
    })();
    // Handled here as well as where the turn awaits it: a barge-in aborts speech while the turn may be
    // waiting on the model or a tool, and an abort must never surface as an unhandled rejection.
    this.speaking.catch(() => {});
  }

  /**
   * Starts synthesis once the sentence before is made (`after`), buffered, so it overlaps the playing of that
   * sentence. Never two sentences at once: on a few cores the second would slow the first, which the caller
   * is waiting for (a first clause followed by a long sentence came out up to half a second later).
   */
  private async synthesize(sentence: string, after: Promise<void>): Promise<AsyncIterable<Int16Array>> {
    const chunks: Int16Array[] = [];
    let done = false;
    let wake: (() => void) | undefined;
    const pump = (async () => {
      try {
        await after;
        if (this.options.signal.aborted) return;
        const asked = performance.now();
        for await (const chunk of this.options.voice.speak(sentence, {
          sampleRate: this.options.sampleRate,
          voice: this.options.voiceId,
          speed: this.options.speed,
          signal: this.options.signal,
        })) {
          if (this.timings.tts_first_audio_ms === null) this.timings.tts_first_audio_ms = performance.now() - asked;
          chunks.push(chunk);
          wake?.();
        }
      } finally {
        done = true;
        wake?.();
      }
    })();
    // Settled either way: the next sentence waits on it, and a failure surfaces where the audio is read.
    this.synthesized = pump.catch(() => {});
    return (async function* () {
      let i = 0;
      for (;;) {
        if (i < chunks.length) {
          yield chunks[i++]!;
          continue;
        }
        if (done) {
          await pump;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    })();
  }

  async run(): Promise<void> {
    const { options } = this;
    if (options.fixedText !== undefined) {
      this.say(options.fixedText);
      await this.speaking;
      this.added.push({ role: 'assistant', content: options.fixedText });
      return;
    }
    const messages = [...options.messages];
    const modelTools = toModelTools(options.tools);
    const said = new Set<string>();
    for (let step = 0; step <= MAX_TOOL_STEPS && !options.signal.aborted; step++) {
      const splitter = new SentenceSplitter({ firstClause: this.sentenceCount === 0 });
      let text = '';
      const calls: ChatToolCall[] = [];
      const asked = performance.now();
      const looping = new AbortController();
      /** Speaks a sentence, or stops the model when the turn already said it; true when it was spoken. */
      const sayOnce = (sentence: string): boolean => {
        const key = sentence
          .toLowerCase()
          .replace(/[^\p{L}\p{N}]+/gu, ' ')
          .trim();
        if (key && said.has(key)) {
          looping.abort();
          return false;
        }
        said.add(key);
        this.timings.llm_first_clause_ms ??= performance.now() - asked;
        this.say(sentence);
        text += `${text ? ' ' : ''}${sentence}`;
        return true;
      };
      try {
        for await (const event of options.model.stream({
          messages,
          tools: step < MAX_TOOL_STEPS ? modelTools : [],
          signal: AbortSignal.any([options.signal, looping.signal]),
          maxTokens: options.maxTokens,
          temperature: options.temperature,
        })) {
          if (event.type === 'text-delta') {
            if (this.timings.llm_first_token_ms === null) this.timings.llm_first_token_ms = performance.now() - asked;
            if (!splitter.push(event.delta).every(sayOnce)) break;
          } else if (event.type === 'tool-call') {
            if (this.timings.llm_first_token_ms === null) this.timings.llm_first_token_ms = performance.now() - asked;
            calls.push(event.call);
          }
        }
      } catch (error) {
        if (!looping.signal.aborted || options.signal.aborted) throw error;
      }
      if (!looping.signal.aborted) splitter.flush().every(sayOnce);
      const assistant: ChatMessage = { role: 'assistant', content: text, ...(calls.length ? { toolCalls: calls } : {}) };
      messages.push(assistant);
      this.added.push(assistant);
      if (!calls.length) break;
      for (const call of calls) {
        const tool = options.tools.find((t) => t.name === call.name);
        // Never silent while a tool runs: its own line, or a filler when the model said nothing first.
        const filler = tool?.speakWhileWaiting ?? (text.trim() || tool?.kind === 'end_call' ? null : FILLER);
        if (filler) this.say(filler);
        const output = await this.hooks.runTool({ call, tool });
        this.toolsCalled.push({ name: call.name, input: call.input, output });
        const result: ChatMessage = { role: 'tool', toolCallId: call.id, content: output };
        messages.push(result);
        this.added.push(result);
        if (tool?.kind === 'end_call' || tool?.kind === 'transfer') {
          await this.speaking;
          return;
        }
      }
    }
    await this.speaking;
  }
}
