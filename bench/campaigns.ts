import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import net from 'node:net';
import type { Client } from '@temporalio/client';
import postgres from 'postgres';
import { DEFAULT_CALLING_WINDOW } from '../domain/campaign-schedule';
import { newId } from '../platform/core/ids';
import * as contactsDb from '../db/campaign-contacts';
import * as campaignsDb from '../db/campaigns';
import { createCampaign } from '../services/campaigns/campaigns';
import { startWorkflow } from '../services/workflow-client';
import { campaignWorkflowId, campaignWorkflowRef } from '../workflows/campaign-messages';
import { ORGANIZATION_ID, organizationAttribute } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { type BenchEnvironment, jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// Campaign dispatch on a real Temporal dev server, Postgres and worker, with the simulated dialer at a
// fixed latency: 10k contacts under an organization limit of 500. Figures: the peak of calls in flight
// (must equal the limit and never pass it), dispatch throughput against limit / latency (goal ≥ 80 %),
// and the p50 of POST /campaign/campaigns against a bare client workflow start made in the same run
// (goal ≤ 1.5×). As in production, the worker is a process of its own (worker/main.ts), so the API's
// figures are not those of a process that also runs every activity. Everything is on loopback and
// bounded in time.
//
// BENCH_CAMPAIGN_PARTS picks what runs (default `create,dispatch`); `scale` is dispatch at scale:
// BENCH_CAMPAIGN_SCALE_CONTACTS contacts (20,000) under a limit of BENCH_CAMPAIGN_SCALE_LIMIT (5,000),
// first with one worker process, then with a second one polling the same task queue.

const CONTACTS = Number(process.env.BENCH_CAMPAIGN_CONTACTS ?? 10_000);
const LIMIT = Number(process.env.BENCH_CAMPAIGN_LIMIT ?? 500);
const LATENCY_MS = Number(process.env.BENCH_CAMPAIGN_LATENCY_MS ?? 2000);
const PERSIST = process.env.BENCH_TEMPORAL_PERSIST === '1';
const PARTS = new Set((process.env.BENCH_CAMPAIGN_PARTS ?? 'create,dispatch').split(','));
const SCALE_CONTACTS = Number(process.env.BENCH_CAMPAIGN_SCALE_CONTACTS ?? 20_000);
const SCALE_LIMIT = Number(process.env.BENCH_CAMPAIGN_SCALE_LIMIT ?? 5_000);
const CREATES = 200;
const DEADLINE_MS = 15 * 60_000;

/**
 * The create's round trips, counted on the service call itself (no HTTP): Postgres statements, writes
 * on the pool's one connection (statements sent together share one write and one wait), and Temporal
 * calls. The second of two creates is counted, so the connection and its prepared statements exist.
 */
async function countRoundTrips(
  bench: BenchEnvironment,
  orgId: string,
  body: { name: string; agent_id: string; contacts: { phone_numbers: string[] }[] },
) {
  let statements = 0;
  let temporalCalls = 0;
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {}, debug: () => void statements++ });
  const { temporal } = bench.deps;
  const counting = Object.assign(Object.create(temporal) as Client, {
    workflow: Object.assign(Object.create(temporal.workflow), {
      start: (...args: Parameters<Client['workflow']['start']>) => {
        temporalCalls += 1;
        return temporal.workflow.start(...args);
      },
    }),
  });
  const deps = { ...bench.deps, sql: sql as never, temporal: counting };
  const input = {
    ...body,
    priority: 0,
    timezone: 'UTC',
    calling_window: DEFAULT_CALLING_WINDOW,
    max_attempts: 3,
    retry_backoff_seconds: 600,
  };
  const port = Number(new URL(bench.databaseUrl).port);
  const write = net.Socket.prototype.write;
  let writes = 0;
  try {
    await createCampaign(deps, orgId, 'user:bench', { ...input, name: `${body.name} (warm-up)` });
    statements = temporalCalls = 0;
    net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes += 1;
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof write;
    await createCampaign(deps, orgId, 'user:bench', input);
  } finally {
    net.Socket.prototype.write = write;
    await sql.end();
  }
  return { postgres_statements: statements, postgres_round_trips: writes, temporal_calls: temporalCalls };
}

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
  const workers: ChildProcess[] = [];
  const bringUpWorker = async () => {
    workers.push(
      await startWorker({
        ...dialer,
        DATABASE_URL: env.databaseUrl,
        DATABASE_POOL_MAX: '20',
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_TASK_QUEUE: 'bench-campaigns',
        DATA_DIR: workerDir,
      }),
    );
  };
  try {
    return await measure(env, bringUpWorker, () => workers.length);
  } finally {
    for (const worker of workers) await stopWorker(worker);
    await env.close();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
    fs.rmSync(temporalDir, { recursive: true, force: true });
  }

  async function measure(
    bench: Awaited<ReturnType<typeof startBenchEnvironment>>,
    bringUpWorker: () => Promise<void>,
    runningWorkers: () => number,
  ) {
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
    const always = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
    // Exchange 200 on: a NANP exchange never starts with 0 or 1, and the API refuses numbers no region assigns.
    const phone = (i: number) => `+1415${String(2_000_000 + i).slice(-7)}`;

    // 1. Create latency: POST /campaign/campaigns (10 contacts; row and contacts in one transaction, the
    // workflow's start after the answer) against a bare client start of the same workflow type, interleaved.
    // First with no worker polling (what the API adds to a start), then with the worker running the started
    // workflows.
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
    // Beside the POST and the bare start, in the same loop: the POST followed until its workflow exists (the
    // start is made after the answer, so this is create-to-workflow), the service's create called directly
    // (what it adds without HTTP), the previous create (the start overlapping the transaction, which took the
    // campaign's advisory lock, pipelined its inserts and committed once the start answered; replicated here
    // on the same db functions), and the HTTP floor: the same POST refused by validation (HTTP, key check,
    // body parse; no database, no Temporal).
    const serviceInput = (i: number) => ({
      ...smallBody(i),
      priority: 0,
      timezone: 'UTC',
      calling_window: DEFAULT_CALLING_WINDOW,
      max_attempts: 3,
      retry_backoff_seconds: 600,
    });
    const previousCreate = async (i: number) => {
      const input = serviceInput(i);
      const id = newId();
      const started = startWorkflow(deps, campaignWorkflowRef, orgId, {
        workflowId: campaignWorkflowId(id),
        args: [{ campaignId: id, orgId }],
      });
      started.catch(() => {});
      await deps.sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtext('campaign'), hashtext(${`${orgId}:${id}`}))`;
        await Promise.all([
          campaignsDb.missingAgents(tx, orgId, [agentId]),
          campaignsDb.insertCampaign(tx, orgId, {
            ...input,
            id,
            external_id: null,
            configuration_id: null,
            agent_number: null,
            version: null,
            created_by: 'user:bench',
          }),
          contactsDb.insertContacts(tx, orgId, id, input.contacts),
        ]);
        await started;
      });
    };
    // When each start the service makes has answered, by workflow id: the create's start runs after its
    // answer, so create-to-workflow is read here instead of by polling Temporal.
    const startAnswered = new Map<string, Promise<number>>();
    const workflowClient = deps.temporal.workflow;
    const start = workflowClient.start.bind(workflowClient);
    workflowClient.start = ((type: string, options: { workflowId: string }) => {
      const started = start(type, options as never);
      startAnswered.set(
        options.workflowId,
        started.then(
          () => performance.now(),
          () => Number.NaN,
        ),
      );
      return started;
    }) as typeof workflowClient.start;
    const untilWorkflow = async (i: number) => {
      const { id } = (await call('POST', '/campaign/campaigns', smallBody(i))) as { id: string };
      const answered = await startAnswered.get(campaignWorkflowId(id));
      startAnswered.delete(campaignWorkflowId(id));
      if (answered === undefined || Number.isNaN(answered)) throw new Error(`the start of campaign ${id} failed or was not made`);
    };
    const httpFloor = (i: number) =>
      fetch(`${baseUrl}/campaign/campaigns`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...smallBody(i), name: '' }),
      }).then(async (res) => {
        await res.text();
        if (res.status !== 422) throw new Error(`expected 422, got ${res.status}`);
      });
    // The same POST through node:http with a keep-alive agent: fetch (undici) adds about 1 ms of its own per
    // request on this machine (web streams, res.json()), which is the client's cost, not the service's.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const postNodeHttp = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const payload = JSON.stringify(smallBody(i));
        const req = http.request(
          `${baseUrl}/campaign/campaigns`,
          {
            method: 'POST',
            agent,
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              res.statusCode === 200
                ? resolve()
                : reject(new Error(`POST /campaign/campaigns: ${res.statusCode} ${Buffer.concat(chunks)}`)),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    const compareCreates = async () => {
      const variants = {
        post_campaign: () => call('POST', '/campaign/campaigns', smallBody(serial++)),
        post_campaign_node_http: () => postNodeHttp(serial++),
        post_until_workflow_exists: () => untilWorkflow(serial++),
        bare_start: startBare,
        service_create: () => createCampaign(deps, orgId, 'user:bench', serviceInput(serial++)),
        previous_service_create: () => previousCreate(serial++),
        http_floor_422: () => httpFloor(serial++),
      };
      const times = Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]])) as Record<keyof typeof variants, number[]>;
      // A call refused with 503 (a Temporal call past its deadline on a loaded machine) is counted and timed.
      const unavailable = Object.fromEntries(Object.keys(variants).map((k) => [k, 0])) as Record<keyof typeof variants, number>;
      const order = Object.entries(variants);
      for (let i = 0; i < 20 + CREATES; i++) {
        // Rotated each round, so every variant follows every other equally often: a call right after a
        // Temporal call is faster than one after a pause (the gRPC connection and the threads are warm).
        for (const [name, run] of [...order.slice(i % order.length), ...order.slice(0, i % order.length)]) {
          const t0 = performance.now();
          try {
            await run();
          } catch (error) {
            if (!/: 503 |unavailable|deadline/i.test(String(error) + String((error as { kind?: string }).kind))) throw error;
            unavailable[name as keyof typeof variants] += 1;
          }
          if (i >= 20) times[name as keyof typeof variants].push(performance.now() - t0);
        }
      }
      const p50 = (name: keyof typeof variants) => percentile(times[name], 50);
      return {
        ...Object.fromEntries(
          Object.keys(variants).flatMap((k) => [
            [`${k}_p50_ms`, p50(k as keyof typeof variants)],
            [`${k}_p95_ms`, percentile(times[k as keyof typeof variants], 95)],
          ]),
        ),
        ratio_p50: Number((p50('post_campaign') / p50('bare_start')).toFixed(2)),
        node_http_ratio_p50: Number((p50('post_campaign_node_http') / p50('bare_start')).toFixed(2)),
        until_workflow_ratio_p50: Number((p50('post_until_workflow_exists') / p50('bare_start')).toFixed(2)),
        service_ratio_p50: Number((p50('service_create') / p50('bare_start')).toFixed(2)),
        previous_service_ratio_p50: Number((p50('previous_service_create') / p50('bare_start')).toFixed(2)),
        http_floor_over_bare_p50: Number((p50('http_floor_422') / p50('bare_start')).toFixed(2)),
        unavailable,
      };
    };
    const result: Record<string, unknown> = { temporal_persistence: PERSIST ? 'sqlite file' : 'in-memory' };
    if (PARTS.has('create')) {
      result.create = {
        round_trips: await countRoundTrips(bench, orgId, smallBody(serial++)),
        no_worker_polling: await compareCreates(),
      };
      await bringUpWorker();
      (result.create as Record<string, unknown>).worker_running = await compareCreates();
      result.create_goal = 'ratio_p50 <= 1.5 (POST against the bare start)';
      process.stderr.write(`${JSON.stringify(result.create)}\n`); // kept if a later part fails
    }

    // 2. Dispatch: one campaign of `contacts` contacts under `limit`, resumed; the in-flight count sampled meanwhile.
    let offset = 5_000_000;
    const dispatch = async (count: number, limit: number) => {
      await call('PUT', '/campaign/concurrency-settings', { concurrency_limit: limit });
      // Loaded while paused, in requests of at most 10,000 contacts (the API's bound).
      const first = Math.min(count, 10_000);
      const contactsFrom = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ phone_numbers: [phone(from + i)] }));
      const big = await call('POST', '/campaign/campaigns', {
        name: `Bench ${count}`,
        agent_id: agentId,
        calling_window: always,
        contacts: contactsFrom(offset, first),
      });
      for (let done = first; done < count; done += 10_000)
        await call('POST', `/campaign/campaigns/${big.id}/contacts`, {
          contacts: contactsFrom(offset + done, Math.min(10_000, count - done)),
        });
      offset += count;
      const resumedAt = performance.now();
      // On a loaded machine the move can pass the API's Temporal deadline (503) and still be applied.
      for (let attempt = 1; ; attempt++) {
        try {
          await call('POST', `/campaign/campaigns/${big.id}/resume`);
          break;
        } catch (error) {
          const status = (await call('GET', `/campaign/campaigns/${big.id}`)).status as string;
          if (status !== 'paused') break;
          if (attempt >= 5 || !String(error).includes(': 503 ')) throw error;
        }
      }
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
      let first_ = Number.POSITIVE_INFINITY;
      let last = 0;
      for (const r of rows) {
        first_ = Math.min(first_, r.placed_at.getTime());
        last = Math.max(last, r.due_at.getTime());
      }
      const ideal = (limit * 1000) / LATENCY_MS;
      const callsPerSecond = rows.length / ((last - first_) / 1000);
      let dispatcherRuns = 0;
      for await (const _run of deps.temporal.workflow.list({ query: `WorkflowId = 'campaign-dispatcher:${orgId}'` })) dispatcherRuns += 1;
      return {
        contacts: count,
        limit,
        worker_processes: runningWorkers(),
        calls: rows.length,
        peak_ringing: ringingPeak,
        peak_active_sampled: sampledPeak,
        calls_per_second: Number(callsPerSecond.toFixed(1)),
        ideal_calls_per_second: ideal,
        efficiency: Number((callsPerSecond / ideal).toFixed(3)),
        // Time to place every call once: the part of the wall time the dispatcher controls.
        seconds_first_to_last_placed: Number(((Math.max(...rows.map((r) => r.placed_at.getTime())) - first_) / 1000).toFixed(1)),
        wall_seconds_resume_to_completed: Number(wallSeconds.toFixed(1)),
        dispatcher_runs_so_far: dispatcherRuns,
      };
    };
    if (PARTS.has('dispatch') || PARTS.has('scale')) {
      if (!runningWorkers()) await bringUpWorker();
    }
    if (PARTS.has('dispatch')) {
      result.dispatch = await dispatch(CONTACTS, LIMIT);
      result.dispatch_goal = 'peak_ringing == limit (never above); efficiency >= 0.8';
    }
    if (PARTS.has('scale')) {
      const one = await dispatch(SCALE_CONTACTS, SCALE_LIMIT);
      await bringUpWorker();
      const two = await dispatch(SCALE_CONTACTS, SCALE_LIMIT);
      result.scale = {
        one_worker: one,
        two_workers: two,
        two_over_one_calls_per_second: Number((two.calls_per_second / one.calls_per_second).toFixed(2)),
      };
    }
    return { name: `campaigns (${[...PARTS].join(', ')}), simulated latency ${LATENCY_MS} ms`, ...result };
  }
}
