import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contact, conversationsOf, createCampaign, move, tenantWithAgent, waitFor, waitForStatus } from '../support/campaigns';
import { startChildWorker, startInProcessWorker, stopInProcessWorker, type InProcessWorker } from '../support/durability-workers';
import { createTestContext, logRecords, type TestContext } from '../support/context';

// Kill -9 the worker in the middle of a campaign, start another, and check that every contact was
// dialed exactly once: no attempt lost (the reports of calls ringing when the worker died are
// recovered, no call times out into a second attempt) and none repeated (one dial per idempotency key).

const CONTACTS = 40;
const LIMIT = 5;
const env = {
  DIALER_SIMULATED_LATENCY_MS: '800',
  DIALER_SIMULATED_OUTCOMES: 'completed:1',
  CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
  CAMPAIGN_CALL_TIMEOUT_SECONDS: '600', // a lost report would stall the test rather than be retried
};

let ctx: TestContext;
let child: ChildProcess | undefined;
let second: InProcessWorker | undefined;

beforeAll(async () => {
  ctx = await createTestContext({ env });
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await stopInProcessWorker(second);
  await ctx?.close();
});

it('a worker killed mid-campaign is replaced and every contact is dialed exactly once', { timeout: 180_000 }, async () => {
  const t = await tenantWithAgent(ctx);
  await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body: { concurrency_limit: LIMIT } });
  const { id } = await createCampaign(ctx, t, { contacts: Array.from({ length: CONTACTS }, () => contact()) });

  child = await startChildWorker(ctx, env);
  expect((await move(ctx, t, id, 'resume')).status).toBe(200);
  // Mid-way: some calls done, some ringing, most not yet placed.
  await waitFor(async () => (await conversationsOf(ctx, id)).length >= 12, 60_000, 'a dozen calls');
  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  const atKill = await conversationsOf(ctx, id);
  expect(atKill.length).toBeLessThan(CONTACTS);
  const ringingAtKill = atKill.filter((c) => c.status !== 'completed').length;
  expect(ringingAtKill).toBeGreaterThan(0); // their reports died with the worker
  child = undefined;

  second = await startInProcessWorker(ctx);

  await waitForStatus(ctx, t, id, 'completed', 150_000);

  const calls = await conversationsOf(ctx, id);
  expect(calls).toHaveLength(CONTACTS);
  expect(new Set(calls.map((c) => c.idempotency_key)).size).toBe(CONTACTS);
  expect(calls.every((c) => c.status === 'completed' && c.idempotency_key.endsWith(':1'))).toBe(true);

  const contacts = await ctx.deps.sql<{ status: string; attempts: number }[]>`
    SELECT status, attempts FROM campaign_contacts WHERE campaign_id = ${id}`;
  expect(contacts).toHaveLength(CONTACTS);
  expect(contacts.every((c) => c.status === 'completed' && c.attempts === 1)).toBe(true);

  // The calls ringing when the worker died were reported through the new worker's reconciliation.
  const recovered = logRecords<{ msg: string; recovered?: number }>(ctx)
    .filter((l) => l.msg === 'campaign calls without a report')
    .reduce((n, l) => n + (l.recovered ?? 0), 0);
  expect(recovered).toBeGreaterThanOrEqual(1);

  // The dialer's own log: one call per key, the same keys as the conversations.
  const dialed = await ctx.deps.sql<{ idempotency_key: string; requests: number; placed_at: Date; due_at: Date }[]>`
    SELECT idempotency_key, requests, placed_at, due_at FROM dialer_simulated_calls WHERE org_id = ${t.orgId}`;
  expect(dialed.map((d) => d.idempotency_key).sort()).toEqual(calls.map((c) => c.idempotency_key).sort());

  // Never more calls ringing at once than the limit, across the crash.
  const edges = dialed.flatMap((d) => [
    [d.placed_at.getTime(), 1],
    [d.due_at.getTime(), -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let ringing = 0;
  let peak = 0;
  for (const [, delta] of edges) peak = Math.max(peak, (ringing += delta!));
  expect(peak).toBeLessThanOrEqual(LIMIT);
});
