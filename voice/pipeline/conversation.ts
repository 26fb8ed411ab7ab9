import type { Logger } from '../../platform/core/logger';
import type { ChatMessage, ChatModel } from '../../platform/adapters/llm/chat-model';
import { redactPii } from '../../domain/pii-redaction';
import { isVoicemailGreeting, systemPrompt } from '../../domain/voice-prompt';
import { RESUME_LINE, resumedMessages, resumePoint } from '../../domain/voice-resume';
import { toolCallKey, voiceTools } from '../../domain/voice-tools';
import { DEFAULT_TURN_WAIT, heardText, isListeningNoise, saysEndPhrase, turnWaitMs } from '../../domain/voice-turns';
import type { OpenedConversation } from '../../services/conversations/runtime';
import type { NewTurn } from '../../services/conversations/runtime';
import type { ConversationEnded, ToolCallRequest, ToolCallResult } from '../../workflows/conversation-messages';
import { wavFile } from '../audio/pcm';
import { Recorder } from '../audio/recorder';
import type { ListenEvent, ListenSession, SpeechStack } from '../speech/types';
import type { CallTransport } from '../transports/types';
import { AgentTurn, type AgentTurnHooks, type ToolRun, toModelTools } from './agent-turn';
import { HeldHooks } from './held-hooks';
import { Playout } from './playout';

// One live conversation: the caller's audio to the recognizer, turns decided, the model's answer spoken,
// barge-ins, idle prompts, limits and the end. Each turn is written as soon as it is spoken.

/** What the conversation needs from the service around it. */
export interface ConversationPorts {
  recordTurn(turn: NewTurn): Promise<void>;
  runTool(request: ToolCallRequest): Promise<ToolCallResult>;
  /** Ends the row and tells the workflow; the recording, when kept, is stored first. */
  close(ended: ConversationEnded, recording: { wav: Buffer; channels: 'mono' | 'dual' } | null): Promise<void>;
  hangUpCall(): Promise<void>;
  /** Marks the conversation as ending (before its stream closes). */
  ending(reason: string): Promise<void>;
}

export interface ConversationOptions {
  opened: OpenedConversation;
  transport: CallTransport;
  speech: SpeechStack;
  model: ChatModel;
  ports: ConversationPorts;
  logger: Logger;
}

/** Speech that runs this long while the agent talks is an interruption even before its words are known. */
const LONG_SPEECH_MS = 1_200;
/** A cut turn resumes when what cut it was no interruption after all (a noise, a backchannel). */
const FALSE_INTERRUPTION_MS = 2_000;
const DTMF_GAP_MS = 1_500;
const IDLE_PROMPT = 'Are you still there?';
const GOODBYE = 'Thank you for calling. Goodbye.';

/**
 * A wait this long before answering is spent making the answer ahead. Begun on the transcript instead, an
 * answer was only 7-163 ms ahead (the turn model follows the transcript that closely) for one more thrown-away
 * model call per pause (docs/performance.md).
 */
const AHEAD_MIN_MS = 300;

type PendingCaller = {
  text: string;
  startMs: number;
  endMs: number;
  sttMs: number;
  stoppedAt: number;
  /** The caller's longest pause within this turn so far (between two stretches of speech). */
  longestPauseMs: number | null;
};

interface TurnState {
  turn: AgentTurn;
  controller: AbortController;
  seq: number;
  startedMs: number;
  segments: Set<string>;
  finished: boolean;
  audit: Record<string, unknown>;
  sentences: { text: string; samples: number }[];
}

export class Conversation {
  private readonly opened: OpenedConversation;
  private readonly transport: CallTransport;
  private readonly playout: Playout;
  private readonly recorder: Recorder;
  private readonly tools;
  private readonly context: ChatMessage[];
  private readonly startedAt: number;
  private listen?: ListenSession;
  private seq = 0;
  private ended?: ConversationEnded;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private current?: TurnState;
  /** The answer to the pending caller turn, made while the conversation waits to know the caller is done. */
  private ahead?: { text: string; contextLength: number; state: TurnState; held: HeldHooks; at: number };
  private pending?: PendingCaller;
  private respondTimer?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private idlePrompts = 0;
  private limitTimer?: NodeJS.Timeout;
  private callerSpeakingSince: number | null = null;
  private stoppedAt: number | null = null;
  private lastCut?: { remainder: string; at: number };
  private turnVerdict: { complete: boolean; probability: number | null; turn_ms: number } | null = null;
  private dtmf = '';
  private dtmfTimer?: NodeJS.Timeout;
  private heardCaller = false;
  /** The model has been asked to read this conversation ahead before (`readAhead`). */
  private readBefore = false;
  /** Whether the recognizer sends partial transcripts: only while the agent speaks (barge-in). */
  private partialsOn = false;
  /** After the line that says the call is back, the answer the lost engine did not finish. */
  private answerAfterResume = false;
  /** The sequence number of the caller's last turn (-1 before the first): what a tool call answers. */
  private lastCallerSeq = -1;
  private endAfterSpeaking?: ConversationEnded;

  constructor(private readonly o: ConversationOptions) {
    this.opened = o.opened;
    // A conversation taken over goes on with the clock of its first engine: turn times stay comparable.
    this.startedAt = performance.now() - (o.opened.resumed ? Math.max(0, Date.now() - o.opened.startedAt.getTime()) : 0);
    this.transport = o.transport;
    this.playout = new Playout(o.transport.sampleRate);
    this.recorder = new Recorder(o.transport.sampleRate, this.startedAt);
    this.tools = voiceTools(o.opened.config);
    this.context = [{ role: 'system', content: systemPrompt(o.opened.config, o.opened.instructions, o.opened.contact) }];
    if (o.opened.resumed) {
      this.context.push(...resumedMessages(o.opened.history));
      const point = resumePoint(o.opened.history);
      this.seq = point.nextSeq;
      this.lastCallerSeq = point.lastCallerSeq;
      this.heardCaller = point.heardCaller;
      // The lost engine was answering (the caller's turn, or a tool's result, has no agent turn after it).
      this.answerAfterResume = ['caller', 'tool'].includes(o.opened.history.at(-1)?.role ?? '');
    }
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  private get config() {
    return this.opened.config;
  }

  private elapsedMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  /** Runs until the conversation ends. */
  async run(): Promise<ConversationEnded> {
    this.transport.bind({
      audio: (samples) => this.onAudio(samples),
      dtmf: (digit) => this.onDtmf(digit),
      played: (segment) => this.onPlayed(segment),
      hangup: (reason) => void this.end({ reason, status: 'completed' }, false),
    });
    this.listen = await this.o.speech.recognizer.listen({
      sampleRate: this.transport.sampleRate,
      language: this.config.language,
      onEvent: (event) => this.onListen(event),
    });
    this.limitTimer = setTimeout(
      () => void this.finishWith({ reason: 'max_duration', status: 'completed' }, this.config.end_call.message ?? GOODBYE),
      this.config.limits.max_duration_seconds * 1000,
    );
    if (this.opened.resumed) this.speak({ fixedText: RESUME_LINE });
    else if (this.config.first_speaker === 'agent' && this.opened.firstMessage) this.speak({ fixedText: this.opened.firstMessage });
    else this.armIdle();
    if (this.opened.answeredBy) this.answeredBy(this.opened.answeredBy);
    await this.done;
    return this.ended!;
  }

  get id(): string {
    return this.opened.id;
  }

  /**
   * The call can go on with another engine: Twilio asks the service what next when its stream ends; the
   * widget's page resumes with its resume token.
   */
  get movable(): boolean {
    return this.transport.channel === 'twilio' || this.transport.channel === 'widget';
  }

  /**
   * The provider's answering-machine verdict of an outbound call (it comes while the agent may already
   * be speaking): a machine ends the call as `end_on_voicemail` says, hanging up or leaving the message.
   */
  answeredBy(verdict: string): void {
    if (this.ended || this.opened.direction !== 'outbound' || !/^(machine|fax)/.test(verdict)) return;
    const leave = verdict !== 'fax' && !this.config.end_call.end_on_voicemail && this.config.end_call.message;
    void this.finishWith({ reason: 'voicemail', status: 'voicemail' }, leave || null);
  }

  // The caller's side

  private onAudio(samples: Int16Array): void {
    this.recorder.addCaller(samples);
    this.listen?.write(samples);
    const speaking = this.agentSpeaking();
    if (speaking !== this.partialsOn) {
      this.partialsOn = speaking;
      this.listen?.partials?.(speaking);
    }
    if (this.callerSpeakingSince !== null && this.agentSpeaking() && performance.now() - this.callerSpeakingSince > LONG_SPEECH_MS)
      this.interrupt();
  }

  private onDtmf(digit: string): void {
    this.dtmf += digit;
    this.disarmIdle();
    clearTimeout(this.dtmfTimer);
    this.dtmfTimer = setTimeout(() => {
      const digits = this.dtmf;
      this.dtmf = '';
      this.takeCallerTurn(
        {
          text: `[The caller pressed the keys: ${digits}]`,
          startMs: this.elapsedMs(),
          endMs: this.elapsedMs(),
          sttMs: 0,
          stoppedAt: performance.now(),
          longestPauseMs: null,
        },
        null,
      );
    }, DTMF_GAP_MS);
  }

  private onListen(event: ListenEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'speech_started':
        this.callerSpeakingSince = performance.now();
        this.dropAhead();
        this.disarmIdle();
        // The caller goes on: an answer being prepared waits for the rest.
        if (this.respondTimer) {
          clearTimeout(this.respondTimer);
          this.respondTimer = undefined;
        }
        return;
      case 'partial':
        if (
          this.agentSpeaking() &&
          !isListeningNoise(event.text, performance.now() - (this.callerSpeakingSince ?? performance.now())) &&
          event.text.trim().split(/\s+/).length >= 2
        )
          this.interrupt();
        return;
      case 'speech_stopped':
        this.callerSpeakingSince = null;
        this.stoppedAt = performance.now();
        return;
      case 'transcript':
        this.onTranscript(event);
        return;
      case 'turn':
        this.turnVerdict = event;
        this.scheduleResponse();
        return;
    }
  }

  private onTranscript(event: Extract<ListenEvent, { type: 'transcript' }>): void {
    const text = event.text.trim();
    const noise = isListeningNoise(text, event.end_ms - event.start_ms);
    if (this.agentSpeaking()) {
      // "uh-huh", "right", a cough: the agent goes on.
      if (noise) return;
      this.interrupt();
    }
    if (!text || (noise && this.lastCut && performance.now() - this.lastCut.at < FALSE_INTERRUPTION_MS)) {
      // Not an interruption after all: resume with what the caller did not hear.
      const cut = this.lastCut;
      this.lastCut = undefined;
      if (cut?.remainder) this.speak({ fixedText: cut.remainder });
      else if (!this.current) this.armIdle();
      return;
    }
    this.lastCut = undefined;
    const stoppedAt = this.stoppedAt ?? performance.now();
    // The caller's pause between two stretches of the turn, on the recognizer's own clock.
    const pause = this.pending ? Math.max(0, event.start_ms - this.pending.endMs) : null;
    this.pending = this.pending
      ? {
          ...this.pending,
          text: `${this.pending.text} ${text}`,
          endMs: event.end_ms,
          sttMs: this.pending.sttMs + event.stt_ms,
          stoppedAt,
          longestPauseMs: Math.max(this.pending.longestPauseMs ?? 0, pause ?? 0),
        }
      : { text, startMs: event.start_ms, endMs: event.end_ms, sttMs: event.stt_ms, stoppedAt, longestPauseMs: null };
    this.turnVerdict = null;
    this.dropAhead();
    this.readAhead(this.pending.text);
  }

  /** Once the turn model has spoken: answer now, or after a longer wait while the caller may go on. */
  private scheduleResponse(): void {
    if (!this.pending || this.callerSpeakingSince !== null) return;
    const wait =
      turnWaitMs(this.pending.text, this.turnVerdict, DEFAULT_TURN_WAIT, {
        longestPauseMs: this.pending.longestPauseMs,
        silenceMs: Math.max(0, this.elapsedMs() - this.pending.endMs),
      }) +
      this.config.limits.response_delay_seconds * 1000;
    // The wait is spent making the answer, held until the turn is taken: the caller hears it at once then.
    if (wait >= AHEAD_MIN_MS && this.ahead?.text !== this.pending.text) this.makeAhead(this.pending.text);
    clearTimeout(this.respondTimer);
    this.respondTimer = setTimeout(() => {
      this.respondTimer = undefined;
      const pending = this.pending;
      this.pending = undefined;
      if (pending) this.takeCallerTurn(pending, this.turnVerdict, wait);
    }, wait);
  }

  /** `waitMs`: how long the engine waited for more once the caller stopped (by the turn's words and pauses). */
  private takeCallerTurn(caller: PendingCaller, verdict: typeof this.turnVerdict, waitMs?: number): void {
    if (this.ended) return;
    const redact = this.config.recording.redact_pii ? redactPii(caller.text) : { text: caller.text, redacted: false };
    if (redact.redacted) this.recorder.mute(caller.startMs, caller.endMs);
    const eotMs = Math.round(performance.now() - caller.stoppedAt);
    this.lastCallerSeq = this.seq;
    void this.record({
      seq: this.seq++,
      role: 'caller',
      text: redact.text,
      heard_text: null,
      interrupted: false,
      started_ms: caller.startMs,
      ended_ms: caller.endMs,
      audit: {
        stt_ms: caller.sttMs,
        turn: verdict,
        eot_ms: eotMs,
        wait_ms: waitMs ?? null,
        longest_pause_ms: caller.longestPauseMs,
        recognizer: this.o.speech.recognizer.name,
      },
    });
    this.transport.transcript('caller', redact.text, true);
    const voicemail = this.isVoicemail(caller.text);
    this.heardCaller = true;
    if (voicemail) {
      const leave = !this.config.end_call.end_on_voicemail && this.config.end_call.message;
      void this.finishWith({ reason: 'voicemail', status: 'voicemail' }, leave || null);
      return;
    }
    if (this.saysEndCallPhrase(caller.text)) {
      void this.finishWith({ reason: 'caller_ended', status: 'completed' }, this.config.end_call.message ?? GOODBYE);
      return;
    }
    this.context.push({ role: 'user', content: caller.text });
    this.speak({ eotMs, sttMs: caller.sttMs });
  }

  /** The caller's first words on an outbound call are an answering machine's greeting. */
  private isVoicemail(text: string): boolean {
    return !this.heardCaller && this.opened.direction === 'outbound' && isVoicemailGreeting(text);
  }

  /** Words the call ends on rather than being answered: a voicemail greeting, an end-call phrase. */
  private endsCall(text: string): boolean {
    return this.isVoicemail(text) || this.saysEndCallPhrase(text);
  }

  /** The words hold one of the version's end-call phrases ("goodbye"). */
  private saysEndCallPhrase(text: string): boolean {
    return saysEndPhrase(text, this.config.end_call.phrases);
  }

  // The agent's side

  private agentSpeaking(): boolean {
    return Boolean(this.current && (!this.current.finished || this.playout.pendingMs() > 0));
  }

  private speak(what: { fixedText?: string; eotMs?: number; sttMs?: number }): void {
    // A turn still playing (keys pressed over it, the last line at the duration limit) is cut as a barge-in
    // cuts it: the caller's buffer cleared, the part heard recorded.
    if (this.current) this.interrupt();
    this.disarmIdle();
    const ahead = what.fixedText === undefined ? this.takeAhead() : undefined;
    this.dropAhead();
    this.playout.startTurn();
    if (ahead) {
      // The answer made ahead is this turn's: it is numbered now (after the caller's turn) and what it held plays.
      ahead.state.seq = this.seq++;
      ahead.state.startedMs = this.elapsedMs();
      Object.assign(ahead.state.audit, {
        eot_ms: what.eotMs ?? null,
        stt_ms: what.sttMs ?? null,
        ahead_ms: Math.round(performance.now() - ahead.at),
      });
      this.current = ahead.state;
      ahead.held.release();
      if (ahead.state.finished && !ahead.state.segments.size) this.afterSpeech();
      return;
    }
    const state = this.startTurn(this.context, what);
    state.seq = this.seq++;
    this.current = state;
  }

  /** An agent turn on `messages`, running; its audio goes to the caller through `wrap` (held, for an answer made ahead). */
  private startTurn(
    messages: ChatMessage[],
    what: { fixedText?: string; eotMs?: number; sttMs?: number },
    wrap: (live: AgentTurnHooks) => AgentTurnHooks = (live) => live,
  ): TurnState {
    const controller = new AbortController();
    const state = {
      controller,
      seq: -1,
      startedMs: this.elapsedMs(),
      segments: new Set<string>(),
      finished: false,
      audit: { eot_ms: what.eotMs ?? null, stt_ms: what.sttMs ?? null } as Record<string, unknown>,
      sentences: [] as { text: string; samples: number }[],
    } as TurnState;
    const live: AgentTurnHooks = {
      audio: (samples, index, sentence) => {
        if (controller.signal.aborted) return;
        const segment = `${state.seq}.${index}`;
        state.segments.add(segment);
        this.recorder.addAgent(samples, this.elapsedMs() + this.playout.pendingMs());
        this.playout.sent(samples.length);
        this.transport.play(segment, samples);
        (state.sentences[index] ??= { text: sentence, samples: 0 }).samples += samples.length;
      },
      sentenceDone: (_sentence, index) => {
        if (!controller.signal.aborted) this.transport.endSegment(`${state.seq}.${index}`);
      },
      runTool: (run) => this.runTool(run, state.seq),
    };
    state.turn = new AgentTurn(
      {
        model: this.o.model,
        voice: this.o.speech.voice,
        tools: this.tools,
        messages,
        sampleRate: this.transport.sampleRate,
        voiceId: this.config.voice.voice_id,
        speed: this.config.voice.speed,
        maxTokens: Math.min(this.config.llm.max_tokens, 300),
        temperature: this.config.llm.temperature,
        signal: controller.signal,
        fixedText: what.fixedText,
      },
      wrap(live),
    );
    state.turn.run().then(
      () => this.turnFinished(state),
      (error: Error) => {
        if (controller.signal.aborted) return;
        this.o.logger.warn({ err: error, conversationId: this.opened.id }, 'agent turn failed');
        this.turnFinished(state, error.message);
      },
    );
    return state;
  }

  /**
   * Has the model read the context and the caller's words so far while it is idle, so that the answer starts
   * from them: the agent's last words and the caller's turn opening once the agent has spoken (`''`), the
   * caller's words when they are heard, before the turn is decided. A model that would gain nothing ignores it.
   */
  private readAhead(callerText: string): void {
    if (this.current || this.ended) return;
    const messages: ChatMessage[] = [...this.context, { role: 'user', content: callerText }];
    this.o.model.prefill?.({ messages, tools: toModelTools(this.tools) }, !this.readBefore);
    this.readBefore = true;
  }

  /** Starts the answer to the caller's words so far; nothing of it is heard or done until the turn is taken. */
  private makeAhead(text: string): void {
    this.dropAhead();
    // Not over the agent's own speech, and never for words the turn ends the call on (a voicemail greeting,
    // an end-call phrase): those are answered by no model.
    if (this.current || this.endsCall(text)) return;
    let held: HeldHooks | undefined;
    const state = this.startTurn([...this.context, { role: 'user', content: text }], {}, (live) => (held = new HeldHooks(live)).hooks);
    this.ahead = { text, contextLength: this.context.length, state, held: held!, at: performance.now() };
  }

  /** The answer made ahead, when it answers exactly the context as it now stands (the caller's turn just added). */
  private takeAhead(): NonNullable<typeof this.ahead> | undefined {
    const ahead = this.ahead;
    const last = this.context.at(-1);
    if (!ahead || this.context.length !== ahead.contextLength + 1 || last?.role !== 'user' || last.content !== ahead.text) return undefined;
    this.ahead = undefined;
    return ahead;
  }

  /** The caller went on (or the turn went another way): the answer made ahead is abandoned unheard. */
  private dropAhead(): void {
    const ahead = this.ahead;
    if (!ahead) return;
    this.ahead = undefined;
    ahead.state.controller.abort();
    ahead.held.drop();
  }

  private async runTool(run: ToolRun, seq: number): Promise<string> {
    const started = performance.now();
    let result: ToolCallResult;
    try {
      result = await this.o.ports.runTool({
        turn: seq,
        callId: run.call.id,
        key: toolCallKey(this.opened.id, this.lastCallerSeq, run.call.name, run.call.input ?? {}),
        name: run.call.name,
        arguments: (run.call.input ?? {}) as Record<string, unknown>,
      });
    } catch (error) {
      result = { ok: false, content: `The tool failed: ${(error as Error).message}`, ms: Math.round(performance.now() - started) };
    }
    void this.record({
      seq: this.seq++,
      role: 'tool',
      text: result.content.slice(0, 4000),
      heard_text: null,
      interrupted: false,
      started_ms: Math.round(started - this.startedAt),
      ended_ms: this.elapsedMs(),
      audit: { tool: run.call.name, input: run.call.input, ok: result.ok, ms: result.ms, call_id: run.call.id },
    });
    if (run.tool?.kind === 'end_call') this.endAfterSpeaking = { reason: 'agent_ended', status: 'completed' };
    if (run.tool?.kind === 'transfer' && result.ok)
      this.endAfterSpeaking = { reason: 'transferred', status: 'transferred', transferredTo: result.transferredTo ?? null };
    // What a tool answers is data for the model, never instructions.
    return JSON.stringify({ ok: result.ok, result: result.content });
  }

  /** The model and the speech of the turn are done; the caller may still be hearing it. */
  private turnFinished(state: TurnState, error?: string): void {
    state.finished = true;
    if (error) state.audit.error = error;
    if (this.current === state && !state.segments.size) this.afterSpeech();
  }

  private onPlayed(segment: string): void {
    const current = this.current;
    if (!current?.segments.delete(segment)) return;
    if (current.finished && !current.segments.size) this.afterSpeech();
  }

  /** The agent has finished speaking and the caller has heard it all: the turn goes to the context and the record. */
  private afterSpeech(): void {
    const current = this.current;
    this.current = undefined;
    if (current) this.keepTurn(current, null);
    if (this.endAfterSpeaking) {
      const ended = this.endAfterSpeaking;
      void this.end(ended, ended.status !== 'transferred');
      return;
    }
    if (this.answerAfterResume && !this.pending && this.callerSpeakingSince === null) {
      this.answerAfterResume = false;
      this.speak({});
      return;
    }
    this.armIdle();
    if (this.pending && !this.respondTimer && this.callerSpeakingSince === null) this.scheduleResponse();
    else if (!this.pending) this.readAhead('');
  }

  /**
   * Writes an agent turn and keeps it in the model's context: all of it, or, when the caller cut it
   * (`heardMs`), the part heard; its tool calls and their results either way.
   */
  private keepTurn(current: NonNullable<typeof this.current>, heardMs: number | null): void {
    const sentences = current.sentences
      .filter(Boolean)
      .map((s) => ({ text: s.text, durationMs: (s.samples * 1000) / this.transport.sampleRate }));
    const full = current.turn.text || sentences.map((s) => s.text).join(' ');
    const heard = heardMs === null ? null : heardText(sentences, heardMs);
    for (const message of current.turn.added) {
      if (message.role === 'tool') this.context.push(message);
      else if (message.role === 'assistant' && message.toolCalls)
        this.context.push({ ...message, content: heardMs === null ? message.content : '' });
    }
    const said = heardMs === null ? full : heard;
    if (said) this.context.push({ role: 'assistant', content: said });
    if (heardMs !== null) {
      const heardWords = (heard ?? '').replace(/…$/, '').split(/\s+/).filter(Boolean).length;
      this.lastCut = { remainder: full.split(/\s+/).slice(heardWords).join(' '), at: performance.now() };
    }
    void this.record({
      seq: current.seq,
      role: 'agent',
      text: full,
      heard_text: heard,
      interrupted: heardMs !== null,
      started_ms: current.startedMs,
      ended_ms: this.elapsedMs(),
      audit: {
        ...current.audit,
        // An answer made ahead counts its stages from when it was begun, `ahead_ms` before the turn was taken.
        timings: {
          eot_ms: current.audit.eot_ms,
          stt_ms: current.audit.stt_ms,
          ...current.turn.timings,
          ahead_ms: current.audit.ahead_ms ?? null,
        },
        tools: current.turn.toolsCalled,
        model: this.o.model.name,
        voice: this.o.speech.voice.name,
        version: this.opened.version,
        ...(heardMs === null ? {} : { heard_ms: Math.round(heardMs) }),
      },
    });
    if (full) this.transport.transcript('agent', said ?? '', true);
    if (heardMs === null && this.saysEndCallPhrase(full)) this.endAfterSpeaking ??= { reason: 'agent_ended', status: 'completed' };
  }

  /** A real interruption: the caller's audio buffer is cleared, the context keeps only what was heard. */
  private interrupt(): void {
    const current = this.current;
    if (!current || this.ended) return;
    const heardMs = this.playout.heardMs();
    this.cancelCurrent();
    this.transport.clear();
    this.recorder.truncateAgent();
    this.playout.clear();
    this.keepTurn(current, heardMs);
  }

  private cancelCurrent(): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    current.controller.abort();
  }

  // Idle prompts, limits, the end

  private armIdle(): void {
    this.disarmIdle();
    if (this.ended) return;
    this.idleTimer = setTimeout(() => {
      if (this.agentSpeaking() || this.callerSpeakingSince !== null || this.pending) return;
      if (this.idlePrompts < this.config.limits.max_idle_prompts) {
        this.idlePrompts++;
        this.speak({ fixedText: IDLE_PROMPT });
        return;
      }
      void this.finishWith(
        { reason: 'silence', status: this.heardCaller ? 'completed' : 'no_input' },
        this.config.end_call.message ?? GOODBYE,
      );
    }, this.config.limits.silence_timeout_seconds * 1000);
  }

  private disarmIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** Says a last line (if any), then ends. */
  private async finishWith(ended: ConversationEnded, lastLine: string | null): Promise<void> {
    if (this.ended || this.endAfterSpeaking) return;
    this.endAfterSpeaking = ended;
    if (lastLine) this.speak({ fixedText: lastLine });
    else await this.end(ended, true);
  }

  private async record(turn: NewTurn): Promise<void> {
    try {
      await this.o.ports.recordTurn(turn);
    } catch (error) {
      this.o.logger.error({ err: error, conversationId: this.opened.id }, 'a turn could not be recorded');
    }
  }

  /**
   * Lets the call go on with another engine (this one drains): everything here stops and the stream is
   * closed with nothing ended or marked, so Twilio asks what next and the call is streamed elsewhere.
   */
  release(): void {
    if (this.ended) return;
    this.ended = { reason: 'moved', status: 'completed' };
    for (const t of [this.respondTimer, this.idleTimer, this.limitTimer, this.dtmfTimer]) clearTimeout(t);
    this.dropAhead();
    const current = this.current;
    this.cancelCurrent();
    if (current) this.keepTurn(current, current.finished && this.playout.pendingMs() === 0 ? null : this.playout.heardMs());
    this.listen?.close();
    this.transport.close('moved');
    this.resolveDone();
  }

  /** Ends once: timers stopped, the recognizer closed, the call hung up when the agent ends it, the records closed. */
  async end(ended: ConversationEnded, hangUp: boolean): Promise<void> {
    if (this.ended) return;
    this.ended = ended;
    for (const t of [this.respondTimer, this.idleTimer, this.limitTimer, this.dtmfTimer]) clearTimeout(t);
    this.dropAhead();
    const current = this.current;
    this.cancelCurrent();
    if (current) this.keepTurn(current, current.finished && this.playout.pendingMs() === 0 ? null : this.playout.heardMs());
    this.listen?.close();
    // Marked before the stream closes: Twilio's question about the ended stream must hang up, not resume it.
    await this.o.ports.ending(ended.reason).catch(() => {});
    if (hangUp && ended.reason !== 'caller_hung_up') await this.o.ports.hangUpCall().catch(() => {});
    this.transport.close(ended.reason);
    const { recording } = this.config;
    const wav = recording.enabled ? wavFile(this.recorder.channels(recording.channels), this.transport.sampleRate) : null;
    try {
      await this.o.ports.close(ended, wav ? { wav, channels: recording.channels } : null);
    } catch (error) {
      this.o.logger.error({ err: error, conversationId: this.opened.id }, 'the conversation could not be closed; its workflow will');
    }
    this.resolveDone();
  }
}
