import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AreaRoutes } from '../../api/app';
import { WITHOUT_IDEMPOTENCY_KEY } from '../../api/middleware/idempotency';
import { reply } from '../../api/route';
import { ErrorBody } from '../../api/schemas/common';
import { IdempotencyKeys } from '../../services/idempotency';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

// Idempotency-Key on the POSTs that create or start something: the same request again answers the first
// answer (Idempotent-Replayed: true) and runs nothing; another request under the key is 422; one still
// running is 409; a 5xx is not kept. Keys belong to an organization and a credential.

/** Probe routes: one that waits for the test to let it finish, one that fails with 503 the first time. */
let release: () => void = () => {};
let gate = Promise.resolve();
let slowCalls = 0;
let flakyCalls = 0;
const probeRoutes: AreaRoutes = (routes) => {
  routes.add({
    method: 'post',
    path: '/test/idempotency/slow',
    tag: 'Service Health',
    summary: 'answers once the test opens the gate',
    auth: { scope: 'crmManage' },
    body: z.object({ n: z.number() }),
    responses: { 200: { description: 'the call', schema: z.object({ n: z.number(), calls: z.number() }) } },
    handler: async ({ body }) => {
      slowCalls++;
      await gate;
      return reply(200, { n: body.n, calls: slowCalls }, { 'X-Probe': `call-${slowCalls}` });
    },
  });
  routes.add({
    method: 'post',
    path: '/test/idempotency/flaky',
    tag: 'Service Health',
    summary: 'fails with 503 on its first call',
    auth: { scope: 'crmManage' },
    responses: {
      200: { description: 'the call', schema: z.object({ calls: z.number() }) },
      503: { description: 'the first call', schema: ErrorBody },
    },
    handler: async () => (++flakyCalls === 1 ? reply(503, { detail: 'not yet' }) : reply(200, { calls: flakyCalls })),
  });
};

let lateCalls = 0;
/** A route that answers after the request's deadline (REQUEST_TIMEOUT_MS of the context that adds it). */
const lateRoutes: AreaRoutes = (routes) => {
  routes.add({
    method: 'post',
    path: '/test/idempotency/late',
    tag: 'Service Health',
    summary: 'answers 1.5 s after it was called',
    auth: { scope: 'crmManage' },
    responses: { 200: { description: 'the call', schema: z.object({ calls: z.number() }) } },
    handler: async () => {
      const call = ++lateCalls;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { calls: call };
    },
  });
};

let ctx: TestContext;
let t: Tenant;
beforeAll(async () => {
  ctx = await createTestContext({ extraAreas: [probeRoutes] });
  t = await newTenant(ctx);
});
afterAll(() => ctx?.close());

const newKey = () => crypto.randomUUID();
const post = (path: string, body: unknown, key?: string, token = t.session) =>
  ctx.request('POST', path, { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
const contactsNamed = async (name: string, token = t.session) =>
  (await ctx.request('GET', `/contacts?search=${encodeURIComponent(name)}`, { token })).body as { id: string }[];

describe('the same request again', () => {
  it('answers the first answer again, marked as a replay, and creates nothing more', async () => {
    const key = newKey();
    const body = { first_name: 'Ada', last_name: `Replay${key.slice(0, 8)}` };
    const first = await post('/contacts', body, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/contacts', body, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await contactsNamed(body.last_name)).toHaveLength(1);
    // Without a key the same body is a new request.
    expect((await post('/contacts', body)).status).toBe(200);
    expect(await contactsNamed(body.last_name)).toHaveLength(2);
  });

  it("replays the headers the route set, and a refusal of the route's own as well", async () => {
    const key = newKey();
    const first = await post('/test/idempotency/slow', { n: 1 }, key);
    expect(first.headers.get('x-probe')).toBe(`call-${first.body.calls}`);
    const again = await post('/test/idempotency/slow', { n: 1 }, key);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('x-probe')).toBe(first.headers.get('x-probe'));
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));

    const unknownAgent = { name: 'No agent', agent_id: '00000000-0000-7000-8000-000000000000', contacts: [] };
    const refusalKey = newKey();
    const refused = await post('/campaign/campaigns', unknownAgent, refusalKey);
    expect(refused.status).toBe(404);
    const refusedAgain = await post('/campaign/campaigns', unknownAgent, refusalKey);
    expect(refusedAgain.status).toBe(404);
    expect(refusedAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(refusedAgain.body).toEqual(refused.body);
  });

  it('keeps a secret shown once sealed, and shows it again only to the same request', async () => {
    const key = newKey();
    const first = await post('/organization-pats', { name: 'ci' }, key);
    expect(first.status).toBe(200);
    const again = await post('/organization-pats', { name: 'ci' }, key);
    expect(again.body.pat_key).toBe(first.body.pat_key);
    const keys = await ctx.request('GET', '/organization-pats', { token: t.session });
    expect(keys.body.filter((k: { name: string }) => k.name === 'ci')).toHaveLength(1);
    const [row] = await ctx.deps.sql<{ response_body: string }[]>`SELECT response_body FROM idempotency_keys WHERE key = ${key}`;
    expect(row!.response_body).not.toContain(first.body.pat_key);
    expect(row!.response_body).not.toContain('pat_key');
  });
});

describe('another request under the same key', () => {
  it('is 422 in the validation format, for another body or path, and changes nothing', async () => {
    const key = newKey();
    const last = `Mismatch${key.slice(0, 8)}`;
    expect((await post('/contacts', { first_name: 'Ada', last_name: last }, key)).status).toBe(200);
    const refused = await post('/contacts', { first_name: 'Grace', last_name: last }, key);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      {
        type: 'idempotency_key_reused',
        loc: ['header', 'idempotency-key'],
        msg: 'This Idempotency-Key was used within 24 hours with another request (method, path, query or body)',
        input: key,
        ctx: {},
      },
    ]);
    // The same bytes in another order are another body.
    expect((await post('/contacts', { last_name: last, first_name: 'Ada' }, key)).status).toBe(422);
    const deal = await post('/deals', { name: `Deal ${last}` }, key);
    expect(deal.status).toBe(422);
    expect(deal.body.detail[0].type).toBe('idempotency_key_reused');
    expect(await contactsNamed(last)).toHaveLength(1);
    const deals = await ctx.request('GET', '/deals', { token: t.session });
    expect(JSON.stringify(deals.body)).not.toContain(last);
  });

  it('is 422 for a key that is not 1 to 255 printable ASCII characters, before anything runs', async () => {
    const last = `BadKey${newKey().slice(0, 8)}`;
    for (const [key, type] of [
      ['k'.repeat(256), 'string_too_long'],
      ['clé', 'string_pattern_mismatch'],
      ['', 'string_pattern_mismatch'],
    ] as const) {
      const refused = await post('/contacts', { first_name: 'Ada', last_name: last }, key);
      expect(refused.status, key).toBe(422);
      expect(refused.body.detail[0]).toMatchObject({ type, loc: ['header', 'idempotency-key'] });
    }
    expect((await post('/contacts', { first_name: 'Ada', last_name: last }, 'k'.repeat(255))).status).toBe(200);
    expect((await post('/contacts', { first_name: 'Ada', last_name: last }, ' "quoted key" ')).status).toBe(200);
    expect(await contactsNamed(last)).toHaveLength(2);
  });
});

describe('a request still running under the key', () => {
  it('makes a duplicate 409 until it has finished, then replays it; the handler ran once', async () => {
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const before = slowCalls;
    const key = newKey();
    const running = post('/test/idempotency/slow', { n: 7 }, key);
    await expect.poll(() => slowCalls, { timeout: 10_000 }).toBe(before + 1);
    const duplicate = await post('/test/idempotency/slow', { n: 7 }, key);
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toBe('A request with this Idempotency-Key is still being processed; retry once it has finished');
    // Another body under the running key is still another request.
    expect((await post('/test/idempotency/slow', { n: 8 }, key)).status).toBe(422);
    release();
    const first = await running;
    expect(first.status).toBe(200);
    const after = await post('/test/idempotency/slow', { n: 7 }, key);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body).toEqual(first.body);
    expect(slowCalls).toBe(before + 1);
  });

  it('lets concurrent duplicates of a create make one row', async () => {
    const key = newKey();
    const body = { first_name: 'Ada', last_name: `Concurrent${key.slice(0, 8)}` };
    const answers = await Promise.all(Array.from({ length: 8 }, () => post('/contacts', body, key)));
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const created = answers.filter((a) => a.status === 200);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    expect(await contactsNamed(body.last_name)).toHaveLength(1);
  });
});

describe('what is kept', () => {
  it('keeps no 5xx answer: the same request may be sent again under the key, and then it is kept', async () => {
    const key = newKey();
    const failed = await post('/test/idempotency/flaky', undefined, key);
    expect(failed.status).toBe(503);
    const retried = await post('/test/idempotency/flaky', undefined, key);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await post('/test/idempotency/flaky', undefined, key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(retried.body);
    expect(flakyCalls).toBe(2);
  });

  it("scopes keys to the organization and the credential: another's key of the same text is a new request", async () => {
    const key = newKey();
    const body = { first_name: 'Ada', last_name: `Scoped${key.slice(0, 8)}` };
    expect((await post('/contacts', body, key)).status).toBe(200);
    const ak = await createOrgKey(ctx, t.session);
    const byKey = await post('/contacts', body, key, ak);
    expect(byKey.status).toBe(200);
    expect(byKey.headers.get('idempotent-replayed')).toBeNull();
    expect(await contactsNamed(body.last_name)).toHaveLength(2);
    const other = await newTenant(ctx);
    const elsewhere = await post('/contacts', body, key, other.session);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull();
    expect(await contactsNamed(body.last_name, other.session)).toHaveLength(1);
  });

  it('forgets a key once it expired, and sweeps expired keys away', async () => {
    const key = newKey();
    const body = { first_name: 'Ada', last_name: `Expired${key.slice(0, 8)}` };
    const first = await post('/contacts', body, key);
    await ctx.deps.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ${key}`;
    const fresh = await post('/contacts', body, key);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.id).not.toBe(first.body.id);

    const orgId = await orgUuid(ctx, t);
    await ctx.deps.sql`
      INSERT INTO idempotency_keys (org_id, principal, key, fingerprint, method, path, claim, expires_at)
      VALUES (${orgId}, 'user:x', 'old', '\\x00', 'POST', '/contacts', gen_random_uuid(), now() - interval '1 hour')`;
    // A process sweeps after a claim, at most once a minute: a new process's first claim does.
    const keys = new IdempotencyKeys(ctx.deps);
    await keys.claim({ orgId, principal: 'user:x', key: newKey() }, { method: 'POST', path: '/x', fingerprint: Buffer.from('x') });
    await expect
      .poll(async () => (await ctx.deps.sql`SELECT 1 FROM idempotency_keys WHERE key = 'old'`).length, { timeout: 10_000 })
      .toBe(0);
  });
});

describe('a request past its deadline', () => {
  it('leaves what its handler answered after the 503 for the retry, rather than running it again', async () => {
    const late = await createTestContext({
      extraAreas: [lateRoutes],
      env: { REQUEST_TIMEOUT_MS: '1000', DATABASE_STATEMENT_TIMEOUT_MS: '300', DATABASE_RESPONSE_TIMEOUT_MS: '500' },
    });
    try {
      const tenant = await newTenant(late);
      const key = newKey();
      const send = () => late.request('POST', '/test/idempotency/late', { token: tenant.session, headers: { 'Idempotency-Key': key } });
      const first = await send();
      expect(first.status).toBe(503);
      await expect
        .poll(async () => (await late.deps.sql`SELECT status FROM idempotency_keys WHERE key = ${key}`)[0]?.status, { timeout: 10_000 })
        .toBe(200);
      const retry = await send();
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual({ calls: 1 });
      expect(lateCalls).toBe(1);
    } finally {
      await late.close();
    }
  });
});

describe('the document', () => {
  it('declares the shared Idempotency-Key parameter, 409 and 422 on every POST that creates or starts something', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    const takesKey = (path: string) =>
      (doc.paths[path]?.post?.parameters ?? []).some((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey');
    for (const path of [
      '/campaign/campaigns',
      '/campaign/campaigns/{id}/contacts',
      '/campaign/campaigns/{id}/resume',
      '/contacts',
      '/contacts/import',
      '/deals',
      '/accounts',
      '/accounts/{account_id}/activities',
      '/tags',
      '/files/initiate-upload',
      '/files/{file_id}/confirm-upload',
      '/core/agents',
      '/core/agents/create-from-website',
      '/core/agents/{id}/versions/{version}/generate-instructions',
      '/core/phone-numbers/import',
      '/knowledge-base/datasets',
      '/knowledge-base/sources',
      '/knowledge-base/sources/{source_id}/reingest',
      '/intelligence/research-runs',
      '/intelligence/icp-fit-runs',
      '/meetings/bots',
      '/organization-pats',
      '/outreach/sequencer/sequences/{sequence_id}/enrollments',
    ]) {
      expect(takesKey(path), path).toBe(true);
      const responses = doc.paths[path].post.responses;
      expect(responses['409'].description, path).toMatch(/Idempotency-Key is still being processed/);
      expect(responses['422'].description, path).toMatch(/Idempotency-Key/);
      const success = responses['200'] ?? responses['202'] ?? responses['204'];
      expect(success.headers['Idempotent-Replayed'], path).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
    }
    // Reads sent as POST, raw uploads, streams, public and organization-less routes take none.
    for (const path of [
      ...Object.keys(WITHOUT_IDEMPOTENCY_KEY),
      '/ai/chats/{chat_id}/messages',
      '/analytics-assistant/questions',
      '/pat/exchange',
      '/feedback',
      '/user-pats',
    ])
      expect(takesKey(path), path).toBe(false);
  });
});
