import type { ChatMessage, ChatModel } from '../../platform/adapters/llm/chat-model';
import type { AgentConfig } from '../../domain/agent-config';
import { systemPrompt } from '../../domain/voice-prompt';
import {
  type CallerSource,
  type RecordedTurn,
  type ReplayedTool,
  type ReplayedTurn,
  exchangesOf,
  isKeysTurn,
  textChanged,
} from '../../domain/voice-replay';
import { voiceTools } from '../../domain/voice-tools';
import { saysEndPhrase } from '../../domain/voice-turns';
import { AgentTurn } from '../pipeline/agent-turn';
import type { Recognizer, SpeechVoice } from '../speech/types';
import { type CallerTrack, sliceTurn } from './caller-audio';

// A recorded conversation fed again, in order, to another version of its agent with no socket: each
// caller turn's audio (its slice of the recording's caller channel, or its text spoken by the engine's
// voice) recognized as the version's recognizer hears it, and answered by AgentTurn as a live call
// answers it — the same prompt, context and tools — with the answer's words kept and no speech made.

const GOODBYE = 'Thank you for calling. Goodbye.';
/** Audio synthesized for a caller turn with no recording: the rate the local recognizer works at. */
const SYNTH_RATE = 16_000;
/** One caller turn's recognition and answer, at most (the model's own call is bounded inside). */
const TURN_BOUND_MS = 90_000;

export interface ReplayRun {
  config: AgentConfig;
  instructions: string;
  firstMessage: string | null;
  contact: Record<string, string> | null;
  turns: RecordedTurn[];
  /** The caller channel of a dual-channel recording, or null (mono or none: turns are synthesized). */
  track: CallerTrack | null;
  recognizer: Recognizer;
  /** The version's model (its provider, the deployment's behind it). */
  model: ChatModel;
  /** The engine's voice, for caller turns with no recorded audio. */
  callerVoice: SpeechVoice;
  /** Answers a tool call (from the recording, or for real); `exchange` is the caller turn's index. */
  runTool(
    exchange: number,
    name: string,
    input: Record<string, unknown>,
  ): Promise<{ ok: boolean; content: string; source: ReplayedTool['source'] }>;
  /** Called after each turn (the activity's heartbeat). */
  onTurn?(turn: ReplayedTurn): void;
  signal: AbortSignal;
}

/** The answer's words only: the replay compares what would be said, so no speech is synthesized. */
const wordsOnly: SpeechVoice = {
  name: 'replay:text',
  // A voice that makes no audio; AgentTurn still cuts and keeps its sentences.
  async *speak() {},
};

async function collect(voice: SpeechVoice, text: string, voiceId: string, signal: AbortSignal): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  for await (const chunk of voice.speak(text, { sampleRate: SYNTH_RATE, voice: voiceId, speed: 1, signal })) parts.push(chunk);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export async function replayConversation(run: ReplayRun): Promise<ReplayedTurn[]> {
  const { config } = run;
  const tools = voiceTools(config);
  const context: ChatMessage[] = [{ role: 'system', content: systemPrompt(config, run.instructions, run.contact) }];
  const results: ReplayedTurn[] = [];
  let ended = false;
  const exchanges = exchangesOf(run.turns);
  // A replayed version that speaks first opens with its first message, compared with the recorded opening.
  if (exchanges[0]?.caller !== null && config.first_speaker === 'agent' && run.firstMessage)
    exchanges.unshift({ caller: null, agentText: '', tools: [] });

  for (const [index, exchange] of exchanges.entries()) {
    const started = performance.now();
    const old = { text: exchange.agentText, tools: exchange.tools.map(({ name, input, ok }) => ({ name, input, ok })) };
    const turn: ReplayedTurn = {
      index,
      caller: null,
      old,
      new: { text: null, tools: [] },
      changed: false,
      timings: { stt_ms: null, llm_first_token_ms: null, turn_ms: 0 },
    };
    const signal = AbortSignal.any([run.signal, AbortSignal.timeout(TURN_BOUND_MS)]);
    try {
      if (!exchange.caller) {
        const opening = config.first_speaker === 'agent' ? run.firstMessage : null;
        turn.new.text = opening ?? '';
        if (opening) context.push({ role: 'assistant', content: opening });
      } else {
        const recorded = exchange.caller;
        let source: CallerSource = 'keys';
        let heard = recorded.text;
        if (!isKeysTurn(recorded.text)) {
          const slice = run.track ? sliceTurn(run.track, recorded.started_ms, recorded.ended_ms) : null;
          source = slice ? 'recording' : 'synthesized';
          const audio = slice ?? (await collect(run.callerVoice, recorded.text, config.voice.voice_id, signal));
          const rate = slice ? run.track!.sampleRate : SYNTH_RATE;
          const recognized = await run.recognizer.transcribe(audio, rate, signal);
          heard = recognized.text.trim();
          turn.timings.stt_ms = recognized.stt_ms;
        }
        turn.caller = {
          seq: recorded.seq,
          text: recorded.text,
          heard,
          source,
          started_ms: recorded.started_ms,
          ended_ms: recorded.ended_ms,
        };
        if (!ended) {
          if (config.end_call.phrases.length && saysEndPhrase(heard, config.end_call.phrases)) {
            turn.new.text = config.end_call.message ?? GOODBYE;
            ended = true;
          } else {
            context.push({ role: 'user', content: heard });
            ended = await answer(run, tools, context, index, turn, signal);
          }
        }
      }
    } catch (error) {
      if (run.signal.aborted) throw error;
      turn.new.error = (error as Error).message.slice(0, 300);
    }
    turn.changed = textChanged(old.text, turn.new.text);
    turn.timings.turn_ms = Math.round(performance.now() - started);
    results.push(turn);
    run.onTurn?.(turn);
  }
  return results;
}

/** The version's answer to the caller's turn, kept in the context as the engine keeps it; answers whether the call ends. */
async function answer(
  run: ReplayRun,
  tools: ReturnType<typeof voiceTools>,
  context: ChatMessage[],
  index: number,
  turn: ReplayedTurn,
  signal: AbortSignal,
): Promise<boolean> {
  const { config } = run;
  let ends = false;
  const agent = new AgentTurn(
    {
      model: run.model,
      voice: wordsOnly,
      tools,
      messages: context,
      sampleRate: SYNTH_RATE,
      voiceId: config.voice.voice_id,
      speed: config.voice.speed,
      maxTokens: Math.min(config.llm.max_tokens, 300),
      temperature: config.llm.temperature,
      signal,
    },
    {
      audio: () => {},
      sentenceDone: () => {},
      runTool: async ({ call, tool }) => {
        const input = (call.input ?? {}) as Record<string, unknown>;
        const result = await run.runTool(index, call.name, input);
        turn.new.tools.push({ name: call.name, input, ok: result.ok, source: result.source });
        if (tool?.kind === 'end_call' || (tool?.kind === 'transfer' && result.ok)) ends = true;
        // As the engine gives it: data for the model, never instructions.
        return JSON.stringify({ ok: result.ok, result: result.content });
      },
    },
  );
  await agent.run();
  turn.timings.llm_first_token_ms = agent.timings.llm_first_token_ms === null ? null : Math.round(agent.timings.llm_first_token_ms);
  const full = agent.text;
  // What the engine keeps of a turn heard to its end: the tool calls and results, then what was said.
  for (const message of agent.added)
    if (message.role === 'tool' || (message.role === 'assistant' && message.toolCalls)) context.push(message);
  if (full) context.push({ role: 'assistant', content: full });
  turn.new.text = full;
  return ends || (config.end_call.phrases.length > 0 && saysEndPhrase(full, config.end_call.phrases));
}
