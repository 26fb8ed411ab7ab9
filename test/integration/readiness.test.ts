import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../platform/core/ids';
import { recordContactEmail } from '../../services/crm-activities';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import type { readinessNightlyWorkflow, readinessRefreshWorkflow } from '../../workflows/readiness';
import { createTestContext, type TestContext } from '../support/context';
import { startCompanySite } from '../support/fake-company-site';
import type { FakeWebsite } from '../support/fake-website';
import { keepHistory } from '../support/histories';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let readOnly: string;
let site: FakeWebsite;

beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { WEB_FETCH_ALLOW_PRIVATE: 'true' } });
  a = await newTenant(ctx, ['api:read', 'api:manage']);
  b = await newTenant(ctx, ['api:read', 'api:manage']);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
  site = await startCompanySite();
});
afterAll(async () => {
  await site?.close();
  await ctx?.close();
});

const PROFILE = {
  name: 'DACH software',
  criteria: [
    { type: 'industry', values: ['software'], weight: 40 },
    { type: 'employees', values: ['50-200'], weight: 30 },
    { type: 'country', values: ['Germany'], weight: 20 },
    { type: 'technology', values: ['HubSpot'], weight: 10 },
  ],
};

async function newAccount(t: Tenant, body: Record<string, unknown>): Promise<string> {
  const res = await ctx.request('POST', '/accounts', { token: t.session, body });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function refreshed(t: Tenant, accountId: string) {
  const res = await ctx.request('POST', `/accounts/${accountId}/readiness/refresh`, { token: t.session });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toEqual({ workflow_id: `readiness:${accountId}` });
  const result = await ctx.deps.temporal.workflow.getHandle<typeof readinessRefreshWorkflow>(res.body.workflow_id).result();
  return { workflowId: res.body.workflow_id as string, result };
}

describe('readiness profiles on the real dev server', () => {
  let accountId: string;

  beforeAll(async () => {
    expect((await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: PROFILE })).status).toBe(200);
    accountId = await newAccount(a, { name: 'Ready Co', website: site.origin });
    const run = await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: { account_id: accountId } });
    await vi.waitFor(
      async () =>
        expect((await ctx.request('GET', `/intelligence/research-runs/${run.body.id}`, { token: a.session })).body.status).toBe(
          'completed',
        ),
      { timeout: 30_000, interval: 200 },
    );
    const orgId = await orgUuid(ctx, a);
    const contact = newId();
    await ctx.deps
      .sql`INSERT INTO contacts (id, org_id, account_id, first_name, phone) VALUES (${contact}, ${orgId}, ${accountId}, 'Pat', '+14155550100')`;
    const day = 86_400_000;
    for (const body of [
      { type: 'call', contact_id: contact, due_at: new Date(Date.now() - 2 * day).toISOString() },
      { type: 'email_reply', contact_id: contact, due_at: new Date(Date.now() - 3 * day).toISOString() },
      { type: 'meeting', contact_id: contact, due_at: new Date(Date.now() - 5 * day).toISOString() },
      { type: 'task', due_at: new Date(Date.now() + 3 * day).toISOString() },
    ]) {
      expect((await ctx.request('POST', `/accounts/${accountId}/activities`, { token: a.session, body })).status).toBe(200);
    }
    expect(
      (await ctx.request('POST', '/deals', { token: a.session, body: { name: 'Pilot', stage: 'negotiation', account_id: accountId } }))
        .status,
    ).toBe(200);
    // Campaign calls reach the account through its contacts' phone numbers: one answered, one not.
    const campaign = newId();
    await ctx.deps
      .sql`INSERT INTO campaigns (id, org_id, name, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by)
      VALUES (${campaign}, ${orgId}, 'Bench', ${ctx.deps.sql.json({})}, 1, 60, 'test', 'test')`;
    await ctx.deps.sql`INSERT INTO campaign_contacts (id, org_id, campaign_id, phone_numbers, status, last_outcome) VALUES
      (${newId()}, ${orgId}, ${campaign}, ${['+14155550100']}, 'completed', 'completed'),
      (${newId()}, ${orgId}, ${campaign}, ${['+14155550100']}, 'failed', 'no_answer'),
      (${newId()}, ${orgId}, ${campaign}, ${['+14155550199']}, 'completed', 'completed')`;
  });

  it('answers 404 before the first profile, then computes fit, engagement and timing with their signals', async () => {
    const before = await ctx.request('GET', `/accounts/${accountId}/readiness`, { token: readOnly });
    expect(before.status).toBe(404);
    expect(before.body.detail).toContain('No readiness profile yet');

    const { workflowId, result } = await refreshed(a, accountId);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, workflowId, 'readiness-refresh');
    expect(result).toMatchObject({ label: 'hot' });
    const description = await ctx.deps.temporal.workflow.getHandle(workflowId).describe();
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(await orgUuid(ctx, a));

    const res = await ctx.request('GET', `/accounts/${accountId}/readiness`, { token: readOnly });
    expect(res.status).toBe(200);
    const p = res.body;
    expect(p).toMatchObject({ account_id: accountId, label: 'hot', trigger: 'manual', icp_profile_version: 1 });
    expect(p.fit).toMatchObject({ score: 100, grade: 'A' });
    expect(p.fit.signals.map((s: { name: string; value: string }) => [s.name, s.value])).toEqual([
      ['industry', 'matched'],
      ['employees', 'matched'],
      ['country', 'matched'],
      ['technology', 'matched'],
    ]);
    expect(p.fit.signals[1].evidence[0].source).toBe(site.url('/about'));
    // recency 40 + 3 activities in 30 days 15 + one reply 8 + a meeting 10 + a call 10
    expect(p.engagement.score).toBe(83);
    expect(p.engagement.signals.find((s: { name: string }) => s.name === 'email_replies_90d')).toMatchObject({ value: 1, points: 8 });
    expect(p.engagement.signals.find((s: { name: string }) => s.name === 'connected_calls_90d')).toMatchObject({ value: 2, points: 10 });
    expect(p.engagement.signals.find((s: { name: string }) => s.name === 'unanswered_calls_90d')).toMatchObject({ value: 1, points: 0 });
    // negotiation 35 + a deal changed today 25 + a task due in 3 days 20 + research today 20
    expect(p.timing).toMatchObject({ score: 100 });
    expect(p.fit.reason).toBe('100/100: matched industry, employees, country, technology');
    expect(p.engagement.reason).toBe(
      '83/100: last activity 40/40, activities (30 days) 15/25, meetings (90 days) 10/10, connected calls (90 days) 10/10, email replies (90 days) 8/15',
    );
    expect(p.timing.reason).toMatch(/^100\/100: furthest open stage 35\/35, /);
    for (const axis of [p.fit, p.engagement, p.timing]) {
      expect(axis.score).toBeGreaterThanOrEqual(0);
      expect(axis.score).toBeLessThanOrEqual(100);
    }
  });

  it('keeps every profile in the history, newest first', async () => {
    await refreshed(a, accountId);
    const history = await ctx.request('GET', `/accounts/${accountId}/readiness/history?limit=5`, { token: readOnly });
    expect(history.status).toBe(200);
    expect(history.body.profiles.length).toBeGreaterThanOrEqual(2);
    const times = history.body.profiles.map((p: { computed_at: string }) => p.computed_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(history.body.profiles[0]).toEqual((await ctx.request('GET', `/accounts/${accountId}/readiness`, { token: a.session })).body);
  });

  it('labels an account unknown_fit without a default ICP profile or with too few facts, and not_a_fit below 40', async () => {
    const t = await newTenant(ctx, ['api:read', 'api:manage']);
    const id = await (async () => {
      const res = await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Unprofiled', industry: 'retail' } });
      return res.body.id as string;
    })();
    const { result } = await refreshed(t, id);
    expect(result).toMatchObject({ label: 'unknown_fit' });
    const p = (await ctx.request('GET', `/accounts/${id}/readiness`, { token: t.session })).body;
    expect(p.fit).toMatchObject({ score: null, signals: [{ name: 'no_icp_profile' }] });
    expect(p.engagement.score).toBe(0);

    await ctx.request('POST', '/intelligence/icp-profiles', { token: t.session, body: PROFILE });
    // Only the industry is known (40 of 100 weight): too few facts to call it a bad fit.
    expect((await refreshed(t, id)).result).toMatchObject({ label: 'unknown_fit' });
    const thin = (await ctx.request('GET', `/accounts/${id}/readiness`, { token: t.session })).body;
    expect(thin.fit).toMatchObject({ score: null, grade: null });
    await ctx.request('PATCH', `/accounts/${id}`, { token: t.session, body: { employee_count: 5 } });
    expect((await refreshed(t, id)).result).toMatchObject({ label: 'not_a_fit' });
  });

  it('counts a reply received through outreach (an inbound email activity) as engagement', async () => {
    const t = await newTenant(ctx, ['api:read', 'api:manage']);
    const orgId = await orgUuid(ctx, t);
    const id = await newAccount(t, { name: 'Replied Co' });
    const contact = newId();
    await ctx.deps
      .sql`INSERT INTO contacts (id, org_id, account_id, first_name, email) VALUES (${contact}, ${orgId}, ${id}, 'Ria', 'ria@replied.example')`;
    await recordContactEmail(ctx.deps.sql, orgId, contact, {
      subject: 'Re: hello',
      body: 'Sounds good',
      direction: 'inbound',
      at: new Date(),
      actor: 'outreach',
    });
    await recordContactEmail(ctx.deps.sql, orgId, contact, {
      subject: 'Hello',
      body: 'Hi Ria',
      direction: 'outbound',
      at: new Date(),
      actor: 'outreach',
    });
    await refreshed(t, id);
    const p = (await ctx.request('GET', `/accounts/${id}/readiness`, { token: t.session })).body;
    expect(p.engagement.signals.find((s: { name: string }) => s.name === 'email_replies_90d')).toMatchObject({ value: 1, points: 8 });
    expect(p.fit.reason).toBe('No default ICP profile: fit is not scored');
  });

  it("creates the organization's nightly schedule with its first ICP profile, before any refresh", async () => {
    const t = await newTenant(ctx, ['api:read', 'api:manage']);
    const orgId = await orgUuid(ctx, t);
    const handle = ctx.deps.temporal.schedule.getHandle(`readiness-nightly:${orgId}`);
    await expect(handle.describe()).rejects.toThrow();
    expect((await ctx.request('POST', '/intelligence/icp-profiles', { token: t.session, body: PROFILE })).status).toBe(200);
    expect((await handle.describe()).typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgId);
  });

  it('creates the organization nightly schedule once, with its OrganizationId', async () => {
    const orgId = await orgUuid(ctx, a);
    const schedule = await ctx.deps.temporal.schedule.getHandle(`readiness-nightly:${orgId}`).describe();
    expect(schedule.spec.calendars?.length).toBe(1);
    expect(schedule.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'readinessNightlyWorkflow',
      workflowId: `readiness-nightly-run:${orgId}`,
    });
    expect(schedule.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgId);
    await refreshed(a, accountId); // a second refresh leaves the schedule as it is
  });

  it('refreshes only stale profiles at night: a second run the same night does nothing', async () => {
    const t = await newTenant(ctx, ['api:read', 'api:manage']);
    const orgId = await orgUuid(ctx, t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await newAccount(t, { name: `Nightly ${i}` }));
    await refreshed(t, ids[0]!); // fresh: skipped at night
    const start = (workflowId: string) =>
      ctx.deps.temporal.workflow.execute<typeof readinessNightlyWorkflow>('readinessNightlyWorkflow', {
        workflowId,
        taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
        args: [{ orgId, staleHours: 20, afterId: null }],
        typedSearchAttributes: [{ key: ORGANIZATION_ID, value: orgId }],
      });
    const first = `readiness-nightly-run:${orgId}`;
    expect(await start(first)).toEqual({ refreshed: 2 });
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, first, 'readiness-nightly');
    expect(await start(`${first}:again`)).toEqual({ refreshed: 0 });
    const history = await ctx.request('GET', `/accounts/${ids[1]}/readiness/history`, { token: t.session });
    expect(history.body.profiles).toHaveLength(1);
    expect(history.body.profiles[0].trigger).toBe('nightly');
  });

  it("answers 404 for another organization's account and 403 on refresh with a read-only key", async () => {
    for (const path of [`/accounts/${accountId}/readiness`, `/accounts/${accountId}/readiness/history`]) {
      expect((await ctx.request('GET', path, { token: b.session })).status).toBe(404);
    }
    expect((await ctx.request('POST', `/accounts/${accountId}/readiness/refresh`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('POST', `/accounts/${newId()}/readiness/refresh`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('POST', `/accounts/${accountId}/readiness/refresh`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('GET', `/accounts/${accountId}/readiness/history?limit=0`, { token: a.session })).status).toBe(422);
  });
});
