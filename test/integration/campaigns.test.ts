import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBody } from '../../platform/adapters/dialers/dialer';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import {
  ALWAYS,
  FAR_FUTURE,
  contact,
  conversationsOf,
  createCampaign,
  move,
  startedWorkflow,
  tenantWithAgent,
  waitFor,
  waitForStatus,
  type CampaignTenant,
} from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { keepHistory } from '../support/histories';
import { createOrgKey, createUserToken } from '../support/identity';

const SECRET = 'test-callback-secret-0123456789';

let ctx: TestContext;
let t: CampaignTenant;
let other: CampaignTenant;

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      DIALER_SIMULATED_LATENCY_MS: '200',
      DIALER_SIMULATED_OUTCOMES: 'completed:1',
      DIALER_CALLBACK_SECRET: SECRET,
      CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
    },
  });
  [t, other] = await Promise.all([tenantWithAgent(ctx), tenantWithAgent(ctx)]);
});
afterAll(() => ctx?.close());

const idle = () => contact({ scheduled_at: FAR_FUTURE }); // never due during a test

describe('POST /campaign/campaigns', () => {
  it('stores the campaign paused with every field, its contacts, and starts its workflow', async () => {
    const body = {
      name: 'Renewals Q3',
      external_id: 'crm-42',
      configuration_id: '0190a000-0000-7000-8000-000000000001',
      agent_number: '+14155550199',
      priority: 7,
      agent_id: t.agentId,
      version: 2,
      contacts: [idle(), idle(), idle()],
      calling_window: ALWAYS,
    };
    const res = await ctx.request('POST', '/campaign/campaigns', { token: t.session, body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      external_id: 'crm-42',
      organization_id: t.orgId,
      name: 'Renewals Q3',
      status: 'paused',
      configuration_id: body.configuration_id,
      agent_number: '+14155550199',
      priority: 7,
      agent_id: t.agentId,
      version: 2,
      timezone: 'UTC',
      calling_window: ALWAYS,
      max_attempts: 3,
      retry_backoff_seconds: 600,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      created_by: `user:${t.user}`,
      modified_by: `user:${t.user}`,
      closed_at: null,
      simulated: true,
    });

    const detail = await ctx.request('GET', `/campaign/campaigns/${res.body.id}`, { token: t.session });
    expect(detail.status).toBe(200);
    expect(detail.body.progress).toEqual({ total: 3, pending: 3, calling: 0, completed: 0, failed: 0, canceled: 0 });

    const { handle, description } = await startedWorkflow(ctx, res.body.id);
    expect(description.status.name).toBe('RUNNING');
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(t.orgId);
    expect(await waitFor(async () => (await handle.query<string>('campaignStatus')) === 'paused' || undefined)).toBe(true);
  });

  it('fills defaults: priority 0, three attempts, ten-minute backoff, weekday 09:00-20:00 in UTC', async () => {
    const res = await ctx.request('POST', '/campaign/campaigns', { token: t.session, body: { name: 'Defaults', agent_id: t.agentId } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      priority: 0,
      max_attempts: 3,
      retry_backoff_seconds: 600,
      timezone: 'UTC',
      calling_window: { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5] },
      external_id: null,
      configuration_id: null,
      agent_number: null,
      version: null,
    });
  });

  it.each([
    [{ priority: -1 }, ['body', 'priority'], 'greater_than_equal'],
    [{ priority: 1_000_000 }, ['body', 'priority'], 'less_than_equal'],
    [{ priority: 2.5 }, ['body', 'priority'], 'int_type'],
    [{ name: undefined }, ['body', 'name'], 'missing'],
    [{ name: '' }, ['body', 'name'], 'string_too_short'],
    [{ timezone: 'Mars/Olympus' }, ['body', 'timezone'], 'value_error'],
    [{ max_attempts: 0 }, ['body', 'max_attempts'], 'greater_than_equal'],
    [{ max_attempts: 11 }, ['body', 'max_attempts'], 'less_than_equal'],
    [{ retry_backoff_seconds: 0 }, ['body', 'retry_backoff_seconds'], 'greater_than_equal'],
    [{ calling_window: { start: '20:00', end: '09:00', days: [1] } }, ['body', 'calling_window', 'end'], 'value_error'],
    [{ calling_window: { start: '09:00', end: '20:00', days: [0] } }, ['body', 'calling_window', 'days', 0], 'greater_than_equal'],
    [{ calling_window: { start: '09:00', end: '20:00', days: [8] } }, ['body', 'calling_window', 'days', 0], 'less_than_equal'],
    [{ calling_window: { start: '09:00', end: '20:00', days: [1, 1] } }, ['body', 'calling_window', 'days'], 'value_error'],
    [{ calling_window: { start: '9am', end: '20:00', days: [1] } }, ['body', 'calling_window', 'start'], 'string_pattern_mismatch'],
    [{ contacts: [{}] }, ['body', 'contacts', 0, 'phone_numbers'], 'missing'],
    [{ contacts: [{ phone_numbers: [] }] }, ['body', 'contacts', 0, 'phone_numbers'], 'too_short'],
    [{ contacts: [{ phone_numbers: ['555-0100'] }] }, ['body', 'contacts', 0, 'phone_numbers', 0], 'string_pattern_mismatch'],
    [{ agent_number: 'not-a-number' }, ['body', 'agent_number'], 'string_pattern_mismatch'],
    [{ contacts: [{ phone_numbers: ['+14155550100'], timezone: 'Nowhere' }] }, ['body', 'contacts', 0, 'timezone'], 'value_error'],
    [
      { contacts: [{ phone_numbers: ['+14155550100'], scheduled_at: 'tomorrow' }] },
      ['body', 'contacts', 0, 'scheduled_at'],
      'datetime_parsing',
    ],
    [{ agent_id: undefined, contacts: [{ phone_numbers: ['+14155550100'] }] }, ['body', 'contacts', 0, 'agent_id'], 'value_error'],
    [{ agent_id: 'not-a-uuid' }, ['body', 'agent_id'], 'uuid_parsing'],
    [{ status: 'active' }, ['body', 'status'], 'extra_forbidden'],
  ])('answers 422 for %j', async (patch, loc, type) => {
    const body: Record<string, unknown> = { name: 'Invalid', agent_id: t.agentId, ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete body[k];
    const res = await ctx.request('POST', '/campaign/campaigns', { token: t.session, body });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('takes the agent from each contact when the campaign names none', async () => {
    const res = await ctx.request('POST', '/campaign/campaigns', {
      token: t.session,
      body: { name: 'Per contact', contacts: [contact({ agent_id: t.agentId, scheduled_at: FAR_FUTURE })] },
    });
    expect(res.status).toBe(200);
    expect(res.body.agent_id).toBeNull();
  });

  it('answers 404 for an agent that is not in the organization, writing nothing', async () => {
    const before = await ctx.deps.sql`SELECT count(*)::int AS n FROM campaigns WHERE org_id = ${t.orgId}`;
    for (const agentId of [other.agentId, '0190a000-0000-7000-8000-0000000000aa']) {
      const res = await ctx.request('POST', '/campaign/campaigns', {
        token: t.session,
        body: { name: 'Foreign agent', agent_id: agentId },
      });
      expect(res.status).toBe(404);
      expect(res.body.detail).toMatch(/^Agent not found/);
      const viaContact = await ctx.request('POST', '/campaign/campaigns', {
        token: t.session,
        body: { name: 'Foreign agent', agent_id: t.agentId, contacts: [contact({ agent_id: agentId })] },
      });
      expect(viaContact.status).toBe(404);
    }
    const after = await ctx.deps.sql`SELECT count(*)::int AS n FROM campaigns WHERE org_id = ${t.orgId}`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('refuses a second campaign with the same external_id in the organization (409), not in another', async () => {
    await createCampaign(ctx, t, { external_id: 'dup-1' });
    const again = await ctx.request('POST', '/campaign/campaigns', {
      token: t.session,
      body: { name: 'Again', agent_id: t.agentId, external_id: 'dup-1' },
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'A campaign with this external_id already exists' });
    await createCampaign(ctx, other, { external_id: 'dup-1' });
  });

  it('needs an active organization: a pat_ without X-Service-Org gets 400', async () => {
    const pat = await createUserToken(ctx, t.session);
    const res = await ctx.request('POST', '/campaign/campaigns', { token: pat, body: { name: 'No org', agent_id: t.agentId } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Active organization required' });
    const withOrg = await ctx.request('POST', '/campaign/campaigns', {
      token: pat,
      org: t.org,
      body: { name: 'With org', agent_id: t.agentId },
    });
    expect(withOrg.status).toBe(200);
  });
});

describe('scopes', () => {
  let readOnly: string;
  let campaignId: string;
  beforeAll(async () => {
    readOnly = await createOrgKey(ctx, t.session, { scopes: ['api:read'] });
    campaignId = (await createCampaign(ctx, t, { contacts: [idle()] })).id;
  });

  it.each([
    ['POST', '/campaign/campaigns', { name: 'x' }],
    ['POST', '/campaign/campaigns/{id}/contacts', { contacts: [{ phone_numbers: ['+14155550100'] }] }],
    ['POST', '/campaign/campaigns/{id}/resume', undefined],
    ['POST', '/campaign/campaigns/{id}/pause', undefined],
    ['POST', '/campaign/campaigns/{id}/cancel', undefined],
    ['PUT', '/campaign/concurrency-settings', { concurrency_limit: 5 }],
  ])('a read-only key gets 403 on %s %s', async (method, path, body) => {
    const res = await ctx.request(method, path.replace('{id}', campaignId), { token: readOnly, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'Insufficient permissions' });
  });

  it.each([
    ['/campaign/campaigns'],
    ['/campaign/campaigns/{id}'],
    ['/campaign/campaigns/{id}/contacts'],
    ['/campaign/concurrency-settings'],
  ])('a read-only key may GET %s', async (path) => {
    const res = await ctx.request('GET', path.replace('{id}', campaignId), { token: readOnly });
    expect(res.status).toBe(200);
  });

  it('a token without any CRM scope cannot read campaigns', async () => {
    const agentsOnly = await createOrgKey(ctx, t.session, { scopes: ['agents:read'] });
    expect((await ctx.request('GET', '/campaign/campaigns', { token: agentsOnly })).status).toBe(403);
  });
});

describe("another organization's campaign is a 404", () => {
  let foreignId: string;
  beforeAll(async () => {
    foreignId = (await createCampaign(ctx, other, { contacts: [idle()] })).id;
  });

  it.each([
    ['GET', '/campaign/campaigns/{id}', undefined],
    ['GET', '/campaign/campaigns/{id}/contacts', undefined],
    ['POST', '/campaign/campaigns/{id}/contacts', { contacts: [{ phone_numbers: ['+14155550100'] }] }],
    ['POST', '/campaign/campaigns/{id}/resume', undefined],
    ['POST', '/campaign/campaigns/{id}/pause', undefined],
    ['POST', '/campaign/campaigns/{id}/cancel', undefined],
  ])('%s %s', async (method, path, body) => {
    const res = await ctx.request(method, path.replace('{id}', foreignId), { token: t.session, body });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Campaign not found' });
    expect(await ctx.request('GET', `/campaign/campaigns/${foreignId}`, { token: other.session }).then((r) => r.body.status)).toBe(
      'paused',
    );
  });

  it('and is absent from the list', async () => {
    const res = await ctx.request('GET', '/campaign/campaigns?limit=200', { token: t.session });
    expect(res.body.data.map((c: { id: string }) => c.id)).not.toContain(foreignId);
  });

  it('a malformed id is a 422', async () => {
    const res = await ctx.request('GET', '/campaign/campaigns/nope', { token: t.session });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['path', 'id'], type: 'uuid_parsing' });
  });
});

describe('GET /campaign/campaigns', () => {
  let lister: CampaignTenant;
  const ids: string[] = [];
  beforeAll(async () => {
    lister = await tenantWithAgent(ctx);
    for (let i = 0; i < 5; i++) ids.push((await createCampaign(ctx, lister, { name: `L${i}`, contacts: [idle()] })).id);
    expect((await move(ctx, lister, ids[1]!, 'resume')).status).toBe(200);
    expect((await move(ctx, lister, ids[3]!, 'cancel')).status).toBe(200);
  });

  it('lists newest first in cursor pages with the total', async () => {
    const first = await ctx.request('GET', '/campaign/campaigns?limit=2', { token: lister.session });
    expect(first.status).toBe(200);
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.pagination).toEqual({ limit: 2, next_cursor: expect.any(String), total: 5, offset: 0 });
    const second = await ctx.request('GET', `/campaign/campaigns?limit=2&cursor=${first.body.pagination.next_cursor}`, {
      token: lister.session,
    });
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const third = await ctx.request('GET', `/campaign/campaigns?limit=2&cursor=${second.body.pagination.next_cursor}`, {
      token: lister.session,
    });
    expect(third.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(third.body.pagination.next_cursor).toBeNull();
  });

  it('filters by status', async () => {
    const active = await ctx.request('GET', '/campaign/campaigns?status=active', { token: lister.session });
    expect(active.body.data.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
    expect(active.body.pagination.total).toBe(1);
    const paused = await ctx.request('GET', '/campaign/campaigns?status=paused', { token: lister.session });
    expect(paused.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[2], ids[0]]);
  });

  it('answers 400 for a status outside the allowed ones', async () => {
    const res = await ctx.request('GET', '/campaign/campaigns?status=running', { token: lister.session });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^Invalid status 'running': expected one of /);
  });

  it.each([['limit=0'], ['limit=201'], ['limit=ten']])('answers 422 for ?%s', async (qs) => {
    const res = await ctx.request('GET', `/campaign/campaigns?${qs}`, { token: lister.session });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc[0]).toBe('query');
  });

  it('answers 400 for a cursor it did not issue', async () => {
    const res = await ctx.request('GET', '/campaign/campaigns?cursor=garbage', { token: lister.session });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Invalid cursor' });
  });
});

describe('status moves', () => {
  const fresh = async () => (await createCampaign(ctx, t, { contacts: [idle(), idle()] })).id;

  it('paused → active → paused → active → canceled, each answered with the new state', async () => {
    const id = await fresh();
    const resumed = await move(ctx, t, id, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ id, status: 'active', closed_at: null, modified_by: `user:${t.user}` });
    const paused = await move(ctx, t, id, 'pause');
    expect(paused.body).toMatchObject({ status: 'paused', closed_at: null });
    expect((await move(ctx, t, id, 'resume')).body.status).toBe('active');
    const canceled = await move(ctx, t, id, 'cancel');
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect(Date.parse(canceled.body.closed_at)).not.toBeNaN();
    const detail = await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session });
    expect(detail.body.progress).toMatchObject({ total: 2, pending: 0, canceled: 2 });
    // The campaign's workflow ends with it.
    await waitFor(async () => (await ctx.deps.temporal.workflow.getHandle(`campaign:${id}`).describe()).status.name === 'COMPLETED');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `campaign:${id}`, 'campaign-lifecycle');
  });

  it('paused → canceled', async () => {
    const id = await fresh();
    const res = await move(ctx, t, id, 'cancel');
    expect(res.body).toMatchObject({ status: 'canceled', closed_at: expect.any(String) });
  });

  it('active → completed once every contact is final, with closed_at and one conversation per contact', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [contact(), contact()] });
    expect((await move(ctx, t, id, 'resume')).status).toBe(200);
    await waitForStatus(ctx, t, id, 'completed');
    const detail = await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session });
    expect(detail.body.closed_at).toEqual(expect.any(String));
    expect(detail.body.progress).toEqual({ total: 2, pending: 0, calling: 0, completed: 2, failed: 0, canceled: 0 });
    const calls = await conversationsOf(ctx, id);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({ status: 'completed', direction: 'outbound', agent_id: t.agentId });
      expect(call.idempotency_key).toMatch(new RegExp(`^${id}:[0-9a-f-]{36}:1$`));
      expect(call.ended_at!.getTime()).toBeGreaterThanOrEqual(call.started_at!.getTime());
    }
  });

  it('resuming a campaign with no contact left to call completes it', async () => {
    const { id } = await createCampaign(ctx, t);
    const res = await move(ctx, t, id, 'resume');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', closed_at: expect.any(String) });
  });

  describe('refused moves are 409', () => {
    let paused: string;
    let active: string;
    let completed: string;
    let canceled: string;
    beforeAll(async () => {
      [paused, active, canceled] = await Promise.all([fresh(), fresh(), fresh()]);
      completed = (await createCampaign(ctx, t)).id;
      await move(ctx, t, active, 'resume');
      await move(ctx, t, canceled, 'cancel');
      expect((await move(ctx, t, completed, 'resume')).body.status).toBe('completed');
    });

    it.each([
      ['paused', 'pause'],
      ['active', 'resume'],
      ['completed', 'resume'],
      ['completed', 'pause'],
      ['completed', 'cancel'],
      ['canceled', 'resume'],
      ['canceled', 'pause'],
      ['canceled', 'cancel'],
    ] as const)('%s campaign: %s', async (state, action) => {
      const id = { paused, active, completed, canceled }[state];
      const res = await move(ctx, t, id, action);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ detail: `Cannot ${action} a campaign that is ${state}` });
      expect((await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session })).body.status).toBe(state);
    });

    it.each([['completed'], ['canceled']] as const)('adding contacts to a %s campaign', async (state) => {
      const id = state === 'completed' ? completed : canceled;
      const res = await ctx.request('POST', `/campaign/campaigns/${id}/contacts`, { token: t.session, body: { contacts: [contact()] } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ detail: `Cannot add contacts to a campaign that is ${state}` });
    });
  });
});

describe('notification: campaign.completed', () => {
  const outbox = (campaignId: string) =>
    ctx.deps.sql<{ event_type: string; entity_type: string; payload: any; recipient_user_ids: string[] }[]>`
      SELECT event_type, entity_type, payload, recipient_user_ids FROM notification_outbox
      WHERE org_id = ${t.orgId} AND entity_id = ${campaignId} ORDER BY created_at, id`;
  const creatorId = async () => (await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${t.user}`)[0]!.id;

  it('is written once, to the creator, when the last contact is final', async () => {
    const { id } = await createCampaign(ctx, t, { name: 'Spring calls', contacts: [contact()] });
    expect((await move(ctx, t, id, 'resume')).status).toBe(200);
    await waitForStatus(ctx, t, id, 'completed');
    expect(await outbox(id)).toEqual([
      {
        event_type: 'campaign.completed',
        entity_type: 'campaign',
        payload: { campaign_id: id, name: 'Spring calls' },
        recipient_user_ids: [await creatorId()],
      },
    ]);
  });

  it('is written when resuming completes a campaign with no contact left, and not for other moves', async () => {
    const empty = await createCampaign(ctx, t);
    expect((await move(ctx, t, empty.id, 'resume')).body.status).toBe('completed');
    expect((await outbox(empty.id)).map((r) => r.event_type)).toEqual(['campaign.completed']);
    const canceled = await createCampaign(ctx, t, { contacts: [idle()] });
    expect((await move(ctx, t, canceled.id, 'resume')).body.status).toBe('active');
    expect((await move(ctx, t, canceled.id, 'cancel')).body.status).toBe('canceled');
    expect(await outbox(canceled.id)).toEqual([]);
  });
});

describe('POST /campaign/campaigns/{id}/contacts', () => {
  it('adds contacts to a paused campaign and lists them in order with their state', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
    const res = await ctx.request('POST', `/campaign/campaigns/${id}/contacts`, {
      token: t.session,
      body: { contacts: [idle(), contact({ external_id: 'c-2', scheduled_at: FAR_FUTURE, data: { tier: 'gold' } })] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      campaign_id: id,
      added: 2,
      progress: { total: 3, pending: 3, calling: 0, completed: 0, failed: 0, canceled: 0 },
    });
    const list = await ctx.request('GET', `/campaign/campaigns/${id}/contacts?limit=2`, { token: t.session });
    expect(list.body.data).toHaveLength(2);
    expect(list.body.pagination.total).toBe(3);
    const rest = await ctx.request('GET', `/campaign/campaigns/${id}/contacts?cursor=${list.body.pagination.next_cursor}`, {
      token: t.session,
    });
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.data[0]).toMatchObject({
      campaign_id: id,
      external_id: 'c-2',
      status: 'pending',
      attempts: 0,
      scheduled_at: '2099-01-01T00:00:00.000Z',
      next_attempt_at: '2099-01-01T00:00:00.000Z',
      last_outcome: null,
      data: { tier: 'gold' },
    });
    const byStatus = await ctx.request('GET', `/campaign/campaigns/${id}/contacts?status=completed`, { token: t.session });
    expect(byStatus.body.data).toEqual([]);
  });

  it('dials contacts added to an active campaign', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
    await move(ctx, t, id, 'resume');
    const res = await ctx.request('POST', `/campaign/campaigns/${id}/contacts`, { token: t.session, body: { contacts: [contact()] } });
    expect(res.status).toBe(200);
    await waitFor(async () => (await conversationsOf(ctx, id)).some((c) => c.status === 'completed'));
    expect((await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session })).body.progress).toMatchObject({
      completed: 1,
      pending: 1,
    });
  });

  it('validates the contacts (422) and their agents (404)', async () => {
    const { id } = await createCampaign(ctx, t);
    const empty = await ctx.request('POST', `/campaign/campaigns/${id}/contacts`, { token: t.session, body: { contacts: [] } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ['body', 'contacts'], type: 'too_short' });
    const foreign = await ctx.request('POST', `/campaign/campaigns/${id}/contacts`, {
      token: t.session,
      body: { contacts: [contact({ agent_id: other.agentId })] },
    });
    expect(foreign.status).toBe(404);

    const noAgent = await ctx.request('POST', '/campaign/campaigns', { token: t.session, body: { name: 'No agent' } });
    const missing = await ctx.request('POST', `/campaign/campaigns/${noAgent.body.id}/contacts`, {
      token: t.session,
      body: { contacts: [contact()] },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'contacts', 0, 'agent_id'], type: 'value_error' });
  });
});

describe('concurrency settings', () => {
  it('GET shows the default of 10 before any PUT', async () => {
    const fresh = await tenantWithAgent(ctx);
    const res = await ctx.request('GET', '/campaign/concurrency-settings', { token: fresh.session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      organization_id: fresh.orgId,
      concurrency_limit: 10,
      // The test context's pacing defaults (test/support/context.ts).
      calls_per_second: 1000,
      calls_per_second_per_number: 1000,
      active: 0,
      created_at: null,
      updated_at: null,
      created_by: null,
      modified_by: null,
    });
  });

  it('PUT creates then updates the organization row; another organization keeps its own', async () => {
    const owner = await tenantWithAgent(ctx);
    const created = await ctx.request('PUT', '/campaign/concurrency-settings', { token: owner.session, body: { concurrency_limit: 25 } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      organization_id: owner.orgId,
      concurrency_limit: 25,
      calls_per_second: 1000,
      calls_per_second_per_number: 1000,
      active: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      created_by: `user:${owner.user}`,
      modified_by: `user:${owner.user}`,
    });
    const key = await createOrgKey(ctx, owner.session, { scopes: ['api:manage'] });
    const updated = await ctx.request('PUT', '/campaign/concurrency-settings', { token: key, body: { concurrency_limit: 10_000 } });
    expect(updated.body).toMatchObject({
      concurrency_limit: 10_000,
      created_at: created.body.created_at,
      created_by: `user:${owner.user}`,
    });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    expect((await ctx.request('GET', '/campaign/concurrency-settings', { token: owner.session })).body.concurrency_limit).toBe(10_000);
    expect((await ctx.request('GET', '/campaign/concurrency-settings', { token: other.session })).body.concurrency_limit).toBe(10);
  });

  it.each([
    [{ concurrency_limit: 10_001 }, 'less_than_equal'],
    [{ concurrency_limit: -1 }, 'greater_than_equal'],
    [{ concurrency_limit: 1.5 }, 'int_type'],
    [{}, 'missing'],
    [{ concurrency_limit: 5, active: 3 }, 'extra_forbidden'],
  ])('PUT %j is a 422', async (body, type) => {
    const res = await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe(type);
  });

  it('active counts the calls in flight across the campaigns, never above the limit', async () => {
    const busy = await tenantWithAgent(ctx);
    await ctx.request('PUT', '/campaign/concurrency-settings', { token: busy.session, body: { concurrency_limit: 3 } });
    const ringing = { data: { simulate: { latency_ms: 600_000 } } }; // answered only by the test's end
    const a = await createCampaign(ctx, busy, { contacts: [contact(ringing), contact(ringing)] });
    const b = await createCampaign(ctx, busy, { contacts: [contact(ringing), contact(ringing)] });
    await move(ctx, busy, a.id, 'resume');
    await move(ctx, busy, b.id, 'resume');
    const active = await waitFor(async () => {
      const res = await ctx.request('GET', '/campaign/concurrency-settings', { token: busy.session });
      return res.body.active === 3 ? res.body.active : undefined;
    });
    expect(active).toBe(3);
    // A few dispatcher cycles and sweeps later (its history has grown by several cycles), still 3.
    const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${busy.orgId}`);
    const before = (await dispatcher.describe()).historyLength;
    await waitFor(async () => (await dispatcher.describe()).historyLength >= before + 24, 30_000, 'three more dispatcher cycles');
    expect((await ctx.request('GET', '/campaign/concurrency-settings', { token: busy.session })).body.active).toBe(3);
    // Raising the limit lets the fourth call out.
    await ctx.request('PUT', '/campaign/concurrency-settings', { token: busy.session, body: { concurrency_limit: 10 } });
    await waitFor(async () => (await ctx.request('GET', '/campaign/concurrency-settings', { token: busy.session })).body.active === 4);
    await move(ctx, busy, a.id, 'cancel');
    await move(ctx, busy, b.id, 'cancel');
  });
});

describe('POST /campaign/call-events', () => {
  let campaignId: string;
  let key: string;
  let caller: CampaignTenant;
  beforeAll(async () => {
    caller = await tenantWithAgent(ctx);
    // The simulated dialer would answer after ten minutes: the test reports the outcome itself.
    campaignId = (await createCampaign(ctx, caller, { contacts: [contact({ data: { simulate: { latency_ms: 600_000 } } })] })).id;
    await move(ctx, caller, campaignId, 'resume');
    key = await waitFor(async () => (await conversationsOf(ctx, campaignId)).find((c) => c.status === 'ringing')?.idempotency_key);
  });

  const post = (body: unknown, signature?: string) => {
    const raw = JSON.stringify(body);
    return ctx.request('POST', '/campaign/call-events', {
      rawBody: raw,
      headers: { 'Content-Type': 'application/json', ...(signature !== undefined ? { 'X-Dialer-Signature': signature } : {}) },
    });
  };
  const signed = (body: unknown) => post(body, signBody(SECRET, JSON.stringify(body)));

  it('refuses a missing or wrong signature (401)', async () => {
    const body = { idempotency_key: key, status: 'completed' };
    expect((await post(body)).status).toBe(401);
    const wrong = await post(body, signBody('not-the-secret-at-all', JSON.stringify(body)));
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ detail: 'Invalid signature' });
    const tampered = await post({ ...body, status: 'busy' }, signBody(SECRET, JSON.stringify(body)));
    expect(tampered.status).toBe(401);
    expect((await conversationsOf(ctx, campaignId))[0]!.status).toBe('ringing');
  });

  it('answers 404 for a key no campaign call has, and 422 for a malformed event', async () => {
    expect((await signed({ idempotency_key: `${campaignId}:${campaignId}:1`, status: 'completed' })).status).toBe(404);
    const bad = await signed({ idempotency_key: key, status: 'exploded' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'status'], type: 'enum' });
  });

  it('hands progress then the outcome to the dispatcher, which records them on the conversation and the contact', async () => {
    const progress = await signed({ idempotency_key: key, status: 'in_progress', provider_call_id: 'CA123' });
    expect(progress.status).toBe(202);
    expect(progress.body).toEqual({ status: 'accepted' });
    await waitFor(async () => (await conversationsOf(ctx, campaignId))[0]!.status === 'in_progress');

    const ended = await signed({
      idempotency_key: key,
      status: 'completed',
      duration_seconds: 42,
      ended_at: new Date().toISOString(),
      outcome: { summary: 'Booked a demo' },
      vendor_field: 'ignored',
    });
    expect(ended.status).toBe(202);
    await waitForStatus(ctx, caller, campaignId, 'completed');
    const [call] = await conversationsOf(ctx, campaignId);
    expect(call).toMatchObject({
      status: 'completed',
      duration_seconds: 42,
      outcome: { summary: 'Booked a demo', provider_call_id: 'CA123' },
    });
    const contacts = await ctx.request('GET', `/campaign/campaigns/${campaignId}/contacts`, { token: caller.session });
    expect(contacts.body.data[0]).toMatchObject({ status: 'completed', attempts: 1, last_outcome: 'completed' });
    // Nothing left in flight or due: the organization's dispatcher stops.
    const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${caller.orgId}`);
    await waitFor(async () => (await dispatcher.describe()).status.name === 'COMPLETED');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `campaign-dispatcher:${caller.orgId}`, 'campaign-dispatcher');
    // A late or repeated report changes nothing once the call is final: it starts a new dispatcher run,
    // which records it (or not) and ends; once it has, the row is final.
    const endedRun = (await dispatcher.describe()).runId;
    expect((await signed({ idempotency_key: key, status: 'failed' })).status).toBe(202);
    await waitFor(
      async () => {
        const run = await dispatcher.describe();
        return run.runId !== endedRun && run.status.name === 'COMPLETED';
      },
      30_000,
      'the dispatcher run that took the late report to end',
    );
    expect((await conversationsOf(ctx, campaignId))[0]!.status).toBe('completed');
  });
});

describe('without Temporal, or without a callback secret', () => {
  let down: TestContext;
  beforeAll(async () => {
    down = await createTestContext({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
  });
  afterAll(() => down?.close());

  it('a create answers with its row, pending its workflow; its first move answers 503 and changes nothing', async () => {
    const tenant = await tenantWithAgent(down);
    const res = await down.request('POST', '/campaign/campaigns', {
      token: tenant.session,
      body: { name: 'Later', agent_id: tenant.agentId, contacts: [contact()] },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
    const stored = () => down.deps.sql<{ status: string; pending: boolean; contacts: number }[]>`
      SELECT status, workflow_pending_since IS NOT NULL AS pending,
             (SELECT count(*) FROM campaign_contacts WHERE campaign_id = ${res.body.id})::int AS contacts
      FROM campaigns WHERE id = ${res.body.id}`;
    expect(await stored()).toEqual([{ status: 'paused', pending: true, contacts: 1 }]);
    // The move starts the workflow first (the start after the create was lost): Temporal is down, so 503.
    const moved = await move(down, tenant, res.body.id, 'resume');
    expect(moved.status).toBe(503);
    expect(moved.body).toEqual({ detail: 'Workflow engine unavailable, try again shortly' });
    expect(await stored()).toEqual([{ status: 'paused', pending: true, contacts: 1 }]);
  });

  it('a move answers 503 and changes nothing', async () => {
    const tenant = await tenantWithAgent(down);
    const [row] = await down.deps.sql<{ id: string }[]>`
      INSERT INTO campaigns (id, org_id, name, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by)
      VALUES (gen_random_uuid(), ${tenant.orgId}, 'Stored', '{"start":"09:00","end":"20:00","days":[1]}', 3, 600, 'user:x', 'user:x')
      RETURNING id`;
    const res = await move(down, tenant, row!.id, 'resume');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'Workflow engine unavailable, try again shortly' });
    expect((await down.request('GET', `/campaign/campaigns/${row!.id}`, { token: tenant.session })).body.status).toBe('paused');
  });

  it('call events answer 503 when no secret is configured', async () => {
    const res = await down.request('POST', '/campaign/call-events', { body: { idempotency_key: 'k', status: 'completed' } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'Call events are not configured in this deployment' });
  });
});
