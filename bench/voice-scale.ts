import os from 'node:os';
import { synthesize } from '../test/support/voice/speech';
import { type CallRecord, loadVoiceScript, percentile, playCall, type VoiceScript } from './voice';
import { startCloudVoiceEngine } from './voice-cloud';
import { startVoiceBenchEngine, type VoiceBenchEngine } from './voice-engine-env';

// Conversations per core before latency doubles: one engine as `npm start` runs it (bench/voice-engine-env.ts:
// the local speech server and the local model), N simulated Twilio callers at once (1, 2, 4, 6, 8 by default),
// each lane playing `rounds` calls in turn of the script's first `turns` plain turns (question, statement,
// yes/no: no backchannels, interruptions or spelling, whose timing is not a reply's). For each N: voice-to-voice
// p50/p95 over every answered turn, the machine's load average. The answer: the largest N whose p95 stays
// under twice N=1's, divided by the cores the engine and the speech server had.
//
// `npm run bench -- voice-scale [--levels 1,2,4,6,8] [--turns 4] [--rounds 2] [--cores N] [--all] [--cloud] [--verbose]`
//   --cores  the cores the engine and speech server ran on (default: this machine's)
//   --all    every level, instead of stopping at the first whose p95 doubled
//   --cloud  the agent on Deepgram, ElevenLabs and an OpenAI-compatible model, local fakes answering with the
//            providers' latencies (bench/voice-cloud.ts), instead of the local models

export interface VoiceScaleOptions {
  levels: number[];
  turns: number;
  rounds: number;
  cores?: number;
  all?: boolean;
  cloud?: boolean;
  verbose?: boolean;
}

/** The script's greeting and its first `count` turns that are replies to the caller. */
function plainTurns(script: VoiceScript, count: number): VoiceScript {
  const turns = script.turns.filter((t) => t.kind === 'question' || t.kind === 'statement' || t.kind === 'yes_no').slice(0, count);
  return { ...script, turns };
}

const STAGES = ['eot_ms', 'stt_ms', 'llm_first_token_ms', 'tts_first_audio_ms'] as const;
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

export async function benchVoiceScale(options: VoiceScaleOptions) {
  const script = plainTurns(loadVoiceScript(), options.turns);
  const cores = options.cores ?? os.availableParallelism();
  const engine: VoiceBenchEngine & { describe?: () => Record<string, unknown> } = options.cloud
    ? await startCloudVoiceEngine()
    : await startVoiceBenchEngine();
  try {
    const source = engine.speechBaseUrl ? { speechBaseUrl: engine.speechBaseUrl } : ({ espeak: true } as const);
    for (const turn of script.turns) if (turn.kind !== 'spelled' && 'say' in turn) await synthesize(turn.say, source);

    const levels: Record<string, unknown>[] = [];
    let baselineP95: number | null = null;
    let sustained: number | null = null;
    let doubledAt: number | null = null;
    let nextCall = 0;
    for (const n of options.levels) {
      const loadBefore = loadAverage();
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const records: CallRecord[] = [];
      await Promise.all(
        Array.from({ length: n }, async () => {
          for (let round = 0; round < options.rounds; round++)
            records.push(await playCall(engine, script, nextCall++, Boolean(options.verbose)));
        }),
      );
      const latencies = records.flatMap((r) => r.turns).flatMap((t) => (t.latencyMs === null ? [] : [t.latencyMs]));
      const p95 = percentile(latencies, 95);
      baselineP95 ??= p95;
      const doubled = p95 === null || (baselineP95 !== null && p95 >= 2 * baselineP95);
      levels.push({
        concurrent_calls: n,
        calls: records.length,
        calls_failed: records.filter((r) => r.error).length,
        turns_measured: latencies.length,
        turns_without_reply: records.flatMap((r) => r.turns).filter((t) => t.noReply).length,
        // The agent spoke before the caller's turn ended: no latency to count.
        turns_spoken_over: records.flatMap((r) => r.turns).filter((t) => t.overlapped).length,
        latency_ms: { p50: percentile(latencies, 50), p95 },
        p95_vs_one_call: p95 !== null && baselineP95 ? Math.round((p95 / baselineP95) * 100) / 100 : null,
        // Where the time went, from the engine's audit rows (p50 of each stage over the level's agent turns).
        stages_ms_p50: Object.fromEntries(
          STAGES.map((k) => [
            k,
            percentile(
              records.flatMap((r) => r.stageTimings.flatMap((t) => (t[k] == null ? [] : [t[k]!]))),
              50,
            ),
          ]),
        ),
        greeting_ms_p50: percentile(
          records.flatMap((r) => (r.greetingMs === null ? [] : [r.greetingMs])),
          50,
        ),
        run_s: Math.round(performance.now() - started) / 1000,
        // Cores the bench's own process used (the engine, the API, the simulated callers, the fakes): CPU time / run time.
        process_cores: Math.round((cpuSeconds(process.cpuUsage(cpuBefore)) / ((performance.now() - started) / 1000)) * 100) / 100,
        load_average: { before: loadBefore, after: loadAverage() },
        errors: records.filter((r) => r.error).map((r) => `call ${r.call}: ${r.error}`),
      });
      process.stderr.write(`[voice-scale] ${JSON.stringify(levels.at(-1))}\n`);
      if (doubled) {
        doubledAt ??= n;
        if (!options.all) break;
      } else if (doubledAt === null) sustained = n;
    }
    return {
      engine: engine.url,
      model: engine.model,
      ...engine.describe?.(),
      script: { greeting: script.greeting, turns: script.turns.map((t) => t.kind) },
      rounds_per_lane: options.rounds,
      cores,
      levels,
      p95_doubled_at: doubledAt,
      conversations_before_p95_doubles: sustained,
      conversations_per_core: sustained === null ? null : Math.round((sustained / cores) * 100) / 100,
      notes:
        'latency: the caller’s last audible frame to the agent’s first audible frame; nearest-rank percentiles over every answered turn at that level; a level "doubled" when its p95 is at least twice the first level’s; load_average is the whole machine’s (1, 5, 15 min)',
    };
  } finally {
    await engine.close();
  }
}
