import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALWAYS, contact, tenantWithAgent, waitForStatus } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';

// A retried "create campaign" and a retried "resume" never call a list twice: the retries, sequential and
// concurrent, under one Idempotency-Key each, make one campaign, one workflow and one call per contact.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: { DIALER_SIMULATED_LATENCY_MS: '200', DIALER_SIMULATED_OUTCOMES: 'completed:1', CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1' },
  });
});
afterAll(() => ctx?.close());

describe('a retried campaign', () => {
  it('is created once and calls each contact once, however often its create and resume are sent again', async () => {
    const t = await tenantWithAgent(ctx);
    const body = {
      name: 'Retried',
      agent_id: t.agentId,
      calling_window: ALWAYS,
      contacts: Array.from({ length: 4 }, () => contact()),
    };
    const createKey = crypto.randomUUID();
    const send = (path: string, key: string, payload?: unknown) =>
      ctx.request('POST', path, { token: t.session, body: payload, headers: { 'Idempotency-Key': key } });

    // Concurrent duplicates, then sequential retries, of one create.
    const concurrent = await Promise.all(Array.from({ length: 4 }, () => send('/campaign/campaigns', createKey, body)));
    for (const answer of concurrent) expect([200, 409]).toContain(answer.status);
    const retries = [await send('/campaign/campaigns', createKey, body), await send('/campaign/campaigns', createKey, body)];
    const created = [...concurrent, ...retries].filter((a) => a.status === 200);
    const ids = new Set(created.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as string[];
    for (const retry of retries) expect(retry.headers.get('idempotent-replayed')).toBe('true');

    const resumeKey = crypto.randomUUID();
    const resumes = await Promise.all(Array.from({ length: 3 }, () => send(`/campaign/campaigns/${id}/resume`, resumeKey)));
    for (const answer of resumes) expect([200, 409]).toContain(answer.status);
    expect(resumes.some((a) => a.status === 200)).toBe(true);
    await waitForStatus(ctx, t, id!, 'completed');
    const again = await send(`/campaign/campaigns/${id}/resume`, resumeKey);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.status).toBe(200);

    const campaigns = await ctx.deps.sql`SELECT id FROM campaigns WHERE org_id = ${t.orgId}`;
    expect(campaigns).toHaveLength(1);
    const calls = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM dialer_simulated_calls WHERE org_id = ${t.orgId}`;
    expect(calls[0]!.n).toBe(4);
    const workflows = ctx.deps.temporal.workflow.list({ query: `WorkflowId = 'campaign:${id}'` });
    let runs = 0;
    for await (const _ of workflows) runs++;
    expect(runs).toBe(1);
  });
});
