import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../platform/core/ids';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import { BUILTIN_NOTICE } from '../../platform/adapters/llm/llm';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, type Tenant } from '../support/identity';

// The Agents area without a worker: started workflows stay queued, which holds a version in the
// "generating" state for as long as a test needs it. Workflows that run are in agents-workflows.test.ts.

let ctx: TestContext;
let tenant: Tenant;
let orgId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await newTenant(ctx);
  orgId = (await ctx.request('GET', '/me', { token: tenant.session })).body.organization.id;
});
afterAll(() => ctx?.close());

const call = (method: string, path: string, body?: unknown, token = tenant.session) => ctx.request(method, path, { token, body });

async function createAgent(body: Record<string, unknown> = {}, token = tenant.session) {
  const res = await call('POST', '/core/agents', { name: 'Front desk', ...body }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; [k: string]: any };
}

async function createVersion(agentId: string, body: Record<string, unknown> = { config: {} }, token = tenant.session) {
  const res = await call('POST', `/core/agents/${agentId}/versions`, body, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { version: number; [k: string]: any };
}

async function registerNumber(number: string, token = tenant.session) {
  const res = await call('POST', '/core/phone-numbers', { number }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; number: string };
}

/** A fresh agent with version 1 published. */
async function publishedAgent(token = tenant.session) {
  const agent = await createAgent({}, token);
  await createVersion(agent.id, { config: { instructions: 'Help callers.' } }, token);
  expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {}, token)).status).toBe(200);
  return agent;
}

let numberSeq = 1000;
const freshNumber = () => `+1415555${numberSeq++}`;

describe('agents: create, read, update, delete', () => {
  it('creates an agent with defaults and the caller as creator', async () => {
    const res = await call('POST', '/core/agents', { name: 'Reception', description: 'Answers the phone', metadata: { team: 'ops' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Reception',
      description: 'Answers the phone',
      active: true,
      is_demo: false,
      metadata: { team: 'ops' },
      published_version: null,
      organization_id: orgId,
      created_by: `user:${tenant.user}`,
      modified_by: `user:${tenant.user}`,
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });

  it.each([
    ['no name', {}, 'missing', ['body', 'name']],
    ['an empty name', { name: ' ' }, 'string_too_short', ['body', 'name']],
    ['an unknown field', { name: 'x', colour: 'red' }, 'extra_forbidden', ['body', 'colour']],
    ['metadata that is not an object', { name: 'x', metadata: [1] }, 'record_type', ['body', 'metadata']],
  ])('refuses %s with 422', async (_name, body, type, loc) => {
    const res = await call('POST', '/core/agents', body);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc });
  });

  it('reads one agent with empty versions, numbers, widgets, SIP state and statistics', async () => {
    const agent = await createAgent();
    const res = await call('GET', `/core/agents/${agent.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: agent.id,
      versions: [],
      versions_total: 0,
      phone_numbers: [],
      widgets: [],
      sip: { deployed: false, sip_uri: null, deployed_at: null, state: null, provider: null, provider_id: null },
      statistics: { conversations_total: 0, conversations_last_30_days: 0, average_duration_seconds: null, last_conversation_at: null },
    });
  });

  it('computes conversation statistics from the conversations table', async () => {
    const agent = await createAgent();
    const otherAgent = await createAgent();
    const row = (agentId: string, duration: number | null, daysAgo: number) => ({
      id: newId(),
      org_id: orgId,
      agent_id: agentId,
      status: 'completed',
      direction: 'outbound',
      duration_seconds: duration,
      started_at: new Date(Date.now() - daysAgo * 86_400_000),
    });
    const rows = [row(agent.id, 60, 1), row(agent.id, 120, 2), row(agent.id, null, 0), row(agent.id, 30, 40), row(otherAgent.id, 999, 1)];
    await ctx.deps.sql`INSERT INTO conversations ${ctx.deps.sql(rows)}`;
    const res = await call('GET', `/core/agents/${agent.id}`);
    expect(res.body.statistics).toMatchObject({ conversations_total: 4, conversations_last_30_days: 3, average_duration_seconds: 70 });
    expect(new Date(res.body.statistics.last_conversation_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('shows the agent widgets', async () => {
    const agent = await createAgent();
    await ctx.deps
      .sql`INSERT INTO agent_widgets (id, org_id, agent_id, name, allowed_origins) VALUES (${newId()}, ${orgId}, ${agent.id}, 'Site bubble', ${['https://acme.example']})`;
    const res = await call('GET', `/core/agents/${agent.id}`);
    expect(res.body.widgets).toEqual([
      // A row without a config shows the defaults.
      expect.objectContaining({
        agent_id: agent.id,
        name: 'Site bubble',
        allowed_origins: ['https://acme.example'],
        config: { title: null, greeting: null, theme_color: '#0f766e', button_label: 'Talk to us', position: 'bottom-right' },
      }),
    ]);
  });

  it('updates only the fields sent; an empty body is 400', async () => {
    const agent = await createAgent({ description: 'd', metadata: { a: 1 } });
    const res = await call('PUT', `/core/agents/${agent.id}`, { active: false, description: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Front desk', active: false, description: null, metadata: { a: 1 }, is_demo: false });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(agent.updated_at).getTime());
    expect(await call('PUT', `/core/agents/${agent.id}`, {})).toMatchObject({ status: 400, body: { detail: 'Nothing to update' } });
  });

  it('deletes with 204; the agent is then gone and its phone numbers stay in the inventory, free', async () => {
    const agent = await publishedAgent();
    const number = await registerNumber(freshNumber());
    await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { phone_numbers: [number.number], direction: 'both' });
    const res = await call('DELETE', `/core/agents/${agent.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await call('GET', `/core/agents/${agent.id}`)).status).toBe(404);
    expect((await call('DELETE', `/core/agents/${agent.id}`)).status).toBe(404);
    const list = await call('GET', `/core/phone-numbers?limit=200`);
    expect(list.body.data.find((n: any) => n.id === number.id)).toMatchObject({ inbound_agent_id: null, outbound_agent_id: null });
  });
});

describe('GET /core/agents: filters and cursor pagination', () => {
  let lister: Tenant;
  const ids: Record<string, string> = {};
  const list = (query: string) => call('GET', `/core/agents${query}`, undefined, lister.session);

  beforeAll(async () => {
    lister = await newTenant(ctx);
    const specs = [
      ['alpha', { metadata: { team: 'sales', region: { code: 'eu' } } }],
      ['Beta support', { active: false, metadata: { team: 'support' } }],
      ['gamma 100%', { is_demo: true }],
      ['delta', { metadata: { team: 'sales', tier: 2 } }],
      ['epsilon', {}],
    ] as const;
    for (const [name, extra] of specs) ids[name] = (await createAgent({ name, ...extra }, lister.session)).id;
  });

  it('lists newest first with the cursor page shape', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.data.map((a: any) => a.name)).toEqual(['epsilon', 'delta', 'gamma 100%', 'Beta support', 'alpha']);
    expect(res.body.pagination).toEqual({ limit: 50, next_cursor: null, total: 5, offset: 0 });
  });

  it('walks every agent exactly once with limit and cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({ limit: 2, total: 5, offset: 0 });
      seen.push(...res.body.data.map((a: any) => a.name));
      cursor = res.body.pagination.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['epsilon', 'delta', 'gamma 100%', 'Beta support', 'alpha']);
  });

  it.each([
    ['?name=BETA', ['Beta support']],
    ['?name=100%25', ['gamma 100%']],
    ['?name=0%25', ['gamma 100%']],
    ['?name=a%25', []],
    ['?active=false', ['Beta support']],
    ['?is_demo=true', ['gamma 100%']],
    ['?is_demo=false&active=true', ['epsilon', 'delta', 'alpha']],
    [`?metadata=${encodeURIComponent('{"team":"sales"}')}`, ['delta', 'alpha']],
    [`?metadata=${encodeURIComponent('{"region":{"code":"eu"}}')}`, ['alpha']],
    [`?metadata=${encodeURIComponent('{"team":"nobody"}')}`, []],
  ])('filters %s', async (query, names) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(res.body.data.map((a: any) => a.name)).toEqual(names);
    expect(res.body.pagination.total).toBe(names.length);
  });

  it('filters by creation and update time', async () => {
    const gamma = (await call('GET', `/core/agents/${ids['gamma 100%']}`, undefined, lister.session)).body;
    const after = await list(`?created_after=${encodeURIComponent(gamma.created_at)}`);
    expect(after.body.data.map((a: any) => a.name)).toEqual(['epsilon', 'delta']);
    const before = await list(`?created_before=${encodeURIComponent(gamma.created_at)}`);
    expect(before.body.data.map((a: any) => a.name)).toEqual(['Beta support', 'alpha']);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(`?updated_after=${future}`)).body.data).toEqual([]);
    expect((await list(`?updated_before=${future}`)).body.pagination.total).toBe(5);
  });

  it('refuses an unknown filter with 400', async () => {
    expect(await list('?colour=red')).toMatchObject({ status: 400, body: { detail: 'Unknown filter: colour' } });
  });

  it('refuses metadata that is not a JSON object with 400', async () => {
    expect(await list('?metadata=%7Bnope')).toMatchObject({ status: 400, body: { detail: 'Invalid metadata filter: not valid JSON' } });
    expect(await list('?metadata=%5B1%5D')).toMatchObject({
      status: 400,
      body: { detail: 'Invalid metadata filter: must be a JSON object' },
    });
  });

  it.each([['?limit=0'], ['?limit=201'], ['?created_after=yesterday']])('refuses %s with 422', async (query) => {
    expect((await list(query)).status).toBe(422);
  });

  it('refuses a filter value outside its allowed ones with 400', async () => {
    expect(await list('?active=yes')).toMatchObject({ status: 400, body: { detail: "Invalid active 'yes': expected one of true, false" } });
  });

  it('refuses a forged cursor with 400', async () => {
    expect(await list('?cursor=bm90LWpzb24')).toMatchObject({ status: 400, body: { detail: 'Invalid cursor' } });
  });
});

describe('versions', () => {
  it('creates a draft from a config, filling defaults', async () => {
    const agent = await createAgent();
    const res = await call('POST', `/core/agents/${agent.id}/versions`, { config: { language: 'fr-FR', llm: { temperature: 0.3 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agent_id: agent.id,
      version: 1,
      published: false,
      published_at: null,
      instruction_builder_inputs: null,
      config: { language: 'fr-FR', llm: { temperature: 0.3, max_tokens: 1024 }, recording: { enabled: true } },
      instructions: { generating: false, dirty: false, manually_edited: false, stale: false },
    });
    expect((await createVersion(agent.id)).version).toBe(2);
  });

  it.each([
    ['neither config nor base_version', {}],
    ['both config and base_version', { config: {}, base_version: 1 }],
  ])('refuses %s with 422', async (_name, body) => {
    const agent = await createAgent();
    const res = await call('POST', `/core/agents/${agent.id}/versions`, body);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'config'], msg: 'Send exactly one of config or base_version' });
  });

  it('refuses a bad config with 422 at the field', async () => {
    const agent = await createAgent();
    const res = await call('POST', `/core/agents/${agent.id}/versions`, { config: { llm: { temperature: 3 } } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: 'less_than_equal', loc: ['body', 'config', 'llm', 'temperature'], ctx: { le: 2 } });
  });

  it('copies base_version; a missing base is 404', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: { first_message: 'Hi there' }, instruction_builder_inputs: { company_name: 'Acme' } });
    const copy = await createVersion(agent.id, { base_version: 1 });
    expect(copy).toMatchObject({ version: 2, config: { first_message: 'Hi there' }, instruction_builder_inputs: { company_name: 'Acme' } });
    expect((await call('POST', `/core/agents/${agent.id}/versions`, { base_version: 9 })).status).toBe(404);
  });

  it('reads one version by number; unknown is 404, malformed is 422', async () => {
    const agent = await createAgent();
    await createVersion(agent.id);
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body.version).toBe(1);
    expect((await call('GET', `/core/agents/${agent.id}/versions/2`)).status).toBe(404);
    expect((await call('GET', `/core/agents/${agent.id}/versions/first`)).status).toBe(422);
  });

  it('lists with filters and cursor, highest version first', async () => {
    const agent = await createAgent();
    for (let i = 0; i < 3; i++) await createVersion(agent.id);
    await call('POST', `/core/agents/${agent.id}/versions/2/publish`, {});
    const base = `/core/agents/${agent.id}/versions`;
    const page1 = await call('GET', `${base}?limit=2`);
    expect(page1.body.data.map((v: any) => v.version)).toEqual([3, 2]);
    expect(page1.body.pagination).toMatchObject({ limit: 2, total: 3, offset: 0 });
    const page2 = await call('GET', `${base}?limit=2&cursor=${page1.body.pagination.next_cursor}`);
    expect(page2.body.data.map((v: any) => v.version)).toEqual([1]);
    expect(page2.body.pagination.next_cursor).toBeNull();
    expect((await call('GET', `${base}?published=true`)).body.data.map((v: any) => v.version)).toEqual([2]);
    expect((await call('GET', `${base}?published=false`)).body.data.map((v: any) => v.version)).toEqual([3, 1]);
    expect((await call('GET', `${base}?version=3`)).body.data.map((v: any) => v.version)).toEqual([3]);
    expect(
      (await call('GET', `${base}?created_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.data,
    ).toEqual([]);
    expect(await call('GET', `${base}?draft=true`)).toMatchObject({ status: 400, body: { detail: 'Unknown filter: draft' } });
  });

  it('GET latest creates a draft with the default config when the agent has no version, then returns it', async () => {
    const agent = await createAgent();
    const first = await call('GET', `/core/agents/${agent.id}/versions/latest`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 1, published: false, config: { instructions: '', language: 'en-US' } });
    const again = await call('GET', `/core/agents/${agent.id}/versions/latest`);
    expect(again.body.id).toBe(first.body.id);
    expect((await call('GET', `/core/agents/${agent.id}/versions`)).body.pagination.total).toBe(1);
  });

  it('GET latest after publishing creates the next draft from the newest version', async () => {
    const agent = await publishedAgent();
    const latest = await call('GET', `/core/agents/${agent.id}/versions/latest`);
    expect(latest.body).toMatchObject({ version: 2, published: false, config: { instructions: 'Help callers.' } });
  });

  it('GET latest skips an older draft below a newer published version and drafts from the published one', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: { first_message: 'v1' } });
    await createVersion(agent.id, { config: { first_message: 'v2' } });
    expect((await call('POST', `/core/agents/${agent.id}/versions/2/publish`, {})).status).toBe(200);
    expect((await call('PUT', `/core/agents/${agent.id}/versions/latest`, { config: {} })).status).toBe(404);
    const latest = await call('GET', `/core/agents/${agent.id}/versions/latest`);
    expect(latest.body).toMatchObject({ version: 3, published: false, config: { first_message: 'v2' } });
  });

  it('GET latest creates one draft when asked concurrently', async () => {
    const agent = await createAgent();
    const answers = await Promise.all([1, 2, 3, 4].map(() => call('GET', `/core/agents/${agent.id}/versions/latest`)));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  });

  it('PUT replaces a draft config; PUT on a published version is 400 and changes nothing', async () => {
    const agent = await publishedAgent();
    await createVersion(agent.id, { config: { first_message: 'old' } });
    const put = await call('PUT', `/core/agents/${agent.id}/versions/2`, { config: { first_message: 'new' } });
    expect(put.status).toBe(200);
    expect(put.body.config.first_message).toBe('new');
    const before = (await call('GET', `/core/agents/${agent.id}/versions/1`)).body;
    const refused = await call('PUT', `/core/agents/${agent.id}/versions/1`, { config: { instructions: 'changed' } });
    expect(refused).toMatchObject({
      status: 400,
      body: { detail: 'Published versions are immutable: create a new version from it (base_version)' },
    });
    const inputs = await call('PUT', `/core/agents/${agent.id}/versions/1`, { instruction_builder_inputs: { company_name: 'X' } });
    expect(inputs.status).toBe(400);
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body).toEqual(before);
  });

  it('the SQL guard alone keeps a published version unchanged', async () => {
    const { updateDraft } = await import('../../db/agent-versions');
    const agent = await publishedAgent();
    const row = await updateDraft(
      ctx.deps.sql,
      orgId,
      agent.id,
      1,
      { config: { instructions: 'sneaky' }, instructions_dirty: false, instructions_manually_edited: true },
      'user:x',
    );
    expect(row).toBeUndefined();
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body.config.instructions).toBe('Help callers.');
  });

  it('PUT with an empty body is 400; PUT latest without a draft is 404; a bad config is 422', async () => {
    const agent = await publishedAgent();
    expect((await call('PUT', `/core/agents/${agent.id}/versions/1`, {})).status).toBe(400);
    expect((await call('PUT', `/core/agents/${agent.id}/versions/latest`, { config: {} })).status).toBe(404);
    await createVersion(agent.id);
    expect((await call('PUT', `/core/agents/${agent.id}/versions/latest`, { config: { first_message: 'via latest' } })).body.version).toBe(
      2,
    );
    expect((await call('PUT', `/core/agents/${agent.id}/versions/2`, { config: { language: 'klingon!' } })).status).toBe(422);
  });
});

describe('instructions state', () => {
  const state = async (agentId: string, version = 1) =>
    (await call('GET', `/core/agents/${agentId}/versions/${version}`)).body.instructions;
  const flags = (s: any) => [s.generating, s.dirty, s.manually_edited, s.stale];

  it('PUT of new builder inputs makes instructions dirty and so stale; publishing is then 409', async () => {
    const agent = await createAgent();
    await createVersion(agent.id);
    const put = await call('PUT', `/core/agents/${agent.id}/versions/1`, { instruction_builder_inputs: { company_name: 'Acme' } });
    expect(flags(put.body.instructions)).toEqual([false, true, false, true]);
    const publish = await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
    expect(publish).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/^Instructions are stale/) } });
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body.published).toBe(false);
  });

  it('PUT of the same inputs changes nothing', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: { instructions: 'Mine' }, instruction_builder_inputs: { company_name: 'Acme' } });
    await call('PUT', `/core/agents/${agent.id}/versions/1`, { config: { instructions: 'Mine' } });
    expect(flags(await state(agent.id))).toEqual([false, true, true, false]);
    const fresh = await createAgent();
    await createVersion(fresh.id, { config: {} });
    await call('PUT', `/core/agents/${fresh.id}/versions/1`, { instruction_builder_inputs: { company_name: 'Acme', tone: 'warm' } });
    await call('PUT', `/core/agents/${fresh.id}/versions/1`, { config: { first_message: 'Hello' } });
    expect(flags(await state(fresh.id))).toEqual([false, true, false, true]);
  });

  it('PUT of different instructions marks them manually edited, which ends staleness and allows publishing', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
    expect(flags(await state(agent.id))).toEqual([false, true, false, true]);
    const put = await call('PUT', `/core/agents/${agent.id}/versions/1`, { config: { instructions: 'Written by hand.' } });
    expect(flags(put.body.instructions)).toEqual([false, true, true, false]);
    expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {})).status).toBe(200);
  });

  it('a config created with instructions and inputs counts as edited by hand; base_version copies the flags', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: { instructions: 'Given.' }, instruction_builder_inputs: { company_name: 'Acme' } });
    expect(flags(await state(agent.id))).toEqual([false, true, true, false]);
    const stale = await createAgent();
    await createVersion(stale.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
    await createVersion(stale.id, { base_version: 1 });
    expect(flags(await state(stale.id, 2))).toEqual([false, true, false, true]);
  });

  describe('while generating (no worker here, so the run stays queued)', () => {
    let agent: { id: string };
    let started: { status: number; body: any };
    beforeAll(async () => {
      agent = await createAgent();
      await createVersion(agent.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
      started = await call('POST', `/core/agents/${agent.id}/versions/1/generate-instructions`);
    });

    it('answers 202 with the workflow id, started with the organization attribute', async () => {
      expect(started).toMatchObject({ status: 202, body: { workflow_id: `agent-instructions:${agent.id}:1` } });
      const info = await ctx.deps.temporal.workflow.getHandle(started.body.workflow_id).describe();
      expect(info.type).toBe('generateAgentInstructions');
      expect(info.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgId);
      expect(info.taskQueue).toBe(ctx.config.TEMPORAL_TASK_QUEUE);
    });

    it('shows the version generating, and refuses publishing, PUT and a second start with 409', async () => {
      expect(flags(await state(agent.id))).toEqual([true, true, false, true]);
      expect(await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {})).toMatchObject({
        status: 409,
        body: { detail: 'Instructions are being generated: publish when generation finishes' },
      });
      expect((await call('PUT', `/core/agents/${agent.id}/versions/1`, { config: { instructions: 'x' } })).status).toBe(409);
      expect((await call('POST', `/core/agents/${agent.id}/versions/1/generate-instructions`)).status).toBe(409);
    });

    it('lets generation start again once its run is gone (terminated by an operator)', async () => {
      await ctx.deps.temporal.workflow.getHandle(started.body.workflow_id).terminate('operator');
      const again = await call('POST', `/core/agents/${agent.id}/versions/1/generate-instructions`);
      expect(again).toMatchObject({ status: 202, body: { workflow_id: started.body.workflow_id } });
      expect((await ctx.deps.temporal.workflow.getHandle(started.body.workflow_id).describe()).status.name).toBe('RUNNING');
    });
  });

  it('generation needs builder inputs (400), a draft (409 for a published version) and a version (404)', async () => {
    const agent = await publishedAgent();
    await createVersion(agent.id);
    expect(await call('POST', `/core/agents/${agent.id}/versions/2/generate-instructions`)).toMatchObject({
      status: 400,
      body: { detail: 'instruction_builder_inputs are required to generate instructions' },
    });
    expect(await call('POST', `/core/agents/${agent.id}/versions/1/generate-instructions`)).toMatchObject({
      status: 409,
      body: { detail: 'Published versions are immutable: their instructions cannot be generated again' },
    });
    expect((await call('POST', `/core/agents/${agent.id}/versions/7/generate-instructions`)).status).toBe(404);
    expect((await call('GET', `/core/agents/${agent.id}/versions/2`)).body.instructions.generating).toBe(false);
  });
});

describe('phone numbers', () => {
  it('registers E.164 numbers; a duplicate is 409; a malformed number is 422', async () => {
    const number = freshNumber();
    const res = await call('POST', '/core/phone-numbers', { number, label: 'Main line' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ number, label: 'Main line', organization_id: orgId, inbound_agent_id: null, outbound_agent_id: null });
    expect(await call('POST', '/core/phone-numbers', { number })).toMatchObject({
      status: 409,
      body: { detail: `Phone number already registered: ${number}` },
    });
    for (const bad of ['4155550100', '+0415555', '+1 415 555 0100', '+1234567890123456']) {
      const refused = await call('POST', '/core/phone-numbers', { number: bad });
      expect(refused.status, bad).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(['body', 'number']);
    }
  });

  it('keeps one inventory per organization', async () => {
    const other = await newTenant(ctx);
    const number = freshNumber();
    await registerNumber(number);
    expect((await call('POST', '/core/phone-numbers', { number }, other.session)).status).toBe(200);
    const theirs = await call('GET', '/core/phone-numbers', undefined, other.session);
    expect(theirs.body.data.map((n: any) => n.number)).toEqual([number]);
  });

  it('lists in number order with filters and cursor', async () => {
    const owner = await newTenant(ctx);
    const agent = await publishedAgent(owner.session);
    for (const n of ['+14155550003', '+14155550001', '+14155550002']) await registerNumber(n, owner.session);
    await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { phone_numbers: ['+14155550002'] }, owner.session);
    const page1 = await call('GET', '/core/phone-numbers?limit=2', undefined, owner.session);
    expect(page1.body.data.map((n: any) => n.number)).toEqual(['+14155550001', '+14155550002']);
    expect(page1.body.pagination).toMatchObject({ limit: 2, total: 3, offset: 0 });
    const page2 = await call('GET', `/core/phone-numbers?limit=2&cursor=${page1.body.pagination.next_cursor}`, undefined, owner.session);
    expect(page2.body.data.map((n: any) => n.number)).toEqual(['+14155550003']);
    const free = await call('GET', '/core/phone-numbers?available=true', undefined, owner.session);
    expect(free.body.data.map((n: any) => n.number)).toEqual(['+14155550001', '+14155550003']);
    const mine = await call('GET', `/core/phone-numbers?agent_id=${agent.id}`, undefined, owner.session);
    expect(mine.body.data.map((n: any) => n.number)).toEqual(['+14155550002']);
    expect((await call('GET', '/core/phone-numbers?kind=mobile', undefined, owner.session)).status).toBe(400);
  });

  it('releases a number with 204; it stops serving its agent; a second release is 404', async () => {
    const agent = await publishedAgent();
    const number = await registerNumber(freshNumber());
    await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { phone_numbers: [number.number] });
    expect((await call('DELETE', `/core/phone-numbers/${number.id}`)).status).toBe(204);
    expect((await call('GET', `/core/agents/${agent.id}`)).body.phone_numbers).toEqual([]);
    expect((await call('DELETE', `/core/phone-numbers/${number.id}`)).status).toBe(404);
  });
});

describe('publishing', () => {
  it('publishes a draft, assigns numbers inbound by default and returns them', async () => {
    const agent = await createAgent();
    await createVersion(agent.id, { config: { instructions: 'Go.' } });
    const number = await registerNumber(freshNumber());
    const res = await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { phone_numbers: [number.number] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: agent.id, version: 1, published: true, direction: 'inbound' });
    expect(res.body.phone_numbers).toEqual([
      { id: number.id, number: number.number, direction: 'inbound', action: 'assigned', agent_id: agent.id, previous_agent_id: null },
    ]);
    const detail = (await call('GET', `/core/agents/${agent.id}`)).body;
    expect(detail).toMatchObject({ published_version: 1, phone_numbers: [{ number: number.number, directions: ['inbound'] }] });
    expect(detail.versions[0]).toMatchObject({ version: 1, published: true });
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body.published_at).toBe(res.body.published_at);
  });

  it('assigns both directions, and reports a number moved from another agent', async () => {
    const first = await publishedAgent();
    const second = await publishedAgent();
    const number = await registerNumber(freshNumber());
    const both = await call('POST', `/core/agents/${first.id}/versions/1/publish`, { phone_numbers: [number.number], direction: 'both' });
    expect(both.body.phone_numbers.map((n: any) => [n.direction, n.action])).toEqual([
      ['inbound', 'assigned'],
      ['outbound', 'assigned'],
    ]);
    const moved = await call('POST', `/core/agents/${second.id}/versions/1/publish`, {
      phone_numbers: [number.number],
      direction: 'outbound',
    });
    expect(moved.body.phone_numbers).toEqual([
      expect.objectContaining({ direction: 'outbound', action: 'assigned', agent_id: second.id, previous_agent_id: first.id }),
    ]);
    expect((await call('GET', `/core/agents/${first.id}`)).body.phone_numbers[0].directions).toEqual(['inbound']);
    expect((await call('GET', `/core/agents/${second.id}`)).body.phone_numbers[0].directions).toEqual(['outbound']);
  });

  it('unassigns the agent’s own numbers and leaves others’ untouched', async () => {
    const mine = await publishedAgent();
    const theirs = await publishedAgent();
    const a = await registerNumber(freshNumber());
    const b = await registerNumber(freshNumber());
    await call('POST', `/core/agents/${mine.id}/versions/1/publish`, { phone_numbers: [a.number] });
    await call('POST', `/core/agents/${theirs.id}/versions/1/publish`, { phone_numbers: [b.number] });
    const res = await call('POST', `/core/agents/${mine.id}/versions/1/publish`, { unassign_phone_numbers: [a.number, b.number] });
    expect(res.body.phone_numbers).toEqual([
      expect.objectContaining({ number: a.number, action: 'unassigned', agent_id: null, previous_agent_id: mine.id }),
      expect.objectContaining({ number: b.number, action: 'unchanged', agent_id: theirs.id, previous_agent_id: theirs.id }),
    ]);
    expect((await call('GET', `/core/agents/${theirs.id}`)).body.phone_numbers).toHaveLength(1);
  });

  it('refuses a number outside the inventory with 404 and publishes nothing', async () => {
    const agent = await createAgent();
    await createVersion(agent.id);
    const known = await registerNumber(freshNumber());
    const res = await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { phone_numbers: [known.number, '+14155559999'] });
    expect(res).toMatchObject({ status: 404, body: { detail: "Phone number not in the organization's inventory: +14155559999" } });
    expect((await call('GET', `/core/agents/${agent.id}/versions/1`)).body.published).toBe(false);
    expect((await call('GET', `/core/agents/${agent.id}`)).body).toMatchObject({ published_version: null, phone_numbers: [] });
  });

  it('republishing an older published version makes it the served one again', async () => {
    const agent = await publishedAgent();
    await createVersion(agent.id);
    await call('POST', `/core/agents/${agent.id}/versions/2/publish`, {});
    expect((await call('GET', `/core/agents/${agent.id}`)).body.published_version).toBe(2);
    const v1 = (await call('GET', `/core/agents/${agent.id}/versions/1`)).body;
    const again = await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
    expect(again.status).toBe(200);
    expect(again.body.published_at).toBe(v1.published_at);
    expect((await call('GET', `/core/agents/${agent.id}`)).body.published_version).toBe(1);
  });

  it.each([
    ['an unknown direction', { direction: 'sideways' }],
    ['a malformed number', { phone_numbers: ['555'] }],
    ['a number both assigned and unassigned', { phone_numbers: ['+14155550999'], unassign_phone_numbers: ['+14155550999'] }],
  ])('refuses %s with 422', async (_name, body) => {
    const agent = await createAgent();
    await createVersion(agent.id);
    expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, body)).status).toBe(422);
  });

  it('publishes `latest` (the newest draft); without a draft it is 404', async () => {
    const agent = await createAgent();
    expect((await call('POST', `/core/agents/${agent.id}/versions/latest/publish`, {})).status).toBe(404);
    await createVersion(agent.id);
    expect((await call('POST', `/core/agents/${agent.id}/versions/latest/publish`, {})).body.version).toBe(1);
  });
});

describe('notification: agent_version.published', () => {
  const outbox = (entityId: string) =>
    ctx.deps.sql<{ event_type: string; entity_type: string; payload: any; actor_user_id: string | null }[]>`
      SELECT event_type, entity_type, payload, actor_user_id FROM notification_outbox
      WHERE org_id = ${orgId} AND entity_id = ${entityId} ORDER BY created_at, id`;

  it('is written with the publish, and not when the publish is refused', async () => {
    const agent = await createAgent({ name: 'Night desk' });
    const v1 = await createVersion(agent.id, { config: { instructions: 'Go.' } });
    const stale = await createVersion(agent.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
    expect((await call('POST', `/core/agents/${agent.id}/versions/${stale.version}/publish`, {})).status).toBe(409);
    expect(await outbox(stale.id)).toEqual([]);

    expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, { direction: 'both' })).status).toBe(200);
    const [user] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${tenant.user}`;
    expect(await outbox(v1.id)).toEqual([
      {
        event_type: 'agent_version.published',
        entity_type: 'agent_version',
        actor_user_id: user!.id,
        payload: { agent_id: agent.id, name: 'Night desk', version: 1, direction: 'both' },
      },
    ]);
  });
});

describe('SIP', () => {
  it('is 409 before any version is published', async () => {
    const agent = await createAgent();
    expect(await call('POST', `/core/agents/${agent.id}/deploy-as-sip`)).toMatchObject({
      status: 409,
      body: { detail: 'Publish a version before deploying the agent over SIP' },
    });
  });

  it('deploys at sip:<agent_id>@<SIP_HOST>, shows it in the read, and removes it with 204', async () => {
    const agent = await publishedAgent();
    const res = await call('POST', `/core/agents/${agent.id}/deploy-as-sip`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: agent.id, sip_uri: `sip:${agent.id}@sip.localhost`, version: 1 });
    expect((await call('POST', `/core/agents/${agent.id}/deploy-as-sip`)).body).toEqual(res.body);
    expect((await call('GET', `/core/agents/${agent.id}`)).body.sip).toEqual({
      deployed: true,
      sip_uri: res.body.sip_uri,
      deployed_at: res.body.deployed_at,
      state: 'recorded',
      provider: 'simulated',
      provider_id: null,
    });
    expect((await call('DELETE', `/core/agents/${agent.id}/deploy-as-sip`)).status).toBe(204);
    expect((await call('GET', `/core/agents/${agent.id}`)).body.sip.deployed).toBe(false);
    expect((await call('DELETE', `/core/agents/${agent.id}/deploy-as-sip`)).status).toBe(204);
  });

  it('says it only records the address, in the answer and in the document', async () => {
    const agent = await publishedAgent();
    const res = await call('POST', `/core/agents/${agent.id}/deploy-as-sip`);
    expect(res.status).toBe(200);
    expect(res.body.provisioning).toBe('recorded');
    expect(res.body.note).toMatch(/^Recorded only: .*no SIP server or provider.*no call reaches the agent/);
    const operation = (await ctx.request('GET', '/openapi.json')).body.paths['/core/agents/{id}/deploy-as-sip'].post;
    expect(operation.description).toMatch(/With the simulated dialer it writes the address sip:<agent_id>@<SIP_HOST> and nothing else/);
    const answer = operation.responses['200'].content['application/json'].schema;
    const schema = answer.$ref ? (await ctx.request('GET', '/openapi.json')).body.components.schemas[answer.$ref.split('/').pop()] : answer;
    expect(schema.properties.provisioning).toMatchObject({ type: 'string', enum: ['recorded', 'provisioned'] });
    expect(res.body).toMatchObject({ provider: 'simulated', state: 'recorded', provider_id: null });
    expect(schema.required).toEqual(expect.arrayContaining(['provisioning', 'note']));
  });
});

describe('compare with the built-in writer (no LLM configured)', () => {
  it('streams text/plain that says it is not an LLM and lists the differences', async () => {
    const agent = await createAgent({ name: 'Desk' });
    await createVersion(agent.id, { config: { first_message: 'Hi' } });
    await createVersion(agent.id, { config: { first_message: 'Hello', llm: { temperature: 0.1 } } });
    const res = await call('POST', `/core/agents/${agent.id}/versions/compare`, { from_version: 1, to_version: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.text.split('\n')).toEqual([
      BUILTIN_NOTICE,
      'Agent "Desk": version 1 (draft) → version 2 (draft).',
      '2 differences:',
      '- changed first_message: "Hi" → "Hello"',
      '- changed llm.temperature: 0.7 → 0.1',
      '',
    ]);
  });

  it('is 404 for an unknown version and 422 for a malformed body', async () => {
    const agent = await createAgent();
    await createVersion(agent.id);
    expect(await call('POST', `/core/agents/${agent.id}/versions/compare`, { from_version: 1, to_version: 5 })).toMatchObject({
      status: 404,
      body: { detail: 'Version 5 not found' },
    });
    expect((await call('POST', `/core/agents/${agent.id}/versions/compare`, { from_version: 1 })).status).toBe(422);
  });
});

describe('GET /core/agent-config-schema', () => {
  it('returns the JSON Schema of AgentConfig', async () => {
    const res = await call('GET', '/core/agent-config-schema');
    expect(res.status).toBe(200);
    expect(res.body.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(res.body.$defs.AgentConfig.properties)).toContain('tools');
  });
});

describe('create-from-website and create-demo: checks made before starting', () => {
  it('is 404 for an existing_agent_id outside the organization, and 422 for a missing website', async () => {
    const other = await newTenant(ctx);
    const theirs = await createAgent({}, other.session);
    const res = await call('POST', '/core/agents/create-from-website', {
      company_name: 'Acme',
      company_website: 'https://acme.example',
      existing_agent_id: theirs.id,
    });
    expect(res).toMatchObject({ status: 404, body: { detail: 'Agent not found' } });
    const missing = await call('POST', '/core/agents/create-demo', {});
    expect(missing.body.detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'company_website'] });
    expect((await call('POST', '/core/agents/create-demo', { company_website: 'ftp://acme.example' })).status).toBe(422);
  });
});

describe('tenancy: another organization’s ids are 404 on every route', () => {
  let agentId: string;
  let numberId: string;
  let number: string;
  let intruder: Tenant;
  beforeAll(async () => {
    const agent = await publishedAgent();
    await createVersion(agent.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
    agentId = agent.id;
    const n = await registerNumber(freshNumber());
    numberId = n.id;
    number = n.number;
    intruder = await newTenant(ctx);
  });

  const routes = () =>
    [
      ['GET', `/core/agents/${agentId}`],
      ['PUT', `/core/agents/${agentId}`, { name: 'mine now' }],
      ['DELETE', `/core/agents/${agentId}`],
      ['GET', `/core/agents/${agentId}/versions`],
      ['POST', `/core/agents/${agentId}/versions`, { config: {} }],
      ['GET', `/core/agents/${agentId}/versions/1`],
      ['GET', `/core/agents/${agentId}/versions/latest`],
      ['PUT', `/core/agents/${agentId}/versions/2`, { config: {} }],
      ['POST', `/core/agents/${agentId}/versions/compare`, { from_version: 1, to_version: 2 }],
      ['POST', `/core/agents/${agentId}/versions/2/generate-instructions`],
      ['POST', `/core/agents/${agentId}/versions/1/publish`, {}],
      ['POST', `/core/agents/${agentId}/deploy-as-sip`],
      ['DELETE', `/core/agents/${agentId}/deploy-as-sip`],
      ['DELETE', `/core/phone-numbers/${numberId}`],
      ['POST', '/core/agents/create-from-website', { company_name: 'x', company_website: 'https://x.example', existing_agent_id: agentId }],
    ] as [string, string, unknown?][];

  it.each([...Array(15).keys()])('route #%i', async (i) => {
    const [method, path, body] = routes()[i]!;
    const res = await call(method, path, body, intruder.session);
    expect(res.status, `${method} ${path}`).toBe(404);
  });

  it('publishing with another organization’s phone number is 404', async () => {
    const own = await publishedAgent(intruder.session);
    const res = await call('POST', `/core/agents/${own.id}/versions/1/publish`, { phone_numbers: [number] }, intruder.session);
    expect(res.status).toBe(404);
  });

  it('left everything in place', async () => {
    const agent = (await call('GET', `/core/agents/${agentId}`)).body;
    expect(agent).toMatchObject({ name: 'Front desk', versions_total: 2, sip: { deployed: false } });
    expect((await call('GET', `/core/agents/${agentId}/versions/2`)).body.instructions.generating).toBe(false);
    expect((await call('GET', '/core/phone-numbers?limit=200')).body.data.some((n: any) => n.id === numberId)).toBe(true);
  });
});

describe('scopes', () => {
  let readKey: string;
  let crmKey: string;
  let agentId: string;
  let numberId: string;
  beforeAll(async () => {
    readKey = await createOrgKey(ctx, tenant.session, { scopes: ['agents:read'] });
    crmKey = await createOrgKey(ctx, tenant.session, { scopes: ['api:read', 'api:manage'] });
    const agent = await publishedAgent();
    await createVersion(agent.id, { config: {}, instruction_builder_inputs: { company_name: 'Acme' } });
    agentId = agent.id;
    numberId = (await registerNumber(freshNumber())).id;
  });

  const writes = () =>
    [
      ['POST', '/core/agents', { name: 'x' }],
      ['PUT', `/core/agents/${agentId}`, { name: 'x' }],
      ['DELETE', `/core/agents/${agentId}`],
      ['POST', `/core/agents/${agentId}/versions`, { config: {} }],
      ['PUT', `/core/agents/${agentId}/versions/2`, { config: {} }],
      ['POST', `/core/agents/${agentId}/versions/2/generate-instructions`],
      ['POST', `/core/agents/${agentId}/versions/2/publish`, {}],
      ['POST', `/core/agents/${agentId}/deploy-as-sip`],
      ['DELETE', `/core/agents/${agentId}/deploy-as-sip`],
      ['POST', '/core/agents/create-from-website', { company_name: 'x', company_website: 'https://x.example' }],
      ['POST', '/core/agents/create-demo', { company_website: 'https://x.example' }],
      ['POST', '/core/phone-numbers', { number: '+14155559999' }],
      ['DELETE', `/core/phone-numbers/${numberId}`],
    ] as [string, string, unknown?][];

  const reads = () =>
    [
      ['GET', '/core/agents'],
      ['GET', `/core/agents/${agentId}`],
      ['GET', `/core/agents/${agentId}/versions`],
      ['GET', `/core/agents/${agentId}/versions/1`],
      ['GET', `/core/agents/${agentId}/versions/latest`],
      ['POST', `/core/agents/${agentId}/versions/compare`, { from_version: 1, to_version: 2 }],
      ['GET', '/core/agent-config-schema'],
      ['GET', '/core/phone-numbers'],
    ] as [string, string, unknown?][];

  it.each([...Array(13).keys()])('a read-only key gets 403 on write #%i', async (i) => {
    const [method, path, body] = writes()[i]!;
    expect(await call(method, path, body, readKey), `${method} ${path}`).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
  });

  it.each([...Array(8).keys()])('a read-only key reads #%i; a CRM-only key gets 403', async (i) => {
    const [method, path, body] = reads()[i]!;
    expect((await call(method, path, body, readKey)).status, `${method} ${path}`).toBe(200);
    expect(await call(method, path, body, crmKey), `${method} ${path}`).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
  });

  it('a CRM-only key gets 403 on writes too', async () => {
    for (const [method, path, body] of writes()) expect((await call(method, path, body, crmKey)).status, `${method} ${path}`).toBe(403);
  });

  it('the status of a scaffolding run needs agents read', async () => {
    expect((await call('GET', '/core/agent-workflows/agent-demo:x', undefined, crmKey)).status).toBe(403);
  });
});

describe('Temporal unreachable', () => {
  let down: TestContext;
  let session: string;
  beforeAll(async () => {
    down = await createTestContext({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    session = (await newTenant(down)).session;
  });
  afterAll(() => down?.close());

  it('generate-instructions is a clean 503 and leaves the version as it was', async () => {
    const agent = (await down.request('POST', '/core/agents', { token: session, body: { name: 'a' } })).body;
    await down.request('POST', `/core/agents/${agent.id}/versions`, {
      token: session,
      body: { config: {}, instruction_builder_inputs: { company_name: 'Acme' } },
    });
    const res = await down.request('POST', `/core/agents/${agent.id}/versions/1/generate-instructions`, { token: session });
    expect(res).toMatchObject({ status: 503, body: { detail: 'Workflow engine unavailable, try again shortly' } });
    const version = (await down.request('GET', `/core/agents/${agent.id}/versions/1`, { token: session })).body;
    expect(version.instructions.generating).toBe(false);
  });

  it('create-from-website and create-demo are a clean 503 with no agent written', async () => {
    const site = { company_name: 'Acme', company_website: 'https://acme.example' };
    expect((await down.request('POST', '/core/agents/create-from-website', { token: session, body: site })).status).toBe(503);
    expect(
      (await down.request('POST', '/core/agents/create-demo', { token: session, body: { company_website: 'https://acme.example' } }))
        .status,
    ).toBe(503);
    expect((await down.request('GET', '/core/agents', { token: session })).body.pagination.total).toBe(1);
  });
});
