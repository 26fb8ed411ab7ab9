import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/core/ids';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import type { accountHealthRefresh } from '../../workflows/accounts';
import { createTestContext, type TestContext } from '../support/context';
import { keepHistory } from '../support/histories';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let readOnly: string;

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  a = await newTenant(ctx, ['api:read', 'api:manage']);
  b = await newTenant(ctx, ['api:read', 'api:manage']);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
});
afterAll(() => ctx?.close());

async function newAccount(c: TestContext, t: Tenant, name: string): Promise<string> {
  const res = await c.request('POST', '/accounts', { token: t.session, body: { name } });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function refresh(c: TestContext, token: string, accountId: string) {
  return c.request('POST', `/accounts/${accountId}/health/refresh`, { token });
}

describe('account health refresh on the real dev server', () => {
  let accountId: string;
  let orgId: string;
  let openDealId: string;

  beforeAll(async () => {
    orgId = await orgUuid(ctx, a);
    accountId = await newAccount(ctx, a, 'Healthy Co');
    // Two contacts: one with an activity two days ago, one whose only activity lies in the future.
    const [engaged, idle] = [newId(), newId()];
    await ctx.deps.sql`INSERT INTO contacts (id, org_id, account_id, first_name) VALUES
      (${engaged}, ${orgId}, ${accountId}, 'Engaged'), (${idle}, ${orgId}, ${accountId}, 'Idle')`;
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    for (const body of [
      { type: 'call', contact_id: engaged, due_at: twoDaysAgo },
      { type: 'meeting', contact_id: idle, due_at: '2999-01-01T00:00:00Z' },
    ]) {
      expect((await ctx.request('POST', `/accounts/${accountId}/activities`, { token: a.session, body })).status).toBe(200);
    }
    // Two open deals and a won one.
    const ids: string[] = [];
    for (const stage of ['prospecting', 'negotiation', 'closed_won']) {
      ids.push((await ctx.request('POST', '/deals', { token: a.session, body: { name: stage, stage, account_id: accountId } })).body.id);
    }
    openDealId = ids[0]!;
  });

  it('answers 202 with the account-health workflow id, and the run records the score', async () => {
    const res = await refresh(ctx, a.session, accountId);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ workflow_id: `account-health:${accountId}` });

    const handle = ctx.deps.temporal.workflow.getHandle<typeof accountHealthRefresh>(res.body.workflow_id);
    const result = await handle.result();
    // recency 40 (2 days) + deals 20 (two open) + engagement 15 (one of two contacts) = 75
    expect(result).toMatchObject({
      score: 75,
      factors: { recency: 40, deals: 20, engagement: 15, open_deals: 2, contacts: 2, engaged_contacts: 1 },
    });
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, res.body.workflow_id, 'account-health-refresh');

    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgId);

    const health = await ctx.request('GET', `/accounts/${accountId}/health`, { token: readOnly });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ account_id: accountId, health_score: 75 });
    expect(health.body.history).toHaveLength(1);
    expect(health.body.history[0]).toMatchObject({ score: 75, factors: result!.factors, computed_at: health.body.computed_at });
    expect(Object.keys(health.body.history[0]).sort()).toEqual(['computed_at', 'factors', 'id', 'score']);
  });

  it('shows the latest score on the account and in the list', async () => {
    expect((await ctx.request('GET', `/accounts/${accountId}`, { token: a.session })).body.health_score).toBe(75);
    const list = await ctx.request('GET', '/accounts?search=healthy', { token: a.session });
    expect(list.body).toEqual([{ id: accountId, name: 'Healthy Co', industry: null, domain: null, health_score: 75 }]);
  });

  it('appends each refresh to the history, newest first, and moves the latest', async () => {
    expect((await ctx.request('PATCH', `/deals/${openDealId}`, { token: a.session, body: { stage: 'closed_lost' } })).status).toBe(200);
    const res = await refresh(ctx, a.session, accountId);
    expect(res.status).toBe(202);
    expect((await ctx.deps.temporal.workflow.getHandle(res.body.workflow_id).result())?.score).toBe(65);

    const health = await ctx.request('GET', `/accounts/${accountId}/health`, { token: a.session });
    expect(health.body.health_score).toBe(65);
    expect(health.body.history.map((h: { score: number }) => h.score)).toEqual([65, 75]);
    expect(Date.parse(health.body.history[0].computed_at)).toBeGreaterThanOrEqual(Date.parse(health.body.history[1].computed_at));
    expect((await ctx.request('GET', `/accounts/${accountId}/health?limit=1`, { token: a.session })).body.history).toHaveLength(1);
    expect((await ctx.request('GET', '/accounts?search=healthy', { token: a.session })).body[0].health_score).toBe(65);
  });

  it('ends quietly, writing nothing, when the account is gone before the run', async () => {
    const missing = newId();
    const result = await ctx.deps.temporal.workflow.execute<typeof accountHealthRefresh>('accountHealthRefresh', {
      taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
      workflowId: `account-health:${missing}`,
      args: [{ orgId, accountId: missing }],
    });
    expect(result).toBeNull();
    const [counted] = await ctx.deps.sql`SELECT count(*)::int AS count FROM account_health_scores WHERE account_id = ${missing}`;
    expect(counted!.count).toBe(0);
  });
});

describe('account health: errors, tenancy and scopes', () => {
  it("refresh is 404 for another organization's account, and starts nothing", async () => {
    const theirs = await newAccount(ctx, b, 'Theirs');
    expect(await refresh(ctx, a.session, theirs)).toMatchObject({ status: 404, body: { detail: 'Account not found' } });
    await expect(ctx.deps.temporal.workflow.getHandle(`account-health:${theirs}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('refresh refuses a read-only key with 403', async () => {
    const accountId = await newAccount(ctx, a, 'RO');
    expect(await refresh(ctx, readOnly, accountId)).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
  });

  it("GET health is 404 for another organization's account", async () => {
    const theirs = await newAccount(ctx, b, 'Theirs too');
    expect(await ctx.request('GET', `/accounts/${theirs}/health`, { token: a.session })).toMatchObject({
      status: 404,
      body: { detail: 'Account not found' },
    });
  });

  it('GET health of a never-scored account has a null score and an empty history', async () => {
    const accountId = await newAccount(ctx, a, 'Unscored');
    expect((await ctx.request('GET', `/accounts/${accountId}/health`, { token: a.session })).body).toEqual({
      account_id: accountId,
      health_score: null,
      computed_at: null,
      history: [],
    });
  });
});

describe('a refresh while one runs', () => {
  // No worker polls this context's task queue, so a started run stays running.
  let idle: TestContext;
  beforeAll(async () => {
    idle = await createTestContext();
  });
  afterAll(() => idle?.close());

  it('returns the running workflow id instead of an error, and starts no second run', async () => {
    const t = await newTenant(idle, ['api:read', 'api:manage']);
    const accountId = await newAccount(idle, t, 'Busy');
    const first = await refresh(idle, t.session, accountId);
    expect(first.status).toBe(202);
    const handle = idle.deps.temporal.workflow.getHandle(first.body.workflow_id);
    try {
      const before = await handle.describe();
      expect(before.status.name).toBe('RUNNING');
      const second = await refresh(idle, t.session, accountId);
      expect(second.status).toBe(202);
      expect(second.body).toEqual(first.body);
      expect((await handle.describe()).runId).toBe(before.runId);
    } finally {
      await handle.terminate('test cleanup');
    }
  });
});

describe('Temporal unreachable', () => {
  let down: TestContext;
  beforeAll(async () => {
    down = await createTestContext({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  });
  afterAll(() => down?.close());

  it('answers a refresh with a clean 503 and writes nothing', async () => {
    const t = await newTenant(down, ['api:read', 'api:manage']);
    const accountId = await newAccount(down, t, 'Offline');
    const res = await refresh(down, t.session, accountId);
    expect(res).toMatchObject({ status: 503, body: { detail: 'Workflow engine unavailable, try again shortly' } });
    const health = await down.request('GET', `/accounts/${accountId}/health`, { token: t.session });
    expect(health.body).toMatchObject({ health_score: null, history: [] });
  });
});
