import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { emitEvent } from '../services/notifications/emit';
import { notificationActorId } from '../workflows/notification-messages';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// The notification actor under a flood: EVENTS events for one organization of MEMBERS members, every
// member subscribed to the event type (in-app on, email off), so each event becomes MEMBERS feed items.
// The events are written to the outbox by emitEvent in transactions of 1,000, as areas write them; the
// worker (worker/main.ts, a process of its own, with its outbox relay) hands them to the actor.
// Figures: events/s and items/s from the first commit to the last item, and the actor's history length
// in every run across continue-as-new (bounded by NOTIFICATION_ACTOR_HISTORY_LIMIT).

const EVENTS = Number(process.env.BENCH_NOTIFICATION_EVENTS ?? 10_000);
const MEMBERS = Number(process.env.BENCH_NOTIFICATION_MEMBERS ?? 50);
const DEADLINE_MS = 15 * 60_000;

export async function benchNotifications() {
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
  const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-notifications' });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-worker-'));
  let worker: ChildProcess | undefined;
  try {
    const { deps, baseUrl } = env;
    const sessionOf = (user: string) =>
      deps.devIdp!.sign({ sub: user, org_id: 'bench-org', org_ids: ['bench-org'], permissions: ['api:read', 'api:manage'] });
    const call = (token: string, method: string, p: string, body?: unknown) => jsonCaller(baseUrl, () => token)(method, p, body);
    let orgId = '';
    for (let i = 0; i < MEMBERS; i++) {
      const token = await sessionOf(`bench-member-${i}`);
      orgId = (await call(token, 'GET', '/me')).organization.id;
      await call(token, 'PATCH', '/notification-preferences/deal.value_changed', { subscribed: true, in_app: true, email_cadence: 'off' });
    }
    const deal = await call(await sessionOf('bench-member-0'), 'POST', '/deals', { name: 'Bench deal', stage: 'prospecting', value: 1 });

    worker = await startWorker({
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-notifications',
      DATA_DIR: workerDir,
    });
    await deps.sql`DELETE FROM notification_items`;

    const started = performance.now();
    for (let i = 0; i < EVENTS; i += 1000) {
      await deps.sql.begin(async (tx) => {
        for (let j = i; j < Math.min(EVENTS, i + 1000); j++) {
          await emitEvent(tx, orgId, {
            event_type: 'deal.value_changed',
            entity_type: 'deal',
            entity_id: deal.id,
            payload: { deal_id: deal.id, deal_name: 'Bench deal', value: j, currency: 'USD', old: String(j - 1) },
          });
        }
      });
    }
    const emittedMs = performance.now() - started;
    const expected = EVENTS * MEMBERS;
    let items = 0;
    while (items < expected) {
      if (performance.now() - started > DEADLINE_MS) throw new Error(`only ${items} of ${expected} items after the deadline`);
      await new Promise((r) => setTimeout(r, 250));
      items = (await deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM notification_items`)[0]!.n;
    }
    const seconds = (performance.now() - started) / 1000;

    const runs: number[] = [];
    for await (const execution of deps.temporal.workflow.list({ query: `WorkflowId = '${notificationActorId(orgId)}'` })) {
      const description = await deps.temporal.workflow.getHandle(execution.workflowId, execution.runId).describe();
      runs.push(description.historyLength);
    }
    return {
      events: EVENTS,
      members: MEMBERS,
      items,
      outbox_write_seconds: Number((emittedMs / 1000).toFixed(2)),
      seconds_to_last_item: Number(seconds.toFixed(2)),
      events_per_second: Math.round(EVENTS / seconds),
      items_per_second: Math.round(items / seconds),
      actor_runs: runs.length,
      history_length_max: Math.max(...runs),
      history_limit: deps.config.NOTIFICATION_ACTOR_HISTORY_LIMIT,
    };
  } finally {
    await stopWorker(worker);
    await env.close();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  }
}
