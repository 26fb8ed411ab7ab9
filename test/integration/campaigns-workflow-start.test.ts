import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_CALLING_WINDOW } from '../../domain/campaign-schedule';
import { createTemporalClient } from '../../platform/core/temporal';
import { createCampaign } from '../../services/campaigns/campaigns';
import { startCampaignWorkflow, startPendingStartSweep } from '../../services/campaigns/workflow-start';
import { campaignWorkflowId } from '../../workflows/campaign-messages';
import { contact, move, tenantWithAgent, waitFor, waitForStatus, type CampaignTenant } from '../support/campaigns';
import { createTestContext, logRecords, type TestContext } from '../support/context';

// A create commits its row, answers, and then starts the campaign's workflow (docs/decisions/campaigns.md,
// "Row first, then its workflow"). The row stays pending until the workflow's first step confirms it; a
// start that was lost (Temporal unreachable, the API process gone) is made by the campaign's first move
// or by a worker's sweep, and a start is never made twice for one campaign.

let ctx: TestContext;
let t: CampaignTenant;

beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { CAMPAIGN_START_SWEEP_SECONDS: '1' } });
  t = await tenantWithAgent(ctx);
});
afterAll(() => ctx?.close());

const input = () => ({
  name: 'Started later',
  agent_id: t.agentId,
  priority: 0,
  timezone: 'UTC',
  calling_window: DEFAULT_CALLING_WINDOW,
  max_attempts: 3,
  retry_backoff_seconds: 600,
  contacts: [contact(), contact()],
});
const pendingSince = async (id: string) =>
  (await ctx.deps.sql<{ workflow_pending_since: Date | null }[]>`SELECT workflow_pending_since FROM campaigns WHERE id = ${id}`)[0]!
    .workflow_pending_since;
const workflowOf = (id: string) => ctx.deps.temporal.workflow.getHandle(campaignWorkflowId(id));
const logged = (msg: string, campaignId?: string) =>
  logRecords<{ msg: string; campaignId?: string }>(ctx).some((l) => l.msg.startsWith(msg) && (!campaignId || l.campaignId === campaignId));

/** A create whose start is lost: the API's Temporal address answers nothing, as when Temporal is down. */
async function createWithLostStart(): Promise<string> {
  const unreachable = createTemporalClient('127.0.0.1:1', ctx.config.TEMPORAL_NAMESPACE, {}, 2_000);
  try {
    const created = await createCampaign({ ...ctx.deps, temporal: unreachable }, t.orgId, 'user:test', input());
    // The start runs after the answer; it fails against the unreachable address and is logged.
    await waitFor(async () => logged('campaign workflow not started', created.id), 30_000, 'the lost start to be logged');
    return created.id;
  } finally {
    await unreachable.connection.close().catch(() => {});
  }
}

it("a create answers with its row committed, and its workflow's first step confirms the start", async () => {
  const created = await createCampaign(ctx.deps, t.orgId, 'user:test', input());
  expect(created.status).toBe('paused');
  await waitFor(async () => (await pendingSince(created.id)) === null, 30_000, 'the first step to confirm the start');
  expect((await workflowOf(created.id).describe()).status.name).toBe('RUNNING');
});

it('a campaign whose start was lost stays pending, and its first move starts the workflow', async () => {
  const id = await createWithLostStart();
  expect(await pendingSince(id)).not.toBeNull();
  await expect(workflowOf(id).describe()).rejects.toThrow(/not found/i);
  expect((await move(ctx, t, id, 'pause')).status).toBe(409); // refused by the row's status: nothing started
  await expect(workflowOf(id).describe()).rejects.toThrow(/not found/i);

  const resumed = await move(ctx, t, id, 'resume');
  expect(resumed.status).toBe(200);
  expect(['active', 'completed']).toContain(resumed.body.status);
  expect(await pendingSince(id)).toBeNull();
  expect((await workflowOf(id).describe()).status.name).toMatch(/RUNNING|COMPLETED/);
});

it("a worker's sweep starts the workflow of a campaign left pending", async () => {
  const id = await createWithLostStart();
  const sweep = startPendingStartSweep(ctx.deps);
  try {
    await waitFor(async () => (await pendingSince(id)) === null, 30_000, 'the sweep to start the workflow');
  } finally {
    await sweep.stop();
  }
  expect((await workflowOf(id).describe()).status.name).toBe('RUNNING');
  expect(logged('campaign workflows started by the sweep')).toBe(true);
  expect((await move(ctx, t, id, 'resume')).status).toBe(200);
});

it('a start is made once per campaign: a second start, of a running or a closed workflow, starts nothing', async () => {
  const created = await createCampaign(ctx.deps, t.orgId, 'user:test', input());
  await waitFor(async () => (await pendingSince(created.id)) === null, 30_000, 'the first step to confirm the start');
  const first = (await workflowOf(created.id).describe()).runId;
  await startCampaignWorkflow(ctx.deps, t.orgId, created.id);
  expect((await workflowOf(created.id).describe()).runId).toBe(first);

  expect((await move(ctx, t, created.id, 'cancel')).status).toBe(200);
  await waitForStatus(ctx, t, created.id, 'canceled');
  await waitFor(async () => (await workflowOf(created.id).describe()).status.name === 'COMPLETED', 30_000, 'the workflow to end');
  await startCampaignWorkflow(ctx.deps, t.orgId, created.id);
  const after = await workflowOf(created.id).describe();
  expect(after.runId).toBe(first);
  expect(after.status.name).toBe('COMPLETED');
});
