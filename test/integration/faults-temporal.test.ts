import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaignWorkflowId } from '../../workflows/campaign-messages';
import { createTestContext, type TestContext } from '../support/context';
import { contact, tenantWithAgent, waitFor, type CampaignTenant, ALWAYS } from '../support/campaigns';
import { freeze, startOwnTemporal, timed, type OwnTemporal } from '../support/faults';

// The Temporal dev server of this file alone is frozen (SIGSTOP) while requests flow: every request
// that needs it ends within its deadline with a clean 503 and leaves nothing written, requests that do
// not need it are served, and after the thaw the same app serves again without a restart.

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
  it('costs a workflow start a 503 within its deadline, with nothing written, and /ready a 503 within its bound', async () => {
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
    for (const { value, ms } of creates) {
      expect(value.status, JSON.stringify(value.body)).toBe(503);
      expect(value.body).toEqual({ detail: 'Workflow engine unavailable, try again shortly' });
      expect(ms).toBeLessThan(TEMPORAL_MS + SLACK_MS);
    }
    // Plain reads do not need the workflow engine.
    expect(tags.value.status).toBe(200);
    expect(ready.value.status).toBe(503);
    // Only Temporal's check is certain to fail: the others may be slow on a busy machine.
    expect(ready.value.body).toMatchObject({ status: 'fail', checks: { 'temporal:responseTime': [{ status: 'fail' }] } });
    expect(ready.ms).toBeLessThan(READY_MS + SLACK_MS);

    // The rows of the refused creates were rolled back, and no transaction is left open.
    expect(await campaignsOf(frozenIds)).toEqual([]);
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
    const after = await ctx.request('POST', '/campaign/campaigns', { token: tenant.session, body: createBody('frozen-1') });
    expect(after.status, JSON.stringify(after.body)).toBe(200); // the refused external_id was never taken
    const rows = await campaignsOf(['before-freeze', ...frozenIds]);
    expect(rows.map((r) => r.external_id).sort()).toEqual(['before-freeze', 'frozen-1']);

    // A start that reached the frozen server ran after the thaw, found no row and ended: no workflow
    // of this organization runs without its campaign.
    const live = new Set(rows.map((r) => campaignWorkflowId(r.id)));
    await waitFor(
      async () => {
        for await (const wf of ctx.deps.temporal.workflow.list({
          query: `OrganizationId = '${tenant.orgId}' AND ExecutionStatus = 'Running'`,
        })) {
          if (wf.workflowId.startsWith('campaign:') && !live.has(wf.workflowId)) return false;
        }
        return true;
      },
      30_000,
      'orphan campaign workflows to end',
    );
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
