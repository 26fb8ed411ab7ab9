import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { newId } from '../platform/ids';
import { ORGANIZATION_ID, organizationAttribute } from '../platform/temporal';
import { findTemporalCli } from '../platform/tools';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// Campaign dispatch on a real Temporal dev server, Postgres and worker, with the simulated dialer at a
// fixed latency: 10k contacts under an organization limit of 500. Figures: the peak of calls in flight
// (must equal the limit and never pass it), dispatch throughput against limit / latency (goal ≥ 80 %),
// and the p50 of POST /campaign/campaigns against a bare client workflow start made in the same run
// (goal ≤ 1.5×). As in production, the worker is a process of its own (worker/main.ts), so the API's
// figures are not those of a process that also runs every activity. Everything is on loopback and
// bounded in time.

const CONTACTS = Number(process.env.BENCH_CAMPAIGN_CONTACTS ?? 10_000);
const LIMIT = Number(process.env.BENCH_CAMPAIGN_LIMIT ?? 500);
const LATENCY_MS = Number(process.env.BENCH_CAMPAIGN_LATENCY_MS ?? 2000);
const PERSIST = process.env.BENCH_TEMPORAL_PERSIST === '1';
const CREATES = 200;
const DEADLINE_MS = 15 * 60_000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2));
};

export async function benchCampaigns() {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  // BENCH_TEMPORAL_PERSIST=1: the dev server keeps its state in a SQLite file, as `npm start` runs it,
  // instead of in memory; a workflow start then includes Temporal's own write, as in production.
  const temporalDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-temporal-'));
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      searchAttributes: [ORGANIZATION_ID],
      log: { format: 'json', level: 'error' },
      ...(PERSIST ? { dbFilename: path.join(temporalDir, 'temporal.db') } : {}),
    },
  });
  const dialer = {
    DIALER_SIMULATED_LATENCY_MS: String(LATENCY_MS),
    DIALER_SIMULATED_OUTCOMES: 'completed:1',
  };
  const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-campaigns', ...dialer });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-worker-'));
  let worker: ChildProcess | undefined;
  const bringUpWorker = async () => {
    worker = await startWorker({
      ...dialer,
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-campaigns',
      DATA_DIR: workerDir,
    });
  };
  try {
    return await measure(env, bringUpWorker);
  } finally {
    await stopWorker(worker);
    await env.close();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
    fs.rmSync(temporalDir, { recursive: true, force: true });
  }

  async function measure(bench: Awaited<ReturnType<typeof startBenchEnvironment>>, bringUpWorker: () => Promise<void>) {
    const { deps, baseUrl } = bench;
    const session = await deps.devIdp!.sign({
      sub: 'bench-user',
      org_id: 'bench-org',
      org_ids: ['bench-org'],
      permissions: ['api:read', 'api:manage', 'agents:manage'],
    });
    let key: string | undefined;
    const call = jsonCaller(baseUrl, () => key ?? session);
    key = (await call('POST', '/organization-pats', { name: 'bench' })).pat_key as string;
    const agentId = (await call('POST', '/core/agents', { name: 'Bench caller' })).id as string;
    const orgId = (await call('GET', '/me')).organization.id as string;
    await call('PUT', '/campaign/concurrency-settings', { concurrency_limit: LIMIT });
    const always = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
    const phone = (i: number) => `+1415${String(1_000_000 + i).slice(-7)}`;

    // 1. Create latency: POST /campaign/campaigns (10 contacts; row, contacts and workflow start in one
    // transaction) against a bare client start of the same workflow type, interleaved. First with no
    // worker polling (what the API adds to a start), then with the worker running the started workflows.
    const smallBody = (i: number) => ({
      name: `Create ${i}`,
      agent_id: agentId,
      contacts: Array.from({ length: 10 }, (_, j) => ({ phone_numbers: [phone(i * 10 + j)], scheduled_at: '2099-01-01T00:00:00Z' })),
    });
    const startBare = () =>
      deps.temporal.workflow.start('campaignWorkflow', {
        workflowId: `bench-bare:${newId()}`,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ campaignId: newId(), orgId }],
        typedSearchAttributes: organizationAttribute(orgId),
      });
    let serial = 0;
    const compareCreates = async () => {
      for (let i = 0; i < 20; i++) {
        await call('POST', '/campaign/campaigns', smallBody(serial++));
        await startBare();
      }
      const posts: number[] = [];
      const bares: number[] = [];
      for (let i = 0; i < CREATES; i++) {
        let t0 = performance.now();
        await call('POST', '/campaign/campaigns', smallBody(serial++));
        posts.push(performance.now() - t0);
        t0 = performance.now();
        await startBare();
        bares.push(performance.now() - t0);
      }
      return {
        post_campaign_p50_ms: percentile(posts, 50),
        post_campaign_p95_ms: percentile(posts, 95),
        bare_start_p50_ms: percentile(bares, 50),
        bare_start_p95_ms: percentile(bares, 95),
        ratio_p50: Number((percentile(posts, 50) / percentile(bares, 50)).toFixed(2)),
      };
    };
    const createIdle = await compareCreates();
    await bringUpWorker();
    const createBusy = await compareCreates();

    // 2. Dispatch: one campaign of CONTACTS contacts, resumed; the in-flight count sampled meanwhile.
    const contacts = Array.from({ length: CONTACTS }, (_, i) => ({ phone_numbers: [phone(5_000_000 + i)] }));
    const big = await call('POST', '/campaign/campaigns', { name: 'Bench 10k', agent_id: agentId, calling_window: always, contacts });
    const resumedAt = performance.now();
    await call('POST', `/campaign/campaigns/${big.id}/resume`);
    let sampledPeak = 0;
    let status = 'active';
    while (status !== 'completed') {
      if (performance.now() - resumedAt > DEADLINE_MS) throw new Error('dispatch did not finish in time');
      const settings = await call('GET', '/campaign/concurrency-settings');
      sampledPeak = Math.max(sampledPeak, settings.active as number);
      status = (await call('GET', `/campaign/campaigns/${big.id}`)).status as string;
      await new Promise((r) => setTimeout(r, 100));
    }
    const wallSeconds = (performance.now() - resumedAt) / 1000;
    const rows = await deps.sql<{ placed_at: Date; due_at: Date }[]>`
      SELECT placed_at, due_at FROM dialer_simulated_calls WHERE idempotency_key LIKE ${`${big.id}:%`}`;
    const edges = rows.flatMap((r) => [
      [r.placed_at.getTime(), 1],
      [r.due_at.getTime(), -1],
    ]);
    edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    let ringing = 0;
    let ringingPeak = 0;
    for (const [, d] of edges) ringingPeak = Math.max(ringingPeak, (ringing += d!));
    const first = Math.min(...rows.map((r) => r.placed_at.getTime()));
    const last = Math.max(...rows.map((r) => r.due_at.getTime()));
    const ideal = (LIMIT * 1000) / LATENCY_MS;
    const callsPerSecond = rows.length / ((last - first) / 1000);
    let dispatcherRuns = 0;
    for await (const _run of deps.temporal.workflow.list({ query: `WorkflowId = 'campaign-dispatcher:${orgId}'` })) dispatcherRuns += 1;

    return {
      name: `campaign dispatch: ${CONTACTS} contacts, limit ${LIMIT}, simulated latency ${LATENCY_MS} ms`,
      temporal_persistence: PERSIST ? 'sqlite file' : 'in-memory',
      dispatch: {
        calls: rows.length,
        peak_ringing: ringingPeak,
        peak_active_sampled: sampledPeak,
        calls_per_second: Number(callsPerSecond.toFixed(1)),
        ideal_calls_per_second: ideal,
        efficiency: Number((callsPerSecond / ideal).toFixed(3)),
        wall_seconds_resume_to_completed: Number(wallSeconds.toFixed(1)),
        dispatcher_runs: dispatcherRuns,
      },
      create: { no_worker_polling: createIdle, worker_running: createBusy },
      goals: 'peak_ringing == limit (never above); efficiency >= 0.8; ratio_p50 <= 1.5',
    };
  }
}
