import { startBenchEnvironment } from './environment';
import { benchIdentity } from './identity';
import { benchAccounts } from './accounts';
import { benchCampaigns } from './campaigns';
import { benchPacing } from './pacing';
import { benchOutreach } from './outreach';
import { benchAuthFlood } from './auth-flood';
import { benchRateLimits } from './rate-limits';
import { benchRequestCost } from './request-cost';
import { benchBodyFlood } from './body-flood';
import { benchCustomData } from './custom-data';
import { benchNotifications } from './notifications';
import { benchWebhooks } from './webhooks';
import { benchIntelligence } from './intelligence';
import { benchMixedLoad } from './load';
import { benchKnowledgeBase } from './knowledge-base';
import { benchRetrieval } from './retrieval';
import { benchLlmLocal } from './llm-local';
import { benchLlmWriters } from './llm-writers';
import { benchAnalyticsAccuracy } from './analytics/accuracy';
import { benchAnalyticsParser } from './analytics/parser-accuracy';
import { benchChatAccuracy } from './chat/accuracy';
import { benchAssistantsLatency } from './assistants-latency';
import { benchAssistantsHeldOut } from './assistants/heldout';
import { benchSpeech } from './speech';
import { benchVoice } from './voice';
import { benchVoiceScale } from './voice-scale';
import { benchVoiceFailover } from './voice-failover';
import { benchReplay } from './replay';

// `npm run bench [-- name ...] [-- --seconds N]`: runs the named benchmarks (all by default) and prints
// their figures as JSON. Every run is bounded in time and sends traffic to loopback only.
const args = process.argv.slice(2);
const secondsFlag = args.indexOf('--seconds');
const seconds = secondsFlag >= 0 ? Number(args[secondsFlag + 1]) : 10;
// Flags followed by a value (that value is not a bench's name).
const VALUE_FLAGS = new Set([
  '--seconds',
  '--calls',
  '--concurrency',
  '--turns',
  '--engine',
  '--levels',
  '--rounds',
  '--cores',
  '--kills',
  '--frozen',
]);
const flagValue = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const names = args.filter((a, i) => !a.startsWith('--') && !VALUE_FLAGS.has(args[i - 1] ?? ''));

const BENCHES = {
  identity: async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchIdentity(env, seconds);
    } finally {
      await env.close();
    }
  },
  accounts: async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchAccounts(env, seconds);
    } finally {
      await env.close();
    }
  },
  // GET /me with rate limits off, on (leased), and on with a database statement per request, on one database.
  'rate-limits': async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchRateLimits(env, seconds);
    } finally {
      await env.close();
    }
  },
  // GET /me (ak_ key): the API process at LOG_LEVEL info and warn, limits on and off, vs a bare Koa app in a
  // process of its own, load from a third (--seconds per run, default 10; --rounds, default 2).
  'request-cost': async () => {
    const env = await startBenchEnvironment();
    try {
      const rate = flagValue('--rate');
      return await benchRequestCost(
        env,
        secondsFlag >= 0 ? seconds : 10,
        Number(flagValue('--rounds') ?? 2),
        rate ? Number(rate) : undefined,
      );
    } finally {
      await env.close();
    }
  },
  // Starts its own Postgres and API, twice (default limits, then limits off).
  'auth-flood': () => benchAuthFlood(seconds),
  // Unauthenticated 48 MB bodies from another process while a client lists tags.
  'body-flood': async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchBodyFlood(env, seconds);
    } finally {
      await env.close();
    }
  },
  // Starts its own Temporal dev server, Postgres, API and worker.
  campaigns: () => benchCampaigns(),
  // Dial pacing at 1, 10 and 100 calls a second: its own Temporal dev server, Postgres, API and worker.
  pacing: () => benchPacing(),
  'custom-data': async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchCustomData(env);
    } finally {
      await env.close();
    }
  },
  // Starts its own Temporal dev server, Postgres, API and worker.
  notifications: () => benchNotifications(),
  // Starts its own Temporal dev server, Postgres, API, worker and a discarding SMTP server.
  outreach: () => benchOutreach(),
  // Starts its own Temporal dev server, Postgres, API, worker and five local receivers (one down, one slow).
  webhooks: () => benchWebhooks(),
  // Starts its own Temporal dev server, Postgres, API, worker and local company sites.
  intelligence: () => benchIntelligence(seconds),
  // Ingestion chunks/s with the real embedder, then query p50/p95 (whole request, database part) at KB_BENCH_CHUNKS chunks (100k).
  'knowledge-base': () => benchKnowledgeBase(),
  // recall@5 / MRR@10 per question kind on the judged help-centre set (bench/retrieval/); `--check` only checks the set.
  retrieval: () => benchRetrieval({ check: args.includes('--check') }),
  // Execution accuracy of the Analytics Assistant's model per difficulty (bench/analytics/); `--check` only runs the gold SQL.
  'analytics-accuracy': () =>
    benchAnalyticsAccuracy({
      check: args.includes('--check'),
      limit: process.env.ANALYTICS_BENCH_LIMIT ? Number(process.env.ANALYTICS_BENCH_LIMIT) : undefined,
    }),
  // The Analytics Assistant on the defaults (semantic layer + question parser) over the golden set's three phrasings.
  'analytics-parser': () =>
    benchAnalyticsParser({
      verbose: args.includes('--verbose'),
      heldOut: args.includes('--held-out'),
      kinds: args.includes('--kinds'),
      lexical: args.includes('--lexical'),
      noModel: args.includes('--no-model'),
      complete: args.includes('--complete'),
    }),
  // The AI chat on the defaults over the chat task set (three phrasings each): reads, exact proposals, clarifications, refusals.
  'chat-accuracy': () =>
    benchChatAccuracy({
      verbose: args.includes('--verbose'),
      heldOut: args.includes('--held-out'),
      kinds: args.includes('--kinds'),
      lexical: args.includes('--lexical'),
    }),
  // Both assistants on the defaults over the held-out set kept apart (bench/fixtures/assistants-heldout.json): accuracy and confident wrong answers per kind.
  'assistants-heldout': () =>
    benchAssistantsHeldOut({
      verbose: args.includes('--verbose'),
      lexical: args.includes('--lexical'),
      model: args.includes('--model'),
      complete: args.includes('--complete'),
    }),
  // Both assistants on the defaults end to end (API, Temporal dev server, worker, local embedder): p50/p95 s to first text and to end.
  'assistants-latency': () => benchAssistantsLatency({ verbose: args.includes('--verbose') }),
  // The local language model: load time, time to first token, tokens/s (LLM_BENCH_THREADS, default 1,2).
  'llm-local': () => benchLlmLocal(),
  // The judged sample of each LlmWriter feature, built-in writer and local model side by side (on stderr).
  'llm-writers': () => benchLlmWriters(),
  // The local speech models: recognizers' WER and time on bench/fixtures/voice/, voice, VAD, turn model, served latencies.
  speech: () => benchSpeech(),
  // Simulated Twilio callers through bench/fixtures/voice-script.json: voice-to-voice p50/p95, turn-taking errors, the
  // audit rows' split by stage (--calls N, --concurrency C, --turns K, --engine ws://…, --stub, --check, --verbose).
  voice: () =>
    benchVoice({
      calls: Number(flagValue('--calls') ?? 3),
      concurrency: Number(flagValue('--concurrency') ?? 1),
      turns: flagValue('--turns') ? Number(flagValue('--turns')) : undefined,
      engineUrl: flagValue('--engine'),
      stub: args.includes('--stub'),
      check: args.includes('--check'),
      verbose: args.includes('--verbose'),
    }),
  // Concurrent simulated callers against one engine on the local models (1, 2, 4, 6, 8 …): voice-to-voice p50/p95 at each
  // level, and the conversations per core before p95 doubles (--levels, --turns, --rounds, --cores, --all, --cloud, --verbose).
  // N recorded conversations (default 50, synthesized with dual-channel recordings) replayed through a second version as
  // one batch: total time, per-conversation time, turns changed (--calls N).
  replay: () => benchReplay({ calls: Number(flagValue('--calls') ?? 50) }),
  'voice-scale': () =>
    benchVoiceScale({
      levels: (flagValue('--levels') ?? '1,2,4,6,8').split(',').map(Number),
      turns: Number(flagValue('--turns') ?? 4),
      rounds: Number(flagValue('--rounds') ?? 2),
      cores: flagValue('--cores') ? Number(flagValue('--cores')) : undefined,
      all: args.includes('--all'),
      cloud: args.includes('--cloud'),
      verbose: args.includes('--verbose'),
    }),
  // Silence a caller hears when the call's engine is killed mid-sentence (SIGKILL; --frozen N: SIGSTOP), until the next
  // engine's first audible frame: n, p50, p95, max, failures over --kills N (default 20), with the load average.
  'voice-failover': () =>
    benchVoiceFailover({
      kills: Number(flagValue('--kills') ?? 20),
      frozen: Number(flagValue('--frozen') ?? 0),
      verbose: args.includes('--verbose'),
    }),
  // 60 s unless --seconds is given; the API runs as a process of its own.
  load: async () => {
    const env = await startBenchEnvironment();
    try {
      return await benchMixedLoad(env, secondsFlag >= 0 ? seconds : 60);
    } finally {
      await env.close();
    }
  },
};

for (const [name, run] of Object.entries(BENCHES)) {
  if (names.length && !names.includes(name)) continue;
  const result = await run();
  process.stdout.write(`${JSON.stringify({ bench: name, ...result }, null, 2)}\n`);
}
process.exit(0);
