import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../platform/core/ids';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import { createTestContext, type TestContext } from '../support/context';
import { ACME_SOFTWARE, startCompanySite } from '../support/fake-company-site';
import { startFakeLlmServer, type FakeLlm } from '../support/fake-llm-server';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { keepHistory } from '../support/histories';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let readOnly: string;
const sites: FakeWebsite[] = [];

beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { WEB_FETCH_ALLOW_PRIVATE: 'true' } });
  a = await newTenant(ctx, ['api:read', 'api:manage']);
  b = await newTenant(ctx, ['api:read', 'api:manage']);
  readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
});
afterAll(async () => {
  await Promise.all(sites.map((s) => s.close()));
  await ctx?.close();
});

const FINAL = ['completed', 'failed', 'cancelled', 'incomplete'];

async function site(...args: Parameters<typeof startCompanySite>) {
  const s = await startCompanySite(...args);
  sites.push(s);
  return s;
}

async function newAccount(c: TestContext, t: Tenant, body: Record<string, unknown>): Promise<string> {
  const res = await c.request('POST', '/accounts', { token: t.session, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function finished(c: TestContext, token: string, path: string) {
  return vi.waitFor(
    async () => {
      const res = await c.request('GET', path, { token });
      expect(res.status).toBe(200);
      expect(FINAL).toContain(res.body.status);
      return res.body;
    },
    { timeout: 30_000, interval: 200 },
  );
}

async function research(c: TestContext, t: Tenant, body: Record<string, unknown>) {
  const res = await c.request('POST', '/intelligence/research-runs', { token: t.session, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as { id: string; workflow_id: string; status: string };
}

const outbox = (c: TestContext, entityId: string) =>
  c.deps.sql<{ event_type: string; payload: Record<string, unknown>; recipient_user_ids: string[] }[]>`
    SELECT event_type, payload, recipient_user_ids FROM notification_outbox WHERE entity_id = ${entityId}`;

const PROFILE = {
  name: 'Mid-market software in DACH',
  criteria: [
    { type: 'industry', values: ['software'], weight: 40 },
    { type: 'employees', values: ['50-200', '1000+'], weight: 30 },
    { type: 'country', values: ['Germany', 'Austria'], weight: 20 },
    { type: 'technology', values: ['HubSpot'], weight: 10 },
  ],
};

describe('ICP profiles', () => {
  it('creates, versions on criteria changes only, lists versions, and deletes', async () => {
    const created = await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Versioned' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'Versioned', version: 1, criteria: PROFILE.criteria });
    const id = created.body.id;

    const renamed = await ctx.request('PATCH', `/intelligence/icp-profiles/${id}`, { token: a.session, body: { name: 'Versioned 2' } });
    expect(renamed.body).toMatchObject({ name: 'Versioned 2', version: 1 });
    const changed = await ctx.request('PATCH', `/intelligence/icp-profiles/${id}`, {
      token: a.session,
      body: { criteria: [{ type: 'keyword', values: ['cloud'], weight: 5 }] },
    });
    expect(changed.body).toMatchObject({ version: 2, criteria: [{ type: 'keyword', values: ['cloud'], weight: 5 }] });

    const versions = await ctx.request('GET', `/intelligence/icp-profiles/${id}/versions`, { token: readOnly });
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions.body.versions[1].criteria).toEqual(PROFILE.criteria);

    expect(
      (await ctx.request('GET', '/intelligence/icp-profiles', { token: readOnly })).body.profiles.map((p: { id: string }) => p.id),
    ).toContain(id);
    expect((await ctx.request('DELETE', `/intelligence/icp-profiles/${id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('GET', `/intelligence/icp-profiles/${id}`, { token: a.session })).status).toBe(404);
  });

  it('makes the first profile the default, and moves the default on request', async () => {
    const t = await newTenant(ctx, ['api:read', 'api:manage']);
    const first = await ctx.request('POST', '/intelligence/icp-profiles', { token: t.session, body: { ...PROFILE, name: 'First' } });
    const second = await ctx.request('POST', '/intelligence/icp-profiles', { token: t.session, body: { ...PROFILE, name: 'Second' } });
    expect([first.body.is_default, second.body.is_default]).toEqual([true, false]);
    await ctx.request('PATCH', `/intelligence/icp-profiles/${second.body.id}`, { token: t.session, body: { is_default: true } });
    expect((await ctx.request('GET', `/intelligence/icp-profiles/${first.body.id}`, { token: t.session })).body.is_default).toBe(false);
  });

  it('refuses bad criteria (422), a duplicate name (409) and an empty patch (400)', async () => {
    const bad = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: { name: 'Bad', criteria: [{ type: 'employees', values: ['fifty'], weight: 1 }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'criteria', 0]);
    const unknownType = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: { name: 'Bad', criteria: [{ type: 'vibes', values: ['x'], weight: 1 }] },
    });
    expect(unknownType.status).toBe(422);
    const heavy = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: { name: 'Bad', criteria: [{ type: 'keyword', values: ['x'], weight: 101 }] },
    });
    expect(heavy.status).toBe(422);
    for (const criteria of [
      [{ type: 'employees', values: ['200-50'], weight: 1 }],
      [{ type: 'country', values: ['Atlantis'], weight: 1 }],
      [{ type: 'industry', values: ['vibes'], weight: 1 }],
      [
        { type: 'keyword', values: ['x'], weight: 0 },
        { type: 'country', values: ['France'], weight: 3, exclude: true },
      ],
    ]) {
      const refused = await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { name: 'Refused', criteria } });
      expect(refused.status, JSON.stringify(criteria)).toBe(422);
      expect(refused.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'criteria']);
    }
    const normalised = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: {
        name: 'Codes',
        criteria: [
          { type: 'country', values: ['DE', 'United States of America'], weight: 1 },
          { type: 'industry', values: ['SaaS'], weight: 1 },
        ],
      },
    });
    expect(normalised.status).toBe(200);

    const ok = await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Unique' } });
    expect(ok.status).toBe(200);
    expect(
      (await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Unique' } })).status,
    ).toBe(409);
    const empty = await ctx.request('PATCH', `/intelligence/icp-profiles/${ok.body.id}`, { token: a.session, body: {} });
    expect(empty.status).toBe(400);
  });

  it("answers 404 for another organization's profile and 403 on writes with a read-only key", async () => {
    const mine = await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Private' } });
    for (const [method, path, body] of [
      ['GET', `/intelligence/icp-profiles/${mine.body.id}`, undefined],
      ['PATCH', `/intelligence/icp-profiles/${mine.body.id}`, { name: 'Stolen' }],
      ['DELETE', `/intelligence/icp-profiles/${mine.body.id}`, undefined],
      ['GET', `/intelligence/icp-profiles/${mine.body.id}/versions`, undefined],
    ] as const) {
      expect((await ctx.request(method, path, { token: b.session, body })).status, `${method} ${path}`).toBe(404);
    }
    expect((await ctx.request('POST', '/intelligence/icp-profiles', { token: readOnly, body: { ...PROFILE, name: 'RO' } })).status).toBe(
      403,
    );
    expect(
      (await ctx.request('PATCH', `/intelligence/icp-profiles/${mine.body.id}`, { token: readOnly, body: { name: 'RO' } })).status,
    ).toBe(403);
  });
});

describe('research runs on the real dev server', () => {
  it('reads the key pages, records facts with sources, fills empty account fields and keeps edited ones', async () => {
    const s = await site();
    // industry was set by a person: research finds "software" but must keep "retail".
    const accountId = await newAccount(ctx, a, { name: 'Acme Cloud', website: s.origin, industry: 'retail' });
    const started = await research(ctx, a, { account_id: accountId });
    expect(started).toEqual({ id: started.id, workflow_id: `research:${started.id}`, status: 'queued' });

    const run = await finished(ctx, readOnly, `/intelligence/research-runs/${started.id}`);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, started.workflow_id, 'research-run');
    expect(run).toMatchObject({ status: 'completed', account_id: accountId, credits_used: 1, error: null });
    expect(run.progress).toEqual({ pages_total: 5, pages_done: 5, pages_failed: 0 });
    expect(run.pages.find((p: { url: string }) => p.url.endsWith('/company')).status).toBe('missing');
    const facts = run.results.facts as { field: string; value: string; source: string; confidence: number }[];
    expect(facts.find((f) => f.field === 'employees')).toMatchObject({ value: '120', source: s.url('/about') });
    expect(facts.find((f) => f.field === 'technology' && f.value === 'HubSpot')).toMatchObject({ source: s.url('/') });
    expect(facts.find((f) => f.field === 'email')).toMatchObject({ value: ACME_SOFTWARE.email, source: s.url('/contact') });
    expect(facts.every((f) => f.confidence > 0 && f.confidence <= 1)).toBe(true);
    expect(run.results.summary_source).toBe('builtin');
    expect(run.applied_fields.sort()).toEqual(['description', 'employee_count']);
    expect(run.kept_fields).toEqual(['industry']);

    const account = (await ctx.request('GET', `/accounts/${accountId}`, { token: a.session })).body;
    expect(account).toMatchObject({ industry: 'retail', employee_count: 120 });
    expect(account.description).toContain('Acme Cloud');

    const description = await ctx.deps.temporal.workflow.getHandle(started.workflow_id).describe();
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(await orgUuid(ctx, a));
    expect(await outbox(ctx, started.id)).toEqual([expect.objectContaining({ event_type: 'research_run.completed' })]);

    // A second run refreshes what research wrote, but still not what the person edited.
    await ctx.request('PATCH', `/accounts/${accountId}`, { token: a.session, body: { employee_count: 99 } });
    const again = await finished(ctx, a.session, `/intelligence/research-runs/${(await research(ctx, a, { account_id: accountId })).id}`);
    expect(again.applied_fields).toEqual(['description']);
    expect(again.kept_fields.sort()).toEqual(['employee_count', 'industry']);
    expect((await ctx.request('GET', `/accounts/${accountId}`, { token: a.session })).body.employee_count).toBe(99);
  });

  it('is incomplete with partial results when a page fails, and failed when the home page does', async () => {
    const partial = await site(ACME_SOFTWARE, { '/about': { status: 500, body: 'down' } });
    const run = await finished(ctx, a.session, `/intelligence/research-runs/${(await research(ctx, a, { website: partial.origin })).id}`);
    expect(run).toMatchObject({ status: 'incomplete', credits_used: 1 });
    expect(run.progress.pages_failed).toBe(1);
    expect(run.pages.find((p: { url: string }) => p.url.endsWith('/about'))).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('500'),
    });
    expect(run.results.facts.some((f: { field: string }) => f.field === 'technology')).toBe(true);

    const down = await site(ACME_SOFTWARE, { '/': { status: 503, body: 'down' } });
    const started = await research(ctx, a, { website: down.origin });
    const failed = await finished(ctx, a.session, `/intelligence/research-runs/${started.id}`);
    expect(failed).toMatchObject({ status: 'failed', credits_used: 0, results: { facts: expect.any(Array) } });
    expect(failed.error).toContain('503');
    // Addressed to whoever asked for the run, who subscribed to nothing.
    const [requester] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${a.user}`;
    expect(await outbox(ctx, started.id)).toEqual([
      expect.objectContaining({ event_type: 'research_run.failed', recipient_user_ids: [requester!.id] }),
    ]);
  });

  it('completes with an empty result and no credit when the site says nothing', async () => {
    const empty = await startFakeWebsite({ '/': { body: '<html><body></body></html>' } });
    sites.push(empty);
    const run = await finished(ctx, a.session, `/intelligence/research-runs/${(await research(ctx, a, { website: empty.origin })).id}`);
    expect(run).toMatchObject({ status: 'completed', credits_used: 0, results: { facts: [], summary: null } });
  });

  it('cancels a running run: it ends cancelled, keeps no credit, and a second cancel is 409', async () => {
    const slow = await site(ACME_SOFTWARE, { '/about': { body: '<p>slow</p>', delayMs: 8000 } });
    const started = await research(ctx, a, { website: slow.origin });
    await vi.waitFor(
      async () =>
        expect((await ctx.request('GET', `/intelligence/research-runs/${started.id}`, { token: a.session })).body.status).toBe(
          'in_progress',
        ),
      {
        timeout: 10_000,
        interval: 100,
      },
    );
    expect((await ctx.request('POST', `/intelligence/research-runs/${started.id}/cancel`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('POST', `/intelligence/research-runs/${started.id}/cancel`, { token: b.session })).status).toBe(404);
    const cancel = await ctx.request('POST', `/intelligence/research-runs/${started.id}/cancel`, { token: a.session });
    expect(cancel.status).toBe(202);
    expect(cancel.body).toEqual({ id: started.id, workflow_id: started.workflow_id, status: 'cancelling' });
    const run = await finished(ctx, a.session, `/intelligence/research-runs/${started.id}`);
    expect(run).toMatchObject({ status: 'cancelled', credits_used: 0 });
    expect((await ctx.request('POST', `/intelligence/research-runs/${started.id}/cancel`, { token: a.session })).status).toBe(409);
  });

  it('validates the target: exactly one of account_id, domain, website; accounts of the organization only', async () => {
    expect((await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: {} })).status).toBe(422);
    expect(
      (
        await ctx.request('POST', '/intelligence/research-runs', {
          token: a.session,
          body: { domain: 'a.example', website: 'https://a.example' },
        })
      ).status,
    ).toBe(422);
    expect((await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: { domain: 'not a domain' } })).status).toBe(
      422,
    );
    expect(
      (await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: { website: 'ftp://a.example' } })).status,
    ).toBe(422);
    const foreign = await newAccount(ctx, b, { name: 'Foreign', domain: 'foreign.example' });
    expect((await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: { account_id: foreign } })).status).toBe(
      404,
    );
    const bare = await newAccount(ctx, a, { name: 'No site' });
    expect((await ctx.request('POST', '/intelligence/research-runs', { token: a.session, body: { account_id: bare } })).status).toBe(400);
    expect((await ctx.request('POST', '/intelligence/research-runs', { token: readOnly, body: { domain: 'a.example' } })).status).toBe(403);
  });

  it('lists runs newest first, filtered, and hides them (and their workflow ids) from other organizations', async () => {
    const s = await site();
    const accountId = await newAccount(ctx, a, { name: 'Listed', website: s.origin });
    const started = await research(ctx, a, { account_id: accountId });
    await finished(ctx, a.session, `/intelligence/research-runs/${started.id}`);
    const list = await ctx.request('GET', `/intelligence/research-runs?account_id=${accountId}`, { token: readOnly });
    expect(list.status).toBe(200);
    expect(list.body.runs.map((r: { id: string }) => r.id)).toEqual([started.id]);
    expect((await ctx.request('GET', '/intelligence/research-runs?status=bogus', { token: a.session })).status).toBe(400);

    const byWorkflow = await ctx.request('GET', `/intelligence/runs/by-workflow/${started.workflow_id}`, { token: readOnly });
    expect(byWorkflow.body).toEqual({ id: started.id, kind: 'research', workflow_id: started.workflow_id, status: 'completed' });
    expect((await ctx.request('GET', `/intelligence/research-runs/${started.id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', `/intelligence/runs/by-workflow/${started.workflow_id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', '/intelligence/research-runs', { token: b.session })).body.runs).toEqual([]);
  });
});

describe('ICP-fit runs on the real dev server', () => {
  it('scores a batch in input order, with breakdowns, versions, not_found and no_score rows', async () => {
    const s = await site();
    const researched = await newAccount(ctx, a, { name: 'Researched', website: s.origin });
    await finished(ctx, a.session, `/intelligence/research-runs/${(await research(ctx, a, { account_id: researched })).id}`);
    const crmOnly = await newAccount(ctx, a, { name: 'CRM only', industry: 'retail', employee_count: 5000 });
    const unknown = await newAccount(ctx, a, { name: 'Nothing known' });
    const foreign = await newAccount(ctx, b, { name: 'Foreign', industry: 'software' });
    const missing = newId();
    const profile = (await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Batch' } }))
      .body;
    // Version 2: the run names the version it scored with.
    await ctx.request('PATCH', `/intelligence/icp-profiles/${profile.id}`, { token: a.session, body: { criteria: PROFILE.criteria } });

    const ids = [unknown, researched, foreign, crmOnly, missing];
    const res = await ctx.request('POST', '/intelligence/icp-fit-runs', {
      token: a.session,
      body: { profile_id: profile.id, account_ids: ids },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: res.body.id, workflow_id: `icp-fit:${res.body.id}`, status: 'queued' });
    const run = await finished(ctx, readOnly, `/intelligence/icp-fit-runs/${res.body.id}`);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, res.body.workflow_id, 'icp-fit-run');

    expect(run).toMatchObject({
      status: 'completed',
      profile_id: profile.id,
      profile_version: 2,
      progress: { accounts_total: 5, accounts_done: 5 },
    });
    expect(run.results.map((r: { account_id: string }) => r.account_id)).toEqual(ids);
    expect(run.results.map((r: { outcome: string }) => r.outcome)).toEqual(['no_score', 'scored', 'not_found', 'scored', 'not_found']);
    const top = run.results[1];
    expect(top).toMatchObject({ fit_score: 100, grade: 'A' });
    expect(top.confidence).toBeGreaterThan(0);
    expect(top.breakdown.map((b: { type: string; result: string }) => [b.type, b.result])).toEqual([
      ['industry', 'matched'],
      ['employees', 'matched'],
      ['country', 'matched'],
      ['technology', 'matched'],
    ]);
    expect(top.breakdown[1].evidence[0]).toMatchObject({ value: '120', source: s.url('/about') });
    // CRM only: industry retail (missed), 5000 employees (1000+ matched), country and technology unknown.
    expect(run.results[3]).toMatchObject({ fit_score: 30, grade: 'D' });
    expect(run.results[3].breakdown.map((b: { result: string }) => b.result)).toEqual(['missed', 'matched', 'unknown', 'unknown']);
    expect(run.results[3].breakdown[1].evidence[0]).toMatchObject({ source: 'crm' });
    expect(run.results[2]).toMatchObject({ fit_score: null, grade: null, breakdown: [], confidence: null });

    // Reproducible: the same batch again gives the same numbers.
    const again = await ctx.request('POST', '/intelligence/icp-fit-runs', {
      token: a.session,
      body: { profile_id: profile.id, account_ids: ids },
    });
    const second = await finished(ctx, a.session, `/intelligence/icp-fit-runs/${again.body.id}`);
    expect(second.results).toEqual(run.results);

    expect((await ctx.request('GET', `/intelligence/icp-fit-runs/${res.body.id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', `/intelligence/runs/by-workflow/icp-fit:${res.body.id}`, { token: b.session })).status).toBe(404);
    const list = await ctx.request('GET', `/intelligence/icp-fit-runs?profile_id=${profile.id}`, { token: readOnly });
    expect(list.body.runs.map((r: { id: string }) => r.id)).toEqual([again.body.id, res.body.id]);
    expect(list.body.runs[0]).not.toHaveProperty('results');
  });

  it('validates the batch: 1 to 100 accounts, a profile of the organization, manage scope', async () => {
    const profile = (await ctx.request('POST', '/intelligence/icp-profiles', { token: a.session, body: { ...PROFILE, name: 'Limits' } }))
      .body;
    const post = (token: string, body: unknown) => ctx.request('POST', '/intelligence/icp-fit-runs', { token, body });
    expect((await post(a.session, { profile_id: profile.id, account_ids: [] })).status).toBe(422);
    expect((await post(a.session, { profile_id: profile.id, account_ids: Array.from({ length: 101 }, () => newId()) })).status).toBe(422);
    expect((await post(b.session, { profile_id: profile.id, account_ids: [newId()] })).status).toBe(404);
    expect((await post(readOnly, { profile_id: profile.id, account_ids: [newId()] })).status).toBe(403);
  });
});

describe('research with an OpenAI-compatible LLM (local fake server)', () => {
  let llmCtx: TestContext;
  let llm: FakeLlm;
  beforeAll(async () => {
    llm = await startFakeLlmServer();
    llm.reply = 'Acme Cloud sells field-service software (summary by the fake LLM).';
    llmCtx = await createTestContext({
      worker: true,
      env: { WEB_FETCH_ALLOW_PRIVATE: 'true', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'test-key', LLM_MODEL: 'fake-model' },
    });
  });
  afterAll(async () => {
    await llmCtx?.close();
    await llm?.close();
  });

  it('writes the summary with the LLM, while facts and scores stay rule-based', async () => {
    const t = await newTenant(llmCtx, ['api:read', 'api:manage']);
    const s = await site();
    const accountId = await newAccount(llmCtx, t, { name: 'Acme Cloud', website: s.origin });
    const run = await finished(
      llmCtx,
      t.session,
      `/intelligence/research-runs/${(await research(llmCtx, t, { account_id: accountId })).id}`,
    );
    expect(run.results).toMatchObject({ summary: llm.reply, summary_source: 'llm' });
    expect(llm.requests.at(-1)!.model).toBe('fake-model');
    expect(llm.requests.at(-1)!.messages.at(-1)!.content).toContain('Acme Cloud');
    expect(run.results.facts.find((f: { field: string }) => f.field === 'employees')).toMatchObject({ value: '120' });

    // A failing LLM costs the summary's author, not the run.
    llm.failWith = 500;
    const fallback = await finished(
      llmCtx,
      t.session,
      `/intelligence/research-runs/${(await research(llmCtx, t, { account_id: accountId })).id}`,
    );
    llm.failWith = null;
    expect(fallback).toMatchObject({ status: 'completed', results: { summary_source: 'builtin' } });
    expect(fallback.error).toMatch(/^LLM summary failed \(built-in summary used\)/);
    expect(run.error).toBeNull();

    const profile = (await llmCtx.request('POST', '/intelligence/icp-profiles', { token: t.session, body: PROFILE })).body;
    const fit = await llmCtx.request('POST', '/intelligence/icp-fit-runs', {
      token: t.session,
      body: { profile_id: profile.id, account_ids: [accountId] },
    });
    const scored = await finished(llmCtx, t.session, `/intelligence/icp-fit-runs/${fit.body.id}`);
    expect(scored.results[0]).toMatchObject({ outcome: 'scored', fit_score: 100 });
    expect(scored.results[0].breakdown).toHaveLength(4);
  });
});

describe('with the workflow engine unreachable', () => {
  let down: TestContext;
  beforeAll(async () => {
    const { freePort } = await import('../../dev-servers/ports');
    down = await createTestContext({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, TEMPORAL_REQUEST_TIMEOUT_MS: '1500' } });
  });
  afterAll(() => down?.close());

  it('answers research and ICP-fit starts with 503 and writes no run', async () => {
    const t = await newTenant(down, ['api:read', 'api:manage']);
    const research = await down.request('POST', '/intelligence/research-runs', { token: t.session, body: { domain: 'acme.example' } });
    expect(research.status, JSON.stringify(research.body)).toBe(503);
    const profile = (await down.request('POST', '/intelligence/icp-profiles', { token: t.session, body: PROFILE })).body;
    const fit = await down.request('POST', '/intelligence/icp-fit-runs', {
      token: t.session,
      body: { profile_id: profile.id, account_ids: [newId()] },
    });
    expect(fit.status).toBe(503);
    const orgId = await orgUuid(down, t);
    const [counts] = await down.deps.sql<{ research: number; fit: number; results: number }[]>`
      SELECT (SELECT count(*)::int FROM research_runs WHERE org_id = ${orgId}) AS research,
             (SELECT count(*)::int FROM icp_fit_runs WHERE org_id = ${orgId}) AS fit,
             (SELECT count(*)::int FROM icp_fit_results WHERE org_id = ${orgId}) AS results`;
    expect(counts).toEqual({ research: 0, fit: 0, results: 0 });
  });
});

describe('ICP profile text', () => {
  it('refuses NUL characters and blank values with 422, as the document says, and trims the rest', async () => {
    const res = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: { name: 'Nul\u0000name', criteria: [{ type: 'keyword', values: ['a\u0000b'], weight: 1 }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc.slice(0, 2))).toContainEqual(['body', 'name']);
    for (const blank of [' ', '\f', '\ufeff']) {
      const r = await ctx.request('POST', '/intelligence/icp-profiles', {
        token: a.session,
        body: { name: 'Blank', criteria: [{ type: 'keyword', values: [blank], weight: 1 }] },
      });
      expect(r.status).toBe(422);
    }
    const padded = await ctx.request('POST', '/intelligence/icp-profiles', {
      token: a.session,
      body: { name: ' Padded ', criteria: [{ type: 'keyword', values: [' x '], weight: 1 }] },
    });
    expect(padded.body).toMatchObject({ name: 'Padded', criteria: [{ values: ['x'] }] });
  });
});
