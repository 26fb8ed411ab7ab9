import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadConfig } from '../platform/core/config';
import { mintVoiceSessionToken } from '../services/conversations/session-tokens';
import { SimulatedCaller, type SpokenSentence } from '../test/support/voice/simulated-caller';
import { synthesize } from '../test/support/voice/speech';
import { startVoiceBenchEngine } from './voice-engine-env';
import { startStubVoiceEngine } from './voice-stub-engine';

// The voice runtime as a caller feels it: N simulated Twilio callers (test/support/voice/simulated-caller.ts)
// play the scripted turns of bench/fixtures/voice-script.json against the engine, in real time, and the
// bench reports voice-to-voice latency (the caller's last audible frame → the agent's first audible frame,
// p50/p95) and the turn-taking errors users of voice agents complain about most:
//   backchannel_interrupted  a backchannel ("uh-huh") said while the agent speaks, and the agent's audio
//                            `clear`ed within 1 s after it
//   spelling_cut             the agent started speaking before the caller's spelled sequence (digits, an
//                            e-mail, said in groups with pauses) ended
//   yes_no_dropped           no agent speech within 3 s after a short yes or no
//   interruption_ignored     a real interruption said over the agent, and no `clear` within 2 s
// and, from the engine's audit rows (GET /core/agents/{id}/conversations/{cid} → turns[].audit.timings),
// the split by stage: eot_ms, stt_ms, llm_first_token_ms, llm_first_clause_ms, tts_first_audio_ms and engine_ms
// (the engine's own part: see stageTimings; absent rows are counted, not fatal).
//
// `npm run bench -- voice [--calls N] [--concurrency C] [--turns K] [--engine ws://host:port] [--stub] [--check] [--verbose]`
//   --engine   a running engine; tokens from VOICE_BENCH_TOKEN, or minted for VOICE_BENCH_ORG / VOICE_BENCH_AGENT
//              with this machine's master key (the engine's DATA_DIR / ENCRYPTION_KEY); audit rows read from
//              VOICE_BENCH_API_URL with VOICE_BENCH_API_KEY when both are set
//   --stub     a naive in-process engine (bench/voice-stub-engine.ts) that shows what each figure catches
//   neither    the engine as npm start runs it, with a published agent (bench/voice-engine-env.ts)
//   --check    validates the script only
// The caller speaks through the speech server (SPEECH_BASE_URL) or, without one, espeak-ng.

const SCRIPT_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'voice-script.json');
const REPLY_TIMEOUT_MS = 20_000;
const YES_NO_WINDOW_MS = 3_000;
const BACKCHANNEL_WINDOW_MS = 1_000;
const INTERRUPTION_WINDOW_MS = 2_000;
const CALL_DEADLINE_MS = 15 * 60_000;

const During = z.object({ say: z.string().min(1), during_reply_ms: z.number().int().min(0).max(10_000) });
const Turn = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('question'), say: z.string().min(1) }),
  z.object({ kind: z.literal('statement'), say: z.string().min(1) }),
  z.object({ kind: z.literal('yes_no'), say: z.string().min(1) }),
  z.object({ kind: z.literal('spelled'), parts: z.array(z.string().min(1)).min(2), pause_ms: z.number().int().min(100).max(3_000) }),
  During.extend({ kind: z.literal('backchannel') }),
  During.extend({ kind: z.literal('interruption') }),
]);
export type VoiceTurn = z.infer<typeof Turn>;
export const VoiceScript = z
  .object({ description: z.string(), greeting: z.boolean(), turns: z.array(Turn).min(1) })
  .refine((s) => s.turns.every((t, i) => !isDuring(t) || (i > 0 && !isDuring(s.turns[i - 1]!) && s.turns[i - 1]!.kind !== 'spelled')), {
    message: 'a backchannel or interruption follows a question, statement or yes/no, during whose reply it is said',
  });
export type VoiceScript = z.infer<typeof VoiceScript>;

function isDuring(t: VoiceTurn): t is Extract<VoiceTurn, { kind: 'backchannel' | 'interruption' }> {
  return t.kind === 'backchannel' || t.kind === 'interruption';
}

export function loadVoiceScript(file = SCRIPT_PATH): VoiceScript {
  return VoiceScript.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}

/** What the bench needs of an engine. */
export interface BenchEngine {
  /** The engine's base address (ws://host:port), as VOICE_PUBLIC_URL. */
  url: string;
  /** A voice session for one simulated call: its token and, when known, what finds its audit rows. */
  session(call: number): Promise<{ token: string; from?: string; agentId?: string; conversationId?: string }>;
  /** Where the audit rows are read; absent: no split by stage. */
  api?: { baseUrl: string; apiKey: string };
  speechBaseUrl?: string;
  /** Latency the engine is built to show (the stub's), to read the figures against. */
  expectedLatencyMs?: number;
  close(): Promise<void>;
}

/** The engine as `npm start` runs it, with a published agent (bench/voice-engine-env.ts). */
export async function startEngineForBench(): Promise<BenchEngine> {
  return startVoiceBenchEngine();
}

class EngineNotStarted extends Error {}

/** A running engine named on the command line. */
function engineAt(url: string): BenchEngine {
  const env = process.env;
  const config = loadConfig(env);
  return {
    url,
    speechBaseUrl: env.SPEECH_BASE_URL || config.SPEECH_BASE_URL,
    api:
      env.VOICE_BENCH_API_URL && env.VOICE_BENCH_API_KEY
        ? { baseUrl: env.VOICE_BENCH_API_URL, apiKey: env.VOICE_BENCH_API_KEY }
        : undefined,
    async session(call) {
      const from = `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${call % 10}`;
      if (env.VOICE_BENCH_TOKEN) return { token: env.VOICE_BENCH_TOKEN, agentId: env.VOICE_BENCH_AGENT };
      if (!env.VOICE_BENCH_ORG || !env.VOICE_BENCH_AGENT)
        throw new Error('--engine needs VOICE_BENCH_TOKEN, or VOICE_BENCH_ORG and VOICE_BENCH_AGENT to mint tokens');
      const { token } = await mintVoiceSessionToken(
        config,
        { org: env.VOICE_BENCH_ORG, agent: env.VOICE_BENCH_AGENT, channel: 'twilio', direction: 'inbound', from, to: '+15550000000' },
        CALL_DEADLINE_MS / 1000,
      );
      return { token, from, agentId: env.VOICE_BENCH_AGENT };
    },
    close: async () => {},
  };
}

async function stubEngine(): Promise<BenchEngine> {
  const stub = await startStubVoiceEngine();
  return {
    url: stub.url,
    speechBaseUrl: process.env.SPEECH_BASE_URL,
    expectedLatencyMs: stub.expectedLatencyMs,
    session: async () => ({ token: 'stub' }),
    close: stub.close,
  };
}

// ---- one call ----

type Kind = VoiceTurn['kind'];

export interface TurnRecord {
  kind: Kind;
  text: string;
  /** Voice-to-voice latency of this turn; null when not measured (none for a backchannel, or no reply). */
  latencyMs: number | null;
  /** The agent spoke over the caller before the turn ended (its latency is then not counted). */
  overlapped?: boolean;
  spellingCut?: boolean;
  yesNoDropped?: boolean;
  backchannelInterrupted?: boolean;
  /** Said while the agent spoke? (false: its reply had already ended, the turn is not scored) */
  duringAgentSpeech?: boolean;
  interruptionHonoured?: boolean;
  /** From the interruption's first audible frame to the engine's `clear`. */
  bargeInMs?: number | null;
  noReply?: boolean;
}

export interface CallRecord {
  call: number;
  turns: TurnRecord[];
  greetingMs: number | null;
  closedBy: string;
  error?: string;
  protocolErrors: string[];
  conversationId?: string;
  stageTimings: Record<string, number | null>[];
}

const said = (s: SpokenSentence) => s.lastAudibleAt ?? s.endedAt;

export async function playCall(engine: BenchEngine, script: VoiceScript, call: number, verbose: boolean): Promise<CallRecord> {
  const record: CallRecord = { call, turns: [], greetingMs: null, closedBy: '', protocolErrors: [], stageTimings: [] };
  let session: Awaited<ReturnType<BenchEngine['session']>>;
  let caller: SimulatedCaller;
  try {
    session = await engine.session(call);
    caller = await SimulatedCaller.connect({
      url: engine.url,
      token: session.token,
      speechBaseUrl: engine.speechBaseUrl,
      synth: engine.speechBaseUrl ? 'speech-server' : 'espeak',
    });
  } catch (error) {
    return { ...record, error: `could not start the call: ${(error as Error).message}` };
  }
  record.protocolErrors = caller.protocolErrors;
  const log = (line: string) => verbose && process.stderr.write(`[voice call ${call}] ${line}\n`);
  try {
    if (script.greeting) {
      const greeting = await caller.waitForReply(caller.openedAt, { timeoutMs: REPLY_TIMEOUT_MS });
      record.greetingMs = greeting.startedAt - caller.openedAt;
    }
    for (let i = 0; i < script.turns.length; i++) {
      const turn = script.turns[i]!;
      if (isDuring(turn)) continue; // said during the reply to the turn before it
      const next = script.turns[i + 1];
      const during = next && isDuring(next) ? next : undefined;
      const { record: turnRecord, replyAt } = await playTurn(caller, turn);
      record.turns.push(turnRecord);
      log(`${turn.kind}: ${turnRecord.latencyMs === null ? 'no latency' : `${Math.round(turnRecord.latencyMs)} ms`}`);
      if (during) {
        const duringRecord = await playDuring(caller, during, replyAt);
        record.turns.push(duringRecord);
        log(`${during.kind}: ${JSON.stringify(duringRecord)}`);
      }
      // The next turn starts once the agent is quiet (its reply ended), as a polite caller waits.
      await caller.waitForQuiet({ timeoutMs: 60_000 }).catch(() => log('the agent did not go quiet within 60 s'));
    }
  } catch (error) {
    record.error = (error as Error).message;
  } finally {
    record.closedBy = (await caller.hangUp()).by;
  }
  record.conversationId = session.conversationId;
  if (engine.api && session.agentId) {
    const audit = await readAuditTimings(engine.api, session.agentId, session.conversationId, session.from).catch((error: Error) => {
      log(`audit rows unavailable: ${error.message}`);
      return null;
    });
    if (audit) {
      record.conversationId = audit.conversationId;
      record.stageTimings = audit.timings;
      for (const turn of audit.turns) log(turnLine(turn));
    }
  }
  return record;
}

async function playTurn(caller: SimulatedCaller, turn: Exclude<VoiceTurn, { kind: 'backchannel' | 'interruption' }>) {
  let first: SpokenSentence;
  let last: SpokenSentence;
  if (turn.kind === 'spelled') {
    first = await caller.say(turn.parts[0]!);
    last = first;
    for (const part of turn.parts.slice(1)) {
      await caller.pause(turn.pause_ms);
      last = await caller.say(part);
    }
  } else {
    first = await caller.say(turn.say);
    last = first;
  }
  const text = turn.kind === 'spelled' ? turn.parts.join(' … ') : turn.say;
  const end = said(last);
  // Agent speech that began while the caller was still saying the turn (between its first and last audible frames).
  const early = caller.firstAudibleAfter(first.firstAudibleAt ?? first.startedAt);
  const overlapped = early !== null && early < end;
  const replyAt = await caller.until(() => caller.firstAudibleAfter(end), REPLY_TIMEOUT_MS, 'a reply').catch(() => null);
  const record: TurnRecord = { kind: turn.kind, text, latencyMs: !overlapped && replyAt !== null ? replyAt - end : null };
  if (overlapped) record.overlapped = true;
  if (replyAt === null) record.noReply = true;
  if (turn.kind === 'spelled') record.spellingCut = overlapped;
  if (turn.kind === 'yes_no') record.yesNoDropped = replyAt === null || replyAt - end > YES_NO_WINDOW_MS;
  return { record, replyAt: overlapped ? early : replyAt };
}

async function playDuring(
  caller: SimulatedCaller,
  turn: Extract<VoiceTurn, { kind: 'backchannel' | 'interruption' }>,
  replyAt: number | null,
) {
  const record: TurnRecord = { kind: turn.kind, text: turn.say, latencyMs: null, duringAgentSpeech: false };
  if (replyAt === null) return record;
  await caller.until(() => performance.now() >= replyAt + turn.during_reply_ms, turn.during_reply_ms + 1_000, 'the moment to speak');
  // The agent's reply already ended: nothing to talk over, the turn is not scored.
  if (!caller.playing) return record;
  record.duringAgentSpeech = true;
  const sentence = await caller.say(turn.say, { turn: turn.kind === 'interruption' });
  const from = sentence.firstAudibleAt ?? sentence.startedAt;
  const end = said(sentence);
  if (turn.kind === 'backchannel') {
    await caller.until(() => performance.now() >= end + BACKCHANNEL_WINDOW_MS, BACKCHANNEL_WINDOW_MS + 1_000, 'the backchannel window');
    record.backchannelInterrupted = caller.clears.some((c) => c.at >= from && c.at <= end + BACKCHANNEL_WINDOW_MS);
    return record;
  }
  const clear = await caller
    .until(
      () => caller.clears.find((c) => c.at >= from && c.at <= end + INTERRUPTION_WINDOW_MS),
      Math.max(50, end + INTERRUPTION_WINDOW_MS - performance.now()),
      'a clear',
    )
    .catch(() => null);
  record.interruptionHonoured = clear !== null;
  record.bargeInMs = clear ? clear.at - from : null;
  if (clear) {
    const replyTo = await caller
      .until(() => caller.firstAudibleAfter(Math.max(end, clear.at)), REPLY_TIMEOUT_MS, 'a reply')
      .catch(() => null);
    record.latencyMs = replyTo === null ? null : replyTo - end;
    if (replyTo === null) record.noReply = true;
  }
  return record;
}

// ---- the engine's audit rows ----

const STAGES = ['eot_ms', 'stt_ms', 'llm_first_token_ms', 'llm_first_clause_ms', 'tts_first_audio_ms', 'engine_ms'] as const;

/** The per-turn stage timings of a conversation (found by id, or by the caller's number among the agent's newest). */
export async function readAuditTimings(
  api: { baseUrl: string; apiKey: string },
  agentId: string,
  conversationId?: string,
  from?: string,
): Promise<{ conversationId: string; timings: Record<string, number | null>[]; turns: AuditedTurn[] } | null> {
  const get = async (p: string) => {
    const res = await fetch(new URL(p, api.baseUrl), {
      headers: { Authorization: `Bearer ${api.apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    if (!res.ok) throw new Error(`GET ${p} answered ${res.status}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  let id = conversationId;
  if (!id && from) {
    const list = (await get(`/core/agents/${agentId}/conversations?limit=200`)) as { data?: { id: string; phone_number: string | null }[] };
    id = list.data?.find((c) => c.phone_number === from)?.id;
  }
  if (!id) return null;
  const detail = (await get(`/core/agents/${agentId}/conversations/${id}`)) as { turns?: AuditedTurn[] };
  const turns = detail.turns ?? [];
  return { conversationId: id, timings: turns.filter((t) => t.role === 'agent').map((t) => stageTimings(t.audit?.timings)), turns };
}

interface AuditedTurn {
  role?: string;
  text?: string;
  started_ms?: number | null;
  ended_ms?: number | null;
  interrupted?: boolean;
  audit?: { timings?: Record<string, unknown>; turn?: unknown; eot_ms?: unknown };
}

/** One line per recorded turn, for --verbose: what the engine heard and said, and when. */
const turnLine = (t: AuditedTurn): string =>
  `${t.role} ${t.started_ms ?? '?'}-${t.ended_ms ?? '?'} ms${t.interrupted ? ' (cut)' : ''}: ${JSON.stringify(t.text)}` +
  (t.role === 'caller'
    ? ` turn=${JSON.stringify(t.audit?.turn ?? null)} eot=${t.audit?.eot_ms ?? '?'}`
    : ` timings=${JSON.stringify(t.audit?.timings ?? null)}`);

/**
 * The stages of one agent turn's timings; a missing or non-numeric one is null. `engine_ms` is the engine's
 * own part of the reply: its first audio out, less the model's first piece and that piece's synthesis.
 */
export function stageTimings(timings: Record<string, unknown> | undefined): Record<string, number | null> {
  const read = (k: string) => (typeof timings?.[k] === 'number' && Number.isFinite(timings[k]) ? (timings[k] as number) : null);
  const [audio, clause, tts] = [read('first_audio_ms'), read('llm_first_clause_ms'), read('tts_first_audio_ms')];
  const engine = audio !== null && clause !== null && tts !== null ? Math.max(0, audio - clause - tts) : null;
  return Object.fromEntries(STAGES.map((k) => [k, k === 'engine_ms' ? engine : read(k)]));
}

// ---- figures ----

/** Nearest-rank percentile, to the millisecond; null for no values. */
export const percentile = (values: number[], p: number): number | null => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
};
const summary = (values: number[]) => ({ n: values.length, p50: percentile(values, 50), p95: percentile(values, 95) });
const rate = (hits: number, of: number) => ({ count: hits, of, rate: of ? Math.round((hits / of) * 1000) / 1000 : null });

export function voiceReport(calls: CallRecord[]) {
  const turns = calls.flatMap((c) => c.turns);
  const latencies = (kind?: Kind) => turns.filter((t) => (!kind || t.kind === kind) && t.latencyMs !== null).map((t) => t.latencyMs!);
  const scored = (kind: Kind) => turns.filter((t) => t.kind === kind && t.duringAgentSpeech !== false);
  const stageRows = calls.flatMap((c) => c.stageTimings);
  return {
    calls: calls.length,
    calls_failed: calls.filter((c) => c.error).length,
    turns: turns.length,
    latency_ms: {
      ...summary(latencies()),
      by_kind: Object.fromEntries(
        (['question', 'statement', 'yes_no', 'spelled', 'interruption'] as Kind[]).map((k) => [k, summary(latencies(k))]),
      ),
    },
    greeting_ms: summary(calls.filter((c) => c.greetingMs !== null).map((c) => c.greetingMs!)),
    turn_taking_errors: {
      backchannel_interrupted: rate(scored('backchannel').filter((t) => t.backchannelInterrupted).length, scored('backchannel').length),
      spelling_cut: rate(scored('spelled').filter((t) => t.spellingCut).length, scored('spelled').length),
      yes_no_dropped: rate(scored('yes_no').filter((t) => t.yesNoDropped).length, scored('yes_no').length),
      interruption_ignored: rate(scored('interruption').filter((t) => !t.interruptionHonoured).length, scored('interruption').length),
      agent_spoke_over_caller: rate(turns.filter((t) => t.overlapped).length, turns.filter((t) => !isDuringKind(t.kind)).length),
      no_reply: rate(turns.filter((t) => t.noReply).length, turns.filter((t) => t.kind !== 'backchannel').length),
    },
    said_after_the_reply_ended: turns.filter((t) => t.duringAgentSpeech === false).length,
    barge_in_ms: summary(turns.filter((t) => typeof t.bargeInMs === 'number').map((t) => t.bargeInMs!)),
    stages_ms: stageRows.length
      ? {
          agent_turns: stageRows.length,
          ...Object.fromEntries(
            STAGES.map((k) => {
              const values = stageRows.map((r) => r[k]).filter((v): v is number => v !== null);
              return [k, { ...summary(values), missing: stageRows.length - values.length }];
            }),
          ),
        }
      : 'no audit rows read (no API given, or the engine wrote none)',
    protocol_errors: calls.flatMap((c) => c.protocolErrors).slice(0, 20),
    errors: calls.filter((c) => c.error).map((c) => `call ${c.call}: ${c.error}`),
  };
}

const isDuringKind = (k: Kind) => k === 'backchannel' || k === 'interruption';

// ---- the run ----

export interface VoiceBenchOptions {
  calls: number;
  concurrency: number;
  turns?: number;
  engineUrl?: string;
  stub?: boolean;
  check?: boolean;
  verbose?: boolean;
}

export async function benchVoice(options: VoiceBenchOptions) {
  const full = loadVoiceScript();
  const script = options.turns ? { ...full, turns: trimTurns(full.turns, options.turns) } : full;
  const kinds = Object.fromEntries(
    ['question', 'statement', 'yes_no', 'spelled', 'backchannel', 'interruption'].map((k) => [
      k,
      script.turns.filter((t) => t.kind === k).length,
    ]),
  );
  if (options.check) return { script: SCRIPT_PATH, turns: script.turns.length, kinds };

  let engine: BenchEngine;
  try {
    engine = options.stub ? await stubEngine() : options.engineUrl ? engineAt(options.engineUrl) : await startEngineForBench();
  } catch (error) {
    // `npm run bench` with no names runs every bench: this one then says why it did not run instead of stopping the rest.
    if (error instanceof EngineNotStarted) return { skipped: error.message };
    throw error;
  }
  try {
    // Every sentence synthesized once before the calls (the callers share the cache), so no turn waits on the voice.
    const source = engine.speechBaseUrl ? { speechBaseUrl: engine.speechBaseUrl } : ({ espeak: true } as const);
    const texts = new Set(script.turns.flatMap((t) => (t.kind === 'spelled' ? t.parts : [t.say])));
    const started = performance.now();
    for (const text of texts) await synthesize(text, source);
    const synthesisMs = performance.now() - started;

    const records: CallRecord[] = [];
    let nextCall = 0;
    const lane = async () => {
      while (nextCall < options.calls) {
        const call = nextCall++;
        records.push(await playCall(engine, script, call, Boolean(options.verbose)));
      }
    };
    const runStarted = performance.now();
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, options.calls)) }, lane));
    return {
      engine: options.stub ? 'stub (bench/voice-stub-engine.ts)' : engine.url,
      voice: engine.speechBaseUrl ? 'speech server' : 'espeak-ng',
      script: { turns: script.turns.length, kinds },
      concurrency: options.concurrency,
      expected_latency_ms: engine.expectedLatencyMs,
      synthesis_s: Math.round(synthesisMs) / 1000,
      run_s: Math.round(performance.now() - runStarted) / 1000,
      ...voiceReport(records.sort((a, b) => a.call - b.call)),
      notes:
        'latency: the caller’s last audible frame (RMS ≥ 250 of PCM16) to the agent’s first audible frame as played at 8,000 bytes/s; percentiles nearest rank; a turn the agent spoke over is not in the latency',
    };
  } finally {
    await engine.close();
  }
}

/** The first `count` turns, keeping a backchannel or interruption with the turn it follows. */
function trimTurns(turns: VoiceTurn[], count: number): VoiceTurn[] {
  let end = Math.min(count, turns.length);
  while (end < turns.length && isDuring(turns[end]!)) end++;
  return turns.slice(0, end);
}
