import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// Dial pacing (services/campaigns/pacing.ts) on a real Temporal dev server, Postgres and worker process, with
// the simulated dialer at 200 ms a call: one organization per pace (1, 10 and 100 calls a second), its calls
// from 20 caller numbers (so the per-number pace, at most 10, never binds before the account's), a
// concurrency limit far above what the pace keeps in flight. Figures from the dialer's own stamps
// (dialer_simulated_calls.placed_at, Postgres's clock as each call is handed over): the rate over a measured
// window, the most calls in any one-second window (never above the pace), and the shortest time any `pace`
// consecutive gaps took (a second at the gate; less by the stamps' jitter). 20,000 contacts at 100 a second; at 1 and 10 a second a
// sample (BENCH_PACING_SAMPLE_S seconds of calls, 60 by default, plus 10), since 20,000 would take 5.5 h and
// 33 min. Bounded in time; loopback only.

const CONTACTS = Number(process.env.BENCH_PACING_CONTACTS ?? 20_000);
const SAMPLE_S = Number(process.env.BENCH_PACING_SAMPLE_S ?? 60);
const PACES = (process.env.BENCH_PACING_RATES ?? '1,10,100').split(',').map(Number);
const LATENCY_MS = 200;
const NUMBERS = 20;
const PER_REQUEST = 10_000;

const callerNumber = (i: number) => `+1415${String(2_000_000 + (i % NUMBERS))}`;
const contactNumber = (i: number) => `+1628${String(2_000_000 + i)}`;

export async function benchPacing() {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      searchAttributes: [ORGANIZATION_ID],
      log: { format: 'json', level: 'error' },
    },
  });
  const dialer = {
    DIALER_SIMULATED_ALLOWED: 'true',
    DIALER_SIMULATED_LATENCY_MS: String(LATENCY_MS),
    DIALER_SIMULATED_OUTCOMES: 'completed:1',
    CAMPAIGN_DISPATCH_PAGE_SIZE: '5000',
  };
  const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-pacing', ...dialer });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-pacing-'));
  let worker: ChildProcess | undefined;
  try {
    worker = await startWorker({
      ...dialer,
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-pacing',
      DATA_DIR: workerDir,
    });
    const results = [];
    for (const pace of PACES) results.push(await measurePace(pace));
    return { contacts: CONTACTS, sample_seconds: SAMPLE_S, latency_ms: LATENCY_MS, caller_numbers: NUMBERS, paces: results };
  } finally {
    await stopWorker(worker);
    await env.close();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  }

  async function measurePace(pace: number) {
    const org = `bench-pacing-${pace}`;
    const session = await env.deps.devIdp!.sign({
      sub: 'bench-user',
      org_id: org,
      org_ids: [org],
      permissions: ['api:read', 'api:manage', 'agents:manage'],
    });
    const call = jsonCaller(env.baseUrl, () => session);
    const agentId = (await call('POST', '/core/agents', { name: 'Bench caller' })).id as string;
    const orgId = (await call('GET', '/me')).organization.id as string;
    await call('PUT', '/campaign/concurrency-settings', {
      concurrency_limit: 10_000,
      calls_per_second: pace,
      calls_per_second_per_number: Math.min(10, pace),
    });
    // All 20,000 at 100 a second (200 s); a sample of the sample's seconds plus 10 at a slower pace.
    const contacts = pace >= 100 ? CONTACTS : Math.min(CONTACTS, pace * (SAMPLE_S + 10));
    const batch = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => ({ phone_numbers: [contactNumber(from + k)], agent_number: callerNumber(from + k) }));
    const always = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
    const campaign = await call('POST', '/campaign/campaigns', {
      name: `Pace ${pace}`,
      agent_id: agentId,
      calling_window: always,
      contacts: batch(0, Math.min(contacts, PER_REQUEST)),
    });
    for (let from = PER_REQUEST; from < contacts; from += PER_REQUEST)
      await call('POST', `/campaign/campaigns/${campaign.id}/contacts`, { contacts: batch(from, Math.min(contacts, from + PER_REQUEST)) });
    await call('POST', `/campaign/campaigns/${campaign.id}/resume`);

    const deadline = Date.now() + (contacts / pace) * 1000 + 120_000;
    let placed: number[] = [];
    while (placed.length < contacts) {
      if (Date.now() > deadline) throw new Error(`pace ${pace}: ${placed.length} of ${contacts} calls placed in time`);
      await new Promise((r) => setTimeout(r, 1000));
      placed = (
        await env.deps.sql<{ at: number }[]>`
          SELECT extract(epoch FROM placed_at) * 1000 AS at FROM dialer_simulated_calls WHERE org_id = ${orgId} ORDER BY placed_at`
      ).map((r) => Number(r.at));
    }
    // The window: from the first call, the sample's seconds (or every call, when all fit in less).
    const first = placed[0]!;
    const windowMs = Math.min(SAMPLE_S * 1000, placed.at(-1)! - first);
    // Calls after the first, over the time from the first to the last of the window.
    const inWindow = placed.filter((t) => t <= first + windowMs);
    const windowRate = ((inWindow.length - 1) / (inWindow.at(-1)! - first)) * 1000;
    let busiestSecond = 0;
    for (let i = 0, j = 0; i < placed.length; i++) {
      while (placed[j]! < placed[i]! - 999.999) j++;
      busiestSecond = Math.max(busiestSecond, i - j + 1);
    }
    let tightest = Infinity;
    for (let i = 0; i + pace < placed.length; i++) tightest = Math.min(tightest, placed[i + pace]! - placed[i]!);
    return {
      pace,
      contacts,
      placed: placed.length,
      window_s: Number((windowMs / 1000).toFixed(1)),
      placed_per_second: Number(windowRate.toFixed(3)),
      all_calls_per_second: Number((((placed.length - 1) / (placed.at(-1)! - first)) * 1000).toFixed(3)),
      busiest_second: busiestSecond,
      tightest_pace_gaps_ms: Number(tightest.toFixed(1)),
    };
  }
}
