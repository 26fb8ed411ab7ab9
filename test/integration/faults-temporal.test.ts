import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignWorkflowId } from '../../workflows/campaign-messages';
import { createTestContext, type TestContext } from '../support/context';
import { startPendingStartSweep } from '../../services/campaigns/workflow-start';
import { contact, move, tenantWithAgent, waitFor, type CampaignTenant, ALWAYS } from '../support/campaigns';
import { freeze, startOwnTemporal, timed, type OwnTemporal } from '../support/faults';

// The Temporal dev server of this file alone is frozen (SIGSTOP) while requests flow: every request
// that waits for it ends within its deadline with a clean 503 and changes nothing, requests that do
// not need it are served (a campaign's create among them: its workflow starts after the thaw), and after
// the thaw the same app serves again without a restart.

const TEMPORAL_MS = 2000;
const READY_MS = 2000;
const SLACK_MS = 1500; // scheduling on a busy two-core machine

let temporal: OwnTemporal;
let ctx: TestContext;
let tenant: CampaignTenant;
let thaw: (() => void) | undefined;

beforeAll(async () => {
  temporal = await startOwnTemporal();
  ctx = await createTestContext({
    worker: true,
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_REQUEST_TIMEOUT_MS: String(TEMPORAL_MS),
      READY_CHECK_TIMEOUT_MS: String(READY_MS),
      DIALER_SIMULATED_LATENCY_MS: '100',
      CAMPAIGN_START_SWEEP_SECONDS: '1',
    },
  });
  tenant = await tenantWithAgent(ctx);
}, 120_000);
afterAll(async () => {
  thaw?.();
  await ctx?.close();
  await temporal?.stop();
});

const createBody = (externalId: string) => ({
  name: `Campaign ${externalId}`,
  external_id: externalId,
  agent_id: tenant.agentId,
  calling_window: ALWAYS,
  contacts: [contact(), contact()],
});

const campaignsOf = async (externalIds: string[]) =>
  ctx.deps.sql<{ id: string; external_id: string }[]>`
    SELECT id, external_id FROM campaigns WHERE external_id = ANY(${externalIds})`;

describe('a frozen Temporal', () => {
  it('leaves creates served (their workflows start after the thaw), costs a move a 503 within its deadline, and /ready a 503 within its bound', async () => {
    const before = await ctx.request('POST', '/campaign/campaigns', { token: tenant.session, body: createBody('before-freeze') });
    expect(before.status, JSON.stringify(before.body)).toBe(200);

    thaw = freeze(temporal.pid);
    const frozenIds = ['frozen-1', 'frozen-2', 'frozen-3', 'frozen-4'];
    const [creates, tags, ready] = await Promise.all([
      Promise.all(
        frozenIds.map((id) => timed(() => ctx.request('POST', '/campaign/campaigns', { token: tenant.session, body: createBody(id) }))),
      ),
      timed(() => ctx.request('GET', '/tags', { token: tenant.session })),
      timed(() => ctx.request('GET', '/ready')),
    ]);
    // A create does not wait for the workflow engine: its row commits and its workflow starts later.
    for (const { value, ms } of creates) {
      expect(value.status, JSON.stringify(value.body)).toBe(200);
      expect(value.body.status).toBe('paused');
      expect(ms).toBeLessThan(TEMPORAL_MS + SLACK_MS);
    }
    expect(tags.value.status).toBe(200);
    expect(ready.value.status).toBe(503);
    // Only Temporal's check is certain to fail: the others may be slow on a busy machine.
    expect(ready.value.body).toMatchObject({ status: 'fail', checks: { 'temporal:responseTime': [{ status: 'fail' }] } });
    expect(ready.ms).toBeLessThan(READY_MS + SLACK_MS);

    // A move needs the workflow: 503 within the deadline, and the campaign is as it was.
    const frozenCampaign = creates[0]!.value.body.id as string;
    const moved = await timed(() => move(ctx, tenant, frozenCampaign, 'resume'));
    expect(moved.value.status, JSON.stringify(moved.value.body)).toBe(503);
    expect(moved.value.body).toEqual({ detail: 'Workflow engine unavailable, try again shortly' });
    expect(moved.ms).toBeLessThan(TEMPORAL_MS + SLACK_MS);
    expect((await ctx.request('GET', `/campaign/campaigns/${frozenCampaign}`, { token: tenant.session })).body.status).toBe('paused');
    const open = await ctx.deps.sql`
      SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
    expect(open).toHaveLength(0);

    thaw();
    thaw = undefined;

    // The same app serves again once Temporal is back: no restart, no stale connection.
    const again = await waitFor(
      async () => {
        const res = await ctx.request('GET', '/ready');
        return res.status === 200 && res;
      },
      30_000,
      '/ready after the thaw',
    );
    expect(again.body.status).not.toBe('fail');

    // Each campaign created during the freeze gets its workflow: a start that reached the frozen server ran
    // after the thaw, and the sweep starts the others (and confirms those it finds started).
    const sweep = startPendingStartSweep(ctx.deps);
    const rows = await campaignsOf(['before-freeze', ...frozenIds]);
    expect(rows).toHaveLength(5);
    try {
      await waitFor(
        async () =>
          (
            await ctx.deps.sql`
              SELECT 1 FROM campaigns WHERE id = ANY(${rows.map((r) => r.id)}::uuid[]) AND workflow_pending_since IS NOT NULL`
          ).length === 0,
        30_000,
        'every start to be confirmed',
      );
    } finally {
      await sweep.stop();
    }
    for (const row of rows) {
      const { status } = await ctx.deps.temporal.workflow.getHandle(campaignWorkflowId(row.id)).describe();
      expect(status.name).toBe('RUNNING');
    }
    expect((await move(ctx, tenant, frozenCampaign, 'resume')).status).toBe(200);
  }, 120_000);

  it('bounds a request that signals a workflow too, and the signal is best effort there', async () => {
    thaw = freeze(temporal.pid);
    const { value, ms } = await timed(() =>
      ctx.request('PUT', '/campaign/concurrency-settings', { token: tenant.session, body: { concurrency_limit: 7 } }),
    );
    thaw();
    thaw = undefined;
    expect(value.status, JSON.stringify(value.body)).toBe(200);
    expect(value.body.concurrency_limit).toBe(7);
    expect(ms).toBeLessThan(TEMPORAL_MS + SLACK_MS);
  }, 60_000);
});
