import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/webhooks';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { emitWebhookEvent } from '../services/webhooks/emit';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// Webhook delivery under trouble: EVENTS events (`call.ended`, each written in a transaction of its own, RATE a
// second) to five endpoints on 127.0.0.1: three healthy, one down for the first ten minutes (scaled), one that
// answers in SLOW_MS. Time is scaled by SCALE: the outage lasts 600/SCALE s and the retry schedule is Svix's
// divided by SCALE (5 s → 0.5 s, 5 min → 30 s, 30 min → 3 min at SCALE 10). Every receiver deduplicates by
// webhook-id. Figures: each endpoint's unique messages and duplicates, the healthy endpoints' delivery latency
// (receipt minus the message's timestamp) p50/p95/p99, the slow and recovered endpoints' completion times.

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 50);
const SCALE = Number(process.env.BENCH_WEBHOOK_SCALE ?? 10);
const SLOW_MS = Number(process.env.BENCH_WEBHOOK_SLOW_MS ?? 250);
const OUTAGE_MS = (600 / SCALE) * 1000;
const DEADLINE_MS = 30 * 60_000;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

function latencies(receiver: WebhookReceiver): number[] {
  const first = new Map<string, number>();
  for (const hook of receiver.received) {
    if (first.has(hook.id)) continue;
    first.set(hook.id, hook.at - Date.parse((JSON.parse(hook.body) as { timestamp: string }).timestamp));
  }
  return [...first.values()].sort((a, b) => a - b);
}

const unique = (receiver: WebhookReceiver) => new Set(receiver.received.map((h) => h.id)).size;

export async function benchWebhooks() {
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
  // The API seals endpoint secrets and the worker opens them: one key for both.
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const retryDelays = DEFAULT_RETRY_DELAYS_SECONDS.map((s) => s / SCALE).join(',');
  const env = await startBenchEnvironment({
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench-webhooks',
    ENCRYPTION_KEY: encryptionKey,
  });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-worker-'));
  const receivers: WebhookReceiver[] = [];
  let worker: ChildProcess | undefined;
  try {
    const { deps, baseUrl } = env;
    const session = await deps.devIdp!.sign({
      sub: 'bench-admin',
      org_id: 'bench-org',
      org_ids: ['bench-org'],
      permissions: ['api:read', 'api:manage'],
    });
    const call = jsonCaller(baseUrl, () => session);
    const orgId = (await call('GET', '/me')).organization.id as string;

    for (let i = 0; i < 5; i++) receivers.push(await startWebhookReceiver(`/hook-${i}`));
    const [healthyA, healthyB, healthyC, down, slow] = receivers as [
      WebhookReceiver,
      WebhookReceiver,
      WebhookReceiver,
      WebhookReceiver,
      WebhookReceiver,
    ];
    slow.answer = () => ({ status: 204, delayMs: SLOW_MS });
    for (const r of receivers) await call('POST', '/webhooks/endpoints', { url: r.url, event_types: ['call.ended'] });
    await down.down();

    worker = await startWorker({
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-webhooks',
      DATA_DIR: workerDir,
      ENCRYPTION_KEY: encryptionKey,
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_DELAYS_SECONDS: retryDelays,
    });

    const started = performance.now();
    const outageOver = (async () => {
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      await down.up();
      return performance.now() - started;
    })();
    // Events at RATE a second, each in a transaction of its own, a few in flight at once.
    let next = 0;
    const emitters = Array.from({ length: 8 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= EVENTS) return;
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await deps.sql.begin((tx) =>
          emitWebhookEvent(tx, orgId, {
            event_type: 'call.ended',
            data: { call_id: crypto.randomUUID(), n: i, status: 'completed', duration_seconds: 42 },
          }),
        );
      }
    });
    await Promise.all(emitters);
    const emitSeconds = (performance.now() - started) / 1000;

    const doneAt = new Map<WebhookReceiver, number>();
    while (doneAt.size < receivers.length) {
      if (performance.now() - started > DEADLINE_MS)
        throw new Error(`after the deadline: ${receivers.map((r) => unique(r)).join(', ')} of ${EVENTS} delivered`);
      for (const r of receivers) if (!doneAt.has(r) && unique(r) >= EVENTS) doneAt.set(r, (performance.now() - started) / 1000);
      await new Promise((r) => setTimeout(r, 200));
    }
    const outageEndedS = (await outageOver) / 1000;

    const healthy = [healthyA, healthyB, healthyC];
    const pooled = healthy.flatMap(latencies).sort((a, b) => a - b);
    const perEndpoint = (r: WebhookReceiver) => {
      const l = latencies(r);
      return {
        unique: unique(r),
        duplicates: r.received.length - unique(r),
        latency_ms: { p50: quantile(l, 0.5), p95: quantile(l, 0.95), p99: quantile(l, 0.99), max: l[l.length - 1] ?? 0 },
        all_delivered_after_s: Number(doneAt.get(r)!.toFixed(1)),
      };
    };
    const attempts = await deps.sql<{ status: string; n: number }[]>`
      SELECT status, count(*)::int AS n FROM webhook_attempts GROUP BY status ORDER BY status`;
    return {
      events: EVENTS,
      rate_per_second: RATE,
      time_scale: SCALE,
      outage_seconds: OUTAGE_MS / 1000,
      outage_ended_after_s: Number(outageEndedS.toFixed(1)),
      retry_delays_seconds: retryDelays,
      slow_answer_ms: SLOW_MS,
      emit_seconds: Number(emitSeconds.toFixed(1)),
      healthy_latency_ms: {
        p50: quantile(pooled, 0.5),
        p95: quantile(pooled, 0.95),
        p99: quantile(pooled, 0.99),
        max: pooled[pooled.length - 1] ?? 0,
      },
      endpoints: {
        healthy_1: perEndpoint(healthyA),
        healthy_2: perEndpoint(healthyB),
        healthy_3: perEndpoint(healthyC),
        down_then_up: perEndpoint(down),
        slow: perEndpoint(slow),
      },
      attempts: Object.fromEntries(attempts.map((a) => [a.status, a.n])),
    };
  } finally {
    await stopWorker(worker);
    await env.close();
    await temporal.teardown();
    await Promise.all(receivers.map((r) => r.close().catch(() => {})));
    fs.rmSync(workerDir, { recursive: true, force: true });
  }
}
