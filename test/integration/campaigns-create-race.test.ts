import { afterAll, beforeAll, expect, it } from 'vitest';
import * as campaigns from '../../db/campaigns';
import { DEFAULT_CALLING_WINDOW } from '../../domain/campaign-schedule';
import { newId } from '../../platform/core/ids';
import { createCampaign } from '../../services/campaigns/campaigns';
import { openCampaign } from '../../services/campaigns/lifecycle';
import { campaignWorkflowId } from '../../workflows/campaign-messages';
import { contact, tenantWithAgent, waitFor, type CampaignTenant } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';

// A create sends its workflow start before its transaction takes the campaign's lock (they overlap,
// docs/decisions/campaigns.md). Whichever comes first, no row is left without its workflow and no
// workflow runs without its row: the workflow's first step waits for an open create, and a workflow
// that found no row fences the id, so the create that comes later cannot commit it.

let ctx: TestContext;
let t: CampaignTenant;

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  t = await tenantWithAgent(ctx);
});
afterAll(() => ctx?.close());

const input = () => ({
  name: 'Race',
  agent_id: t.agentId,
  priority: 0,
  timezone: 'UTC',
  calling_window: DEFAULT_CALLING_WINDOW,
  max_attempts: 3,
  retry_backoff_seconds: 600,
  contacts: [contact(), contact()],
});
const rowsOf = (ids: string[]) => ctx.deps.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE id = ANY(${ids}::uuid[])`;
const contactsOf = (ids: string[]) =>
  ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM campaign_contacts WHERE campaign_id = ANY(${ids}::uuid[])`;

it("the workflow's first step waits for a create transaction holding the lock, and finds its row", async () => {
  const id = newId();
  let opened: Promise<string | null> | undefined;
  await ctx.deps.sql.begin(async (tx) => {
    await campaigns.lockCampaign(tx, t.orgId, id);
    opened = openCampaign(ctx.deps, t.orgId, id);
    // The step is now waiting on the lock: Postgres shows its advisory lock request, not granted.
    await waitFor(
      async () =>
        (
          await ctx.deps.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
        )[0]!.n > 0,
      30_000,
      'the step to wait on the lock',
    );
    await campaigns.insertCampaign(tx, t.orgId, {
      id,
      external_id: null,
      name: 'Held',
      configuration_id: null,
      agent_number: null,
      priority: 0,
      agent_id: t.agentId,
      version: null,
      timezone: 'UTC',
      calling_window: DEFAULT_CALLING_WINDOW,
      max_attempts: 3,
      retry_backoff_seconds: 600,
      created_by: 'user:test',
    });
  });
  expect(await opened).toBe('paused');
});

it('a workflow that ran ahead of its create fences the id: the create rolls back and commits under a new id', async () => {
  const ahead = newId();
  expect(await openCampaign(ctx.deps, t.orgId, ahead)).toBeNull(); // what the workflow's first step does
  const fresh = newId();
  const ids = [ahead, fresh];
  const created = await createCampaign(ctx.deps, t.orgId, 'user:test', input(), () => ids.shift()!);
  expect(created.id).toBe(fresh);
  expect((await rowsOf([ahead, fresh])).map((r) => r.id)).toEqual([fresh]);
  expect((await contactsOf([ahead]))[0]!.n).toBe(0);
  expect((await contactsOf([fresh]))[0]!.n).toBe(2);
  // The fenced id's workflow (started by the first attempt) found no row and ended; the other runs.
  expect(await ctx.deps.temporal.workflow.getHandle(campaignWorkflowId(ahead)).result()).toBe('missing');
  const { status } = await ctx.deps.temporal.workflow.getHandle(campaignWorkflowId(fresh)).describe();
  expect(status.name).toBe('RUNNING');
});

it('a create fenced on every attempt answers 503 and writes nothing', async () => {
  const ids = [newId(), newId()];
  for (const id of ids) expect(await openCampaign(ctx.deps, t.orgId, id)).toBeNull();
  const queue = [...ids];
  await expect(createCampaign(ctx.deps, t.orgId, 'user:test', input(), () => queue.shift()!)).rejects.toMatchObject({
    kind: 'unavailable',
  });
  expect(await rowsOf(ids)).toEqual([]);
  expect((await contactsOf(ids))[0]!.n).toBe(0);
});
