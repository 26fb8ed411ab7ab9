import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeLlmServer, type FakeLlm } from '../support/fake-llm-server';
import { COMPANY_PAGE, startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { keepHistory } from '../support/histories';
import { newTenant, type Tenant } from '../support/identity';

// The Agents area's workflows on the real dev server with a real worker, an OpenAI-compatible fake
// LLM and a company website, both served on 127.0.0.1 by this file.

let ctx: TestContext;
let llm: FakeLlm;
let site: FakeWebsite;
let tenant: Tenant;
let orgId: string;
beforeAll(async () => {
  [llm, site] = await Promise.all([
    startFakeLlmServer(),
    startFakeWebsite({
      '/': { body: COMPANY_PAGE },
      '/slow': { body: COMPANY_PAGE, delayMs: 1500 },
      '/moved': { redirect: '/' },
    }),
  ]);
  ctx = await createTestContext({
    worker: true,
    env: { WEB_FETCH_ALLOW_PRIVATE: 'true', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'test-key', LLM_MODEL: 'fake-model' },
  });
  tenant = await newTenant(ctx);
  orgId = (await ctx.request('GET', '/me', { token: tenant.session })).body.organization.id;
});
afterAll(async () => {
  await ctx?.close();
  await Promise.all([llm?.close(), site?.close()]);
});

const call = (method: string, path: string, body?: unknown, token = tenant.session) => ctx.request(method, path, { token, body });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function draftWithInputs(inputs: Record<string, unknown> = { company_name: 'Acme Plumbing', goals: ['Book repairs'] }) {
  const agent = (await call('POST', '/core/agents', { name: 'Desk' })).body;
  await call('POST', `/core/agents/${agent.id}/versions`, { config: {}, instruction_builder_inputs: inputs });
  return agent.id as string;
}

const versionOf = (agentId: string, version: number | string = 1) =>
  call('GET', `/core/agents/${agentId}/versions/${version}`).then((r) => r.body);
const finished = (agentId: string) =>
  until(
    () => versionOf(agentId),
    (v) => !v.instructions.generating,
  );
const statusOf = (workflowId: string, token = tenant.session) => call('GET', `/core/agent-workflows/${workflowId}`, undefined, token);
const settled = (workflowId: string) =>
  until(
    () => statusOf(workflowId).then((r) => r.body),
    (s) => s.status !== 'running',
  );

describe('generate-instructions', () => {
  it('writes the instructions through the LLM and clears dirty and manually edited', async () => {
    const agentId = await draftWithInputs();
    const started = await call('POST', `/core/agents/${agentId}/versions/1/generate-instructions`);
    expect(started).toMatchObject({ status: 202, body: { workflow_id: `agent-instructions:${agentId}:1` } });
    const version = await finished(agentId);
    expect(version.config.instructions).toBe(llm.reply);
    expect(version.instructions).toMatchObject({ generating: false, dirty: false, manually_edited: false, stale: false, error: null });
    expect(version.instructions.generated_at).not.toBeNull();
    const request = llm.requests.find((r) => !r.stream && r.messages.at(-1)!.content.includes('"goals"'));
    expect(request!.messages.at(-1)!.content).toContain('Acme Plumbing');
    expect((await call('POST', `/core/agents/${agentId}/versions/1/publish`, {})).status).toBe(200);
    await ctx.deps.temporal.workflow.getHandle(started.body.workflow_id).result();
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, started.body.workflow_id, 'agent-instructions');
  });

  it('replaces hand-written instructions, and can run again on the same version', async () => {
    const agentId = await draftWithInputs();
    await call('PUT', `/core/agents/${agentId}/versions/1`, { config: { instructions: 'By hand' } });
    expect((await versionOf(agentId)).instructions.manually_edited).toBe(true);
    for (let run = 0; run < 2; run++) {
      expect((await call('POST', `/core/agents/${agentId}/versions/1/generate-instructions`)).status).toBe(202);
      const version = await finished(agentId);
      expect(version.config.instructions).toBe(llm.reply);
      expect(version.instructions.manually_edited).toBe(false);
    }
  });

  it('keeps the version stale and records the error when the LLM keeps failing', async () => {
    const agentId = await draftWithInputs({ company_name: 'Failing Co' });
    llm.failWith = 500;
    try {
      await call('POST', `/core/agents/${agentId}/versions/1/generate-instructions`);
      const version = await finished(agentId);
      expect(version.instructions).toMatchObject({ generating: false, dirty: true, stale: true });
      expect(version.instructions.error).toMatch(/500/);
      expect(version.config.instructions).toBe('');
    } finally {
      llm.failWith = null;
    }
    expect((await call('POST', `/core/agents/${agentId}/versions/1/publish`, {})).status).toBe(409);
  });
});

describe('compare through the OpenAI-compatible provider', () => {
  async function twoVersions() {
    const agent = (await call('POST', '/core/agents', { name: 'Desk' })).body;
    await call('POST', `/core/agents/${agent.id}/versions`, { config: { first_message: 'Hi' } });
    await call('POST', `/core/agents/${agent.id}/versions`, { config: { first_message: 'Hello' } });
    return agent.id as string;
  }

  it('streams the text as the provider writes it', async () => {
    const agentId = await twoVersions();
    const release = llm.holdNextStream();
    const res = await fetch(`${ctx.baseUrl}/core/agents/${agentId}/versions/compare`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.session}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ from_version: 1, to_version: 2 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let early = '';
    while (!early.includes('compared the ')) early += decoder.decode((await reader.read()).value);
    // The provider is still holding its last piece: what arrived so far was sent before it.
    expect(early).toBe('The fake LLM compared the ');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    expect(early + rest).toBe('The fake LLM compared the two versions.');
    const request = llm.requests.at(-1)!;
    expect(request).toMatchObject({ stream: true, model: 'fake-model' });
    expect(request.messages.at(-1)!.content).toContain('changed first_message: "Hi" → "Hello"');
  });

  it('is a 502 when the provider fails before writing', async () => {
    const agentId = await twoVersions();
    llm.failWith = 500;
    try {
      const res = await call('POST', `/core/agents/${agentId}/versions/compare`, { from_version: 1, to_version: 2 });
      expect(res).toMatchObject({ status: 502, body: { detail: 'The LLM provider failed' } });
    } finally {
      llm.failWith = null;
    }
  });
});

describe('create-from-website', () => {
  it('builds, instructs and publishes an agent from the site, and reports each step', async () => {
    const collection = '0190c0de-0000-7000-8000-00000000c0de';
    const res = await call('POST', '/core/agents/create-from-website', {
      company_name: 'Acme Plumbing',
      company_website: site.url('/moved'),
      voice_id: 'voice-42',
      avatar_url: 'https://cdn.example/acme.png',
      existing_collection_id: collection,
      demo_type: 'inbound',
    });
    expect(res.status).toBe(202);
    const { workflow_id: workflowId, agent_id: agentId } = res.body;
    expect(workflowId).toBe(`agent-website:${agentId}`);
    const info = await ctx.deps.temporal.workflow.getHandle(workflowId).describe();
    expect(info.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(orgId);

    const status = await settled(workflowId);
    expect(status).toMatchObject({
      workflow_id: workflowId,
      kind: 'create-from-website',
      status: 'completed',
      agent_id: agentId,
      result: { agent_id: agentId, version: 1, published: true, phone_number: null },
      error: null,
    });
    expect(status.steps.map((s: any) => [s.name, s.status])).toEqual([
      ['fetch_website', 'completed'],
      ['prepare_agent', 'completed'],
      ['generate_instructions', 'completed'],
      ['publish', 'completed'],
      ['assign_phone_number', 'skipped'],
    ]);
    expect(status.steps[0].detail).toBe('Acme Plumbing | 24/7 emergency plumbers');
    expect(status.closed_at).not.toBeNull();

    const agent = (await call('GET', `/core/agents/${agentId}`)).body;
    expect(agent).toMatchObject({
      name: 'Acme Plumbing',
      is_demo: false,
      published_version: 1,
      description: 'Acme Plumbing fixes leaks, boilers and drains across Springfield, day and night.',
      metadata: { source: 'create-from-website', avatar_url: 'https://cdn.example/acme.png', demo_type: 'inbound' },
      created_by: `user:${tenant.user}`,
    });
    const version = await versionOf(agentId);
    expect(version).toMatchObject({
      published: true,
      config: { instructions: llm.reply, voice: { voice_id: 'voice-42' }, knowledge_base: { dataset_ids: [collection] } },
      instruction_builder_inputs: {
        company_name: 'Acme Plumbing',
        company_overview: llm.reply,
        key_facts: ['Emergency plumbing in Springfield', 'Boiler repair', 'Call us: +1 415 555 0100'],
      },
      instructions: { stale: false, generating: false },
    });
    // The scaffolded publish notifies like any other, once.
    const events = await ctx.deps.sql<{ event_type: string; payload: any }[]>`
      SELECT event_type, payload FROM notification_outbox WHERE entity_id = ${version.id}`;
    expect(events).toEqual([
      { event_type: 'agent_version.published', payload: { agent_id: agentId, name: 'Acme Plumbing', version: 1, direction: 'inbound' } },
    ]);
    expect(site.hits).toContain('/moved');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, workflowId, 'agent-scaffold-website');
  });

  it('shows a run in progress', async () => {
    const res = await call('POST', '/core/agents/create-from-website', { company_name: 'Slow Co', company_website: site.url('/slow') });
    const status = (await statusOf(res.body.workflow_id)).body;
    expect(status).toMatchObject({ status: 'running', result: null, closed_at: null });
    expect(status.steps[0]).toMatchObject({ name: 'fetch_website', status: 'running' });
    expect((await settled(res.body.workflow_id)).status).toBe('completed');
  });

  it('reuses an existing agent and skips deployment when asked', async () => {
    const agent = (await call('POST', '/core/agents', { name: 'Existing' })).body;
    await call('POST', `/core/agents/${agent.id}/versions`, { config: { first_message: 'Keep me' } });
    await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
    const res = await call('POST', '/core/agents/create-from-website', {
      company_name: 'Acme Plumbing',
      company_website: site.url('/'),
      existing_agent_id: agent.id,
      skip_deployment: true,
    });
    expect(res.body).toEqual({ workflow_id: `agent-website:${agent.id}`, agent_id: agent.id });
    const status = await settled(res.body.workflow_id);
    expect(status.result).toEqual({ agent_id: agent.id, version: 2, published: false, phone_number: null });
    expect(status.steps.find((s: any) => s.name === 'publish')).toEqual({ name: 'publish', status: 'skipped', detail: 'skip_deployment' });
    const after = (await call('GET', `/core/agents/${agent.id}`)).body;
    expect(after).toMatchObject({ name: 'Existing', published_version: 1, versions_total: 2 });
    expect(await versionOf(agent.id, 2)).toMatchObject({ published: false, config: { first_message: 'Keep me', instructions: llm.reply } });
  });

  it('fails at fetch_website when the site cannot be read and nothing else was given, creating nothing', async () => {
    const res = await call('POST', '/core/agents/create-from-website', { company_name: 'Ghost', company_website: site.url('/missing') });
    const status = await settled(res.body.workflow_id);
    expect(status).toMatchObject({ status: 'failed', result: null });
    expect(status.error).toMatch(/^fetch_website failed: .*404/);
    expect(status.steps[0]).toMatchObject({ name: 'fetch_website', status: 'failed' });
    expect(status.steps.slice(1).every((s: any) => s.status === 'pending')).toBe(true);
    expect((await call('GET', `/core/agents/${res.body.agent_id}`)).status).toBe(404);
  });

  it('goes on with the given overview when the site cannot be read', async () => {
    const res = await call('POST', '/core/agents/create-from-website', {
      company_name: 'Offline Co',
      company_website: site.url('/missing'),
      company_overview: 'Offline Co sells umbrellas.',
    });
    const status = await settled(res.body.workflow_id);
    expect(status.status).toBe('completed');
    expect(status.steps[0].status).toBe('failed');
    expect((await versionOf(res.body.agent_id)).instruction_builder_inputs.company_overview).toBe('Offline Co sells umbrellas.');
  });
});

describe('create-demo', () => {
  it('publishes a demo agent and gives it a free number from the inventory', async () => {
    const owner = await newTenant(ctx);
    await call('POST', '/core/phone-numbers', { number: '+14155550777' }, owner.session);
    const res = await call(
      'POST',
      '/core/agents/create-demo',
      { company_website: site.url('/'), include_phone_number: true },
      owner.session,
    );
    expect(res.status).toBe(202);
    expect(res.body.workflow_id).toBe(`agent-demo:${res.body.agent_id}`);
    const status = await until(
      () => statusOf(res.body.workflow_id, owner.session).then((r) => r.body),
      (s) => s.status !== 'running',
    );
    expect(status).toMatchObject({ kind: 'create-demo', status: 'completed', result: { published: true, phone_number: '+14155550777' } });
    const agent = (await call('GET', `/core/agents/${res.body.agent_id}`, undefined, owner.session)).body;
    expect(agent).toMatchObject({
      name: 'Acme Plumbing | 24/7 emergency plumbers (demo)',
      is_demo: true,
      published_version: 1,
      phone_numbers: [{ number: '+14155550777', directions: ['inbound'] }],
    });
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, res.body.workflow_id, 'agent-scaffold-demo');
  });

  it('uses given instructions as they are, and says when no number is free', async () => {
    const owner = await newTenant(ctx);
    const res = await call(
      'POST',
      '/core/agents/create-demo',
      { company_website: site.url('/'), instructions: 'Sell umbrellas.', include_phone_number: true },
      owner.session,
    );
    const status = await until(
      () => statusOf(res.body.workflow_id, owner.session).then((r) => r.body),
      (s) => s.status !== 'running',
    );
    expect(status.result).toMatchObject({ published: true, phone_number: null });
    expect(status.steps.find((s: any) => s.name === 'generate_instructions')).toMatchObject({ status: 'skipped' });
    expect(status.steps.find((s: any) => s.name === 'assign_phone_number')).toEqual({
      name: 'assign_phone_number',
      status: 'skipped',
      detail: "no free number in the organization's inventory",
    });
    const version = (await call('GET', `/core/agents/${res.body.agent_id}/versions/1`, undefined, owner.session)).body;
    expect(version.config.instructions).toBe('Sell umbrellas.');
    expect(version.instructions).toMatchObject({ manually_edited: true, stale: false });
  });
});

describe('GET /core/agent-workflows/{workflow_id}', () => {
  it('is 404 for another organization’s run, an unknown id and a workflow of another kind', async () => {
    const res = await call('POST', '/core/agents/create-demo', { company_website: site.url('/') });
    const intruder = await newTenant(ctx);
    expect((await statusOf(res.body.workflow_id, intruder.session)).status).toBe(404);
    expect((await statusOf('agent-demo:0190c0de-0000-7000-8000-000000000000')).status).toBe(404);
    const agentId = await draftWithInputs();
    const generation = await call('POST', `/core/agents/${agentId}/versions/1/generate-instructions`);
    expect((await statusOf(generation.body.workflow_id)).status).toBe(404);
    await settled(res.body.workflow_id);
    await finished(agentId);
  });
});
