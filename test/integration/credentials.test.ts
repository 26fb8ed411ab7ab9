import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESHER_IDS } from '../../domain/credentials';
import { INTEGRATION_REFRESHER_ID } from '../../platform/adapters/oauth/refresher';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import { credentialKeyring, readCredentialValue, resealCredentialValues } from '../../services/credentials/values';
import { loadConfig } from '../../platform/core/config';
import { createTestContext, type TestContext } from '../support/context';
import { keepHistory } from '../support/histories';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';
import { startTokenServer, type TokenServer } from '../support/oauth-token-server';

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let aOrg: string;
let tokens: TokenServer;
const refreshTokens = new Set<string>();
/** Every response body this file received, to prove no value ever appears in one. */
const responses: string[] = [];

const CLIENT_SECRET = 'cs-very-secret-4c1d9e';
const TYPED_SECRET = 'typed-api-key-77aa01';
/** A secret whose URL, form and JSON encodings all differ from it. */
const ECHO_SECRET = 'Echo/S3cret+z9=w&q"ü';
const ECHO_CLIENT = 'client-echo';

beforeAll(async () => {
  tokens = await startTokenServer({ 'client-1': CLIENT_SECRET, [ECHO_CLIENT]: ECHO_SECRET }, refreshTokens);
  // An integration whose client secret lives only in the deployment's catalog, not in any value.
  const catalog = [
    {
      key: 'echo',
      name: 'Echo',
      authorization_url: `${tokens.url}/authorize`,
      token_url: tokens.url,
      client_id: ECHO_CLIENT,
      client_secret: ECHO_SECRET,
    },
  ];
  ctx = await createTestContext({
    worker: true,
    env: {
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      CREDENTIAL_REFRESH_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'debug',
      INTEGRATION_PROVIDERS: JSON.stringify(catalog),
    },
  });
  [a, b] = await Promise.all([newTenant(ctx), newTenant(ctx)]);
  aOrg = await orgUuid(ctx, a);
});
afterAll(async () => {
  await tokens?.close();
  await ctx?.close();
});

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await ctx.request(method, path, { token, body });
  responses.push(res.text);
  return res;
}

let seq = 0;
async function oauthCredential(t: Tenant, extra: Record<string, unknown> = {}) {
  const refreshToken = `rt-initial-${++seq}-${Math.random().toString(36).slice(2)}`;
  refreshTokens.add(refreshToken);
  const res = await call('POST', '/workflow/credentials', t.session, {
    name: `oauth ${seq}`,
    refresher_workflow_id: REFRESHER_IDS.oauth2_refresh_token,
    refresh_input: { token_url: tokens.url, client_id: 'client-1' },
    value: { client_secret: CLIENT_SECRET, refresh_token: refreshToken },
    ...extra,
  });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.id as string, refreshToken };
}

async function refreshAndWait(t: Tenant, id: string) {
  const res = await call('POST', `/workflow/credentials/${id}/refresh`, t.session);
  expect(res.status, res.text).toBe(202);
  const result = await ctx.deps.temporal.workflow.getHandle(res.body.workflow_id, res.body.execution_id).result();
  return { started: res.body, result };
}

/** Every payload of a workflow's history, decoded, plus the history itself as text. */
async function historyText(workflowId: string, runId?: string): Promise<string> {
  const history = await ctx.deps.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
  const parts: string[] = [];
  const walk = (node: unknown) => {
    if (node instanceof Uint8Array) parts.push(Buffer.from(node).toString('utf8'));
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') Object.values(node).forEach(walk);
    else if (typeof node === 'string') parts.push(node);
  };
  walk(history);
  return parts.join('\n');
}

describe('credential metadata', () => {
  it('creates, reads, updates and deletes; answers every field and never a value', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, {
      name: 'Stripe key',
      description: 'live',
      value: { api_key: TYPED_SECRET },
    });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(
      [
        'id',
        'organization_id',
        'name',
        'description',
        'refresher_workflow_id',
        'refresh_input',
        'refresh_policy',
        'has_value',
        'value_keys',
        'expires_at',
        'last_refresh_status',
        'last_refresh_at',
        'last_refresh_error',
        'last_refresh_execution_id',
        'refresh_locked_until',
        'is_refreshing',
        'temporal_schedule_id',
        'created_at',
        'updated_at',
        'created_by',
        'modified_by',
        'secrets',
      ].sort(),
    );
    expect(created.body).toMatchObject({
      organization_id: aOrg,
      refresh_policy: { type: 'manual' },
      has_value: true,
      value_keys: ['api_key'],
      temporal_schedule_id: null,
      is_refreshing: false,
      created_by: `user:${a.user}`,
    });
    expect(created.body.secrets).toEqual([
      { key: 'api_key', type: 'string', description: 'API key', source: 'input', updated_at: expect.any(String) },
    ]);
    const id = created.body.id;
    expect((await call('GET', `/workflow/credentials/${id}`, a.session)).body).toEqual(created.body);
    const patched = await call('PATCH', `/workflow/credentials/${id}`, a.session, { description: 'rotated monthly' });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('rotated monthly');
    expect((await call('PATCH', `/workflow/credentials/${id}`, a.session, {})).status).toBe(400);
    expect((await call('POST', '/workflow/credentials', a.session, { name: 'STRIPE KEY' })).status).toBe(409);
    expect((await call('DELETE', `/workflow/credentials/${id}`, a.session)).status).toBe(204);
    expect((await call('GET', `/workflow/credentials/${id}`, a.session)).status).toBe(404);
  });

  it('lists by name substring (case-insensitive) with limit, an opaque cursor and the total', async () => {
    const t = await newTenant(ctx);
    for (const name of ['Alpha API', 'beta api', 'Gamma', 'delta API'])
      expect((await call('POST', '/workflow/credentials', t.session, { name })).status).toBe(200);
    const first = await call('GET', '/workflow/credentials?name=api&limit=2', t.session);
    expect(first.status).toBe(200);
    expect(first.body.pagination).toMatchObject({ limit: 2, total: 3, offset: 0, next_cursor: expect.any(String) });
    expect(first.body.data.map((c: { name: string }) => c.name)).toEqual(['delta API', 'beta api']);
    const second = await call('GET', `/workflow/credentials?name=api&limit=2&cursor=${first.body.pagination.next_cursor}`, t.session);
    expect(second.body.data.map((c: { name: string }) => c.name)).toEqual(['Alpha API']);
    expect(second.body.pagination.next_cursor).toBeNull();
    expect((await call('GET', '/workflow/credentials?limit=0', t.session)).status).toBe(422);
    expect((await call('GET', '/workflow/credentials?limit=101', t.session)).status).toBe(422);
    expect((await call('GET', '/workflow/credentials?cursor=nonsense', t.session)).status).toBe(400);
    expect((await call('GET', '/workflow/credentials?bogus=1', t.session)).status).toBe(400);
  });

  it('refuses writes to a read-only key (403) and hides another organization’s credentials (404)', async () => {
    const { id } = await oauthCredential(a);
    const readOnly = await createOrgKey(ctx, (await newTenant(ctx, ['api:read', 'organizations:manage'])).session, {
      scopes: ['api:read'],
    });
    expect((await call('POST', '/workflow/credentials', readOnly, { name: 'x' })).status).toBe(403);
    expect((await call('GET', '/workflow/credentials', readOnly)).status).toBe(200);
    expect((await call('GET', `/workflow/credentials/${id}`, b.session)).status).toBe(404);
    expect((await call('PATCH', `/workflow/credentials/${id}`, b.session, { name: 'mine' })).status).toBe(404);
    expect((await call('PUT', `/workflow/credentials/${id}/value`, b.session, { value: { a: 1 } })).status).toBe(404);
    expect((await call('POST', `/workflow/credentials/${id}/refresh`, b.session)).status).toBe(404);
    expect((await call('DELETE', `/workflow/credentials/${id}`, b.session)).status).toBe(404);
    expect((await call('GET', '/workflow/credentials?limit=100', b.session)).body.data.map((c: { id: string }) => c.id)).not.toContain(id);
  });

  it('checks refresher, refresh input and policy together', async () => {
    const unknown = await call('POST', '/workflow/credentials', a.session, {
      name: 'r1',
      refresher_workflow_id: '0190f5a0-0000-7000-8000-0000000000ff',
    });
    expect(unknown.status).toBe(404);
    const badInput = await call('POST', '/workflow/credentials', a.session, {
      name: 'r2',
      refresher_workflow_id: REFRESHER_IDS.oauth2_client_credentials,
      refresh_input: { token_url: 'nope' },
    });
    expect(badInput.status).toBe(400);
    expect(badInput.body.detail).toMatch(/refresh_input\.token_url/);
    const scheduleWithout = await call('POST', '/workflow/credentials', a.session, {
      name: 'r3',
      refresh_policy: { type: 'interval', every_seconds: 600 },
    });
    expect(scheduleWithout.status).toBe(400);
    const badCron = await call('POST', '/workflow/credentials', a.session, {
      name: 'r4',
      refresh_policy: { type: 'cron', expression: 'every day', timezone: 'UTC' },
    });
    expect(badCron.status).toBe(422);
    const shortInterval = await call('POST', '/workflow/credentials', a.session, {
      name: 'r5',
      refresh_policy: { type: 'interval', every_seconds: 5 },
    });
    expect(shortInterval.status).toBe(422);
    const refreshers = await call('GET', '/workflow/credential-refreshers', a.session);
    expect(refreshers.body.data.map((r: { kind: string }) => r.kind)).toEqual([
      'oauth2_refresh_token',
      'oauth2_client_credentials',
      'http_json',
      'integration_oauth2',
    ]);
  });
});

describe('PUT /workflow/credentials/{id}/value', () => {
  it('is write-only: has_value, value_keys and secrets follow; the value is sealed at rest', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, { name: 'typed' });
    expect(created.body).toMatchObject({ has_value: false, value_keys: [], secrets: [] });
    const res = await call('PUT', `/workflow/credentials/${created.body.id}/value`, a.session, {
      value: { password: TYPED_SECRET, username: 'svc', port: 5432 },
      expires_at: '2031-01-01T00:00:00Z',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      has_value: true,
      value_keys: ['password', 'port', 'username'],
      expires_at: '2031-01-01T00:00:00.000Z',
    });
    expect(res.body.secrets.map((s: { key: string; type: string }) => [s.key, s.type])).toEqual([
      ['password', 'string'],
      ['port', 'number'],
      ['username', 'string'],
    ]);
    const [stored] = await ctx.deps.sql`SELECT value_ciphertext, value_key_id FROM workflow_credentials WHERE id = ${created.body.id}`;
    expect(stored!.value_ciphertext).not.toContain(TYPED_SECRET);
    expect(stored!.value_key_id).toBe(credentialKeyring(ctx.config).current.id);
    expect(await readCredentialValue(ctx.deps, aOrg, created.body.id)).toEqual({ password: TYPED_SECRET, username: 'svc', port: 5432 });
  });

  it('takes an object only: a bare string is 422', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, { name: 'typed 2' });
    const res = await call('PUT', `/workflow/credentials/${created.body.id}/value`, a.session, { value: 'sk_live_123' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'value']);
    expect((await call('PUT', `/workflow/credentials/${created.body.id}/value`, a.session, { value: ['x'] })).status).toBe(422);
  });

  it('never echoes the rejected value in a 422, nor a malformed body in json_invalid', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, { name: 'typed 3' });
    const url = `/workflow/credentials/${created.body.id}/value`;
    const bare = await call('PUT', url, a.session, { value: TYPED_SECRET });
    expect(bare.status).toBe(422);
    expect(bare.body.detail).toHaveLength(1);
    expect(bare.body.detail[0]).toMatchObject({ loc: ['body', 'value'], input: '[redacted]' });
    const listed = await call('PUT', url, a.session, { value: [TYPED_SECRET], expires_at: 'soon' });
    expect(listed.status).toBe(422);
    expect(listed.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['body', 'value'],
      ['body', 'expires_at'],
    ]);
    expect(listed.body.detail[1].input).toBe('soon'); // fields that are no secret are echoed as ever
    const onCreate = await call('POST', '/workflow/credentials', a.session, { name: 'typed 4', value: TYPED_SECRET });
    expect(onCreate.status).toBe(422);
    const malformed = await ctx.request('PUT', url, {
      token: a.session,
      rawBody: `{"value": {"api_key": ${TYPED_SECRET}}}`,
      headers: { 'Content-Type': 'application/json' },
    });
    responses.push(malformed.text);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].type).toBe('json_invalid');
    for (const res of [bare, listed, onCreate, malformed]) expect(res.text).not.toContain(TYPED_SECRET);
  });

  it('is refused with 409 when the credential has a refresher', async () => {
    const { id } = await oauthCredential(a);
    const res = await call('PUT', `/workflow/credentials/${id}/value`, a.session, { value: { access_token: 'typed' } });
    expect(res.status).toBe(409);
  });
});

describe('refresh', () => {
  it('refreshes through the OAuth 2.0 token server: new value and expiry, status, execution id, lock released', async () => {
    tokens.mode = 'ok';
    tokens.delayMs = 0;
    const { id, refreshToken } = await oauthCredential(a);
    const before = tokens.requests.length;
    const { started, result } = await refreshAndWait(a, id);
    expect(result).toMatchObject({ status: 'success', expires_at: expect.any(String) });
    expect(tokens.requests.length - before).toBe(1);
    const request = tokens.requests.at(-1)!;
    expect(request.form).toMatchObject({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(request.authorization).toMatch(/^Basic /);
    const row = (await call('GET', `/workflow/credentials/${id}`, a.session)).body;
    expect(row).toMatchObject({
      last_refresh_status: 'success',
      last_refresh_error: null,
      last_refresh_execution_id: started.execution_id,
      is_refreshing: false,
      refresh_locked_until: null,
      value_keys: ['access_token', 'client_secret', 'refresh_token', 'token_type'],
    });
    expect(Math.abs(new Date(row.expires_at).getTime() - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(row.secrets.find((s: { key: string }) => s.key === 'access_token')).toMatchObject({
      source: 'refresh',
      description: 'OAuth 2.0 access token',
    });
    const value = await readCredentialValue(ctx.deps, aOrg, id);
    expect(value!.access_token).toBe(tokens.issued.at(-1));
    expect(value!.refresh_token).not.toBe(refreshToken); // rotated by the server
    expect(value!.client_secret).toBe(CLIENT_SECRET);

    // No value in the workflow history.
    const history = await historyText(started.workflow_id, started.execution_id);
    expect(history).toContain(id);
    for (const secret of [CLIENT_SECRET, refreshToken, String(value!.refresh_token), String(value!.access_token)])
      expect(history).not.toContain(secret);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, started.workflow_id, 'credential-refresh');
  });

  it('records a 4xx from the token server as failed, without retrying, and releases the lock', async () => {
    const { id } = await oauthCredential(a);
    tokens.mode = 'invalid_grant';
    const before = tokens.requests.length;
    const { result } = await refreshAndWait(a, id);
    tokens.mode = 'ok';
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('invalid_grant') });
    expect(tokens.requests.length - before).toBe(1);
    const row = (await call('GET', `/workflow/credentials/${id}`, a.session)).body;
    expect(row).toMatchObject({ last_refresh_status: 'failed', is_refreshing: false, refresh_locked_until: null, has_value: true });
    expect(row.last_refresh_error).toMatch(/400 \(invalid_grant/);
    expect(row.value_keys).toEqual(['client_secret', 'refresh_token']);
    // The always-send notification is queued with the failure, once.
    const events = await ctx.deps.sql`SELECT event_type, entity_type, payload FROM notification_outbox WHERE entity_id = ${id}`;
    expect(events.map((e) => ({ ...e }))).toEqual([
      {
        event_type: 'credential.refresh_failed',
        entity_type: 'credential',
        payload: expect.objectContaining({ credential_id: id, error: expect.stringContaining('invalid_grant') }),
      },
    ]);
  });

  it('gives up on a token server that hangs after three bounded attempts, recording the timeout', async () => {
    const { id } = await oauthCredential(a);
    tokens.mode = 'hang';
    const before = tokens.requests.length;
    const { result } = await refreshAndWait(a, id);
    tokens.mode = 'ok';
    expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/Timed out/) });
    expect(tokens.requests.length - before).toBe(3);
    const row = (await call('GET', `/workflow/credentials/${id}`, a.session)).body;
    expect(row).toMatchObject({ last_refresh_status: 'failed', is_refreshing: false });
  }, 30_000);

  it('lets only one of two concurrent triggers refresh: the other ends skipped on the lock', async () => {
    const { id } = await oauthCredential(a);
    tokens.delayMs = 1000;
    const before = tokens.requests.length;
    const manual = await call('POST', `/workflow/credentials/${id}/refresh`, a.session);
    // While it holds the lock, the credential shows it, under its execution id.
    await expect
      .poll(async () => (await call('GET', `/workflow/credentials/${id}`, a.session)).body, { timeout: 5000 })
      .toMatchObject({ is_refreshing: true, last_refresh_status: 'running', last_refresh_execution_id: manual.body.execution_id });
    // A second trigger with another workflow id, as a scheduled run would be.
    const other = await ctx.deps.temporal.workflow.start('credentialRefresh', {
      taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
      workflowId: `credential-refresh:${id}-scheduled`,
      args: [{ orgId: aOrg, credentialId: id, trigger: 'manual' }],
      typedSearchAttributes: [{ key: ORGANIZATION_ID, value: aOrg }],
    });
    const again = await call('POST', `/workflow/credentials/${id}/refresh`, a.session);
    expect(again.body.execution_id).toBe(manual.body.execution_id); // the running one is returned
    const results = await Promise.all([
      ctx.deps.temporal.workflow.getHandle(manual.body.workflow_id, manual.body.execution_id).result(),
      other.result(),
    ]);
    tokens.delayMs = 0;
    expect(results).toEqual([
      { status: 'success', expires_at: expect.any(String) },
      { status: 'skipped', reason: 'locked' },
    ]);
    expect(tokens.requests.length - before).toBe(1);
    expect((await call('GET', `/workflow/credentials/${id}`, a.session)).body.is_refreshing).toBe(false);
  }, 30_000);

  it('refuses a refresh of a credential without a refresher (409)', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, { name: 'no refresher' });
    expect((await call('POST', `/workflow/credentials/${created.body.id}/refresh`, a.session)).status).toBe(409);
  });

  it('refreshes with the client-credentials grant and the generic HTTP JSON refresher', async () => {
    const cc = await call('POST', '/workflow/credentials', a.session, {
      name: 'client credentials',
      refresher_workflow_id: REFRESHER_IDS.oauth2_client_credentials,
      refresh_input: { token_url: tokens.url, client_id: 'client-1', scope: 'read write', auth_method: 'client_secret_post' },
      value: { client_secret: CLIENT_SECRET },
    });
    expect(cc.status, cc.text).toBe(200);
    expect((await refreshAndWait(a, cc.body.id)).result.status).toBe('success');
    expect(tokens.requests.at(-1)!.form).toMatchObject({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: CLIENT_SECRET,
      scope: 'read write',
    });
    expect((await readCredentialValue(ctx.deps, aOrg, cc.body.id))!.scope).toBe('read write');

    const generic = await call('POST', '/workflow/credentials', a.session, {
      name: 'generic',
      refresher_workflow_id: REFRESHER_IDS.http_json,
      refresh_input: {
        url: tokens.url,
        body_format: 'form',
        body: { grant_type: 'client_credentials', client_id: '{{input.client}}', client_secret: '{{value.secret}}' },
        variables: { client: 'client-1' },
        mapping: { token: 'access_token', kind: 'token_type' },
        expires_at: { from: 'expires_in', path: 'expires_in' },
      },
      value: { secret: CLIENT_SECRET },
    });
    expect(generic.status, generic.text).toBe(200);
    expect((await refreshAndWait(a, generic.body.id)).result.status).toBe('success');
    const value = await readCredentialValue(ctx.deps, aOrg, generic.body.id);
    expect(value).toEqual({ secret: CLIENT_SECRET, token: tokens.issued.at(-1), kind: 'Bearer' });
  });
});

describe('refresh schedules', () => {
  it('creates, updates, pauses and deletes the Temporal Schedule with the credential', async () => {
    const { id } = await oauthCredential(a, { refresh_policy: { type: 'interval', every_seconds: 3600 } });
    const row = (await call('GET', `/workflow/credentials/${id}`, a.session)).body;
    expect(row.temporal_schedule_id).toBe(`credential-refresh:${id}`);
    const handle = ctx.deps.temporal.schedule.getHandle(row.temporal_schedule_id);
    let described = await handle.describe();
    expect(described.spec.intervals?.[0]?.every).toBe(3_600_000);
    expect(described.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(described.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(aOrg);
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'credentialRefresh',
      workflowId: `credential-refresh:${id}`,
    });
    expect((described.action as { typedSearchAttributes?: { get(k: unknown): unknown } }).typedSearchAttributes?.get(ORGANIZATION_ID)).toBe(
      aOrg,
    );
    expect(described.state.paused).toBe(false);

    const cron = await call('PATCH', `/workflow/credentials/${id}`, a.session, {
      refresh_policy: { type: 'cron', expression: '0 6 * * *', timezone: 'Europe/Paris', paused: true },
    });
    expect(cron.status, cron.text).toBe(200);
    described = await handle.describe();
    expect(described.spec.timezone).toBe('Europe/Paris');
    expect(described.spec.calendars?.length).toBeGreaterThan(0);
    expect(described.spec.intervals ?? []).toEqual([]);
    expect(described.state.paused).toBe(true);

    const manual = await call('PATCH', `/workflow/credentials/${id}`, a.session, { refresh_policy: { type: 'manual' } });
    expect(manual.body.temporal_schedule_id).toBeNull();
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

    const again = await call('PATCH', `/workflow/credentials/${id}`, a.session, {
      refresh_policy: { type: 'before_expiry', lead_seconds: 600 },
    });
    expect(again.body.temporal_schedule_id).toBe(`credential-refresh:${id}`);
    expect((await handle.describe()).spec.intervals?.[0]?.every).toBe(150_000);
    expect((await call('DELETE', `/workflow/credentials/${id}`, a.session)).status).toBe(204);
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  it('a scheduled run of a before-expiry policy refreshes only once the lead time is reached', async () => {
    const { id } = await oauthCredential(a, {
      refresh_policy: { type: 'before_expiry', lead_seconds: 600 },
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    const run = (workflowId: string) =>
      ctx.deps.temporal.workflow.execute('credentialRefresh', {
        taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
        workflowId,
        args: [{ orgId: aOrg, credentialId: id, trigger: 'schedule' }],
        typedSearchAttributes: [{ key: ORGANIZATION_ID, value: aOrg }],
      });
    expect(await run(`credential-refresh:${id}-early`)).toEqual({ status: 'skipped', reason: 'not_due' });
    await ctx.deps.sql`UPDATE workflow_credentials SET expires_at = now() + interval '5 minutes' WHERE id = ${id}`;
    expect((await run(`credential-refresh:${id}-due`)).status).toBe('success');
    await call('DELETE', `/workflow/credentials/${id}`, a.session);
  });
});

describe('key rotation', () => {
  it('re-seals every value under a new key; values sealed by the old key still open meanwhile', async () => {
    const created = await call('POST', '/workflow/credentials', a.session, { name: 'rotated', value: { api_key: TYPED_SECRET } });
    const oldKeyId = credentialKeyring(ctx.config).current.id;
    const oldMaster = (await import('node:fs')).readFileSync(`${ctx.config.dataDir}/keys/encryption.key`, 'utf8').trim();
    const newMaster = 'ab'.repeat(32);
    const rotated = loadConfig({
      ...process.env,
      DATA_DIR: ctx.config.DATA_DIR,
      ENCRYPTION_KEY: newMaster,
      ENCRYPTION_KEYS_PREVIOUS: oldMaster,
      DATABASE_URL: ctx.config.DATABASE_URL,
    });
    expect(await readCredentialValue({ sql: ctx.deps.sql, config: rotated }, aOrg, created.body.id)).toEqual({ api_key: TYPED_SECRET });
    expect(await resealCredentialValues({ sql: ctx.deps.sql, config: rotated })).toBeGreaterThan(0);
    const [row] = await ctx.deps.sql`SELECT value_key_id FROM workflow_credentials WHERE id = ${created.body.id}`;
    expect(row!.value_key_id).toBe(credentialKeyring(rotated).current.id);
    expect(row!.value_key_id).not.toBe(oldKeyId);
    expect(await readCredentialValue({ sql: ctx.deps.sql, config: rotated }, aOrg, created.body.id)).toEqual({ api_key: TYPED_SECRET });
    expect(await resealCredentialValues({ sql: ctx.deps.sql, config: rotated })).toBe(0);
    // Rotate back so the rest of the file keeps reading with its own key.
    const back = loadConfig({
      ...process.env,
      DATA_DIR: ctx.config.DATA_DIR,
      ENCRYPTION_KEYS_PREVIOUS: newMaster,
      DATABASE_URL: ctx.config.DATABASE_URL,
    });
    await resealCredentialValues({ sql: ctx.deps.sql, config: back });
  });
});

/** Every way a request carries `secret` (client `id`'s, for HTTP Basic), base64 without its padding. */
function encodingsOf(secret: string, id = ECHO_CLIENT): string[] {
  const b64 = (text: string) => Buffer.from(text).toString('base64').replace(/=+$/, '');
  const b64url = (text: string) => Buffer.from(text).toString('base64url');
  return [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ v: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    b64(secret),
    b64url(secret),
    b64(`${id}:${secret}`),
    b64(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`),
    b64url(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`),
  ];
}

describe('no secret in an error, a log, a notification or a history, in any encoding', () => {
  it('a token endpoint that echoes the request leaves no form of the secrets it was sent anywhere', async () => {
    const echoRefresh = `rt-echo-${Math.random().toString(36).slice(2)}/+=`;
    refreshTokens.add(echoRefresh);
    const create = async (body: Record<string, unknown>) => {
      const res = await call('POST', '/workflow/credentials', a.session, body);
      expect(res.status, res.text).toBe(200);
      return res.body.id as string;
    };
    const ids = [
      // HTTP Basic: base64(urlencoded id : urlencoded secret) in the Authorization header.
      await create({
        name: 'echo basic',
        refresher_workflow_id: REFRESHER_IDS.oauth2_refresh_token,
        refresh_input: { token_url: tokens.url, client_id: ECHO_CLIENT },
        value: { client_secret: ECHO_SECRET, refresh_token: echoRefresh },
      }),
      // client_secret_post: form-encoded in the body.
      await create({
        name: 'echo post',
        refresher_workflow_id: REFRESHER_IDS.oauth2_client_credentials,
        refresh_input: { token_url: tokens.url, client_id: ECHO_CLIENT, auth_method: 'client_secret_post' },
        value: { client_secret: ECHO_SECRET },
      }),
      // An integration connection: the client secret comes from the catalog, the value does not hold it.
      await create({
        name: 'echo integration',
        refresher_workflow_id: INTEGRATION_REFRESHER_ID,
        refresh_input: { integration: 'echo' },
        value: { integration: 'echo', refresh_token: echoRefresh },
      }),
    ];
    tokens.mode = 'echo';
    const logsBefore = ctx.logs.length;
    const places: [string, string][] = [];
    try {
      for (const id of ids) {
        const requestsBefore = tokens.requests.length;
        const { started, result } = await refreshAndWait(a, id);
        expect(tokens.requests.length - requestsBefore).toBe(1);
        expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('Token endpoint answered 400 (invalid_request') });
        const row = (await call('GET', `/workflow/credentials/${id}`, a.session)).body;
        expect(row.last_refresh_error).toMatch(/^Token endpoint answered 400 \(invalid_request: Rejected /);
        places.push([`${id} last_refresh_error`, row.last_refresh_error]);
        places.push([`${id} workflow history`, await historyText(started.workflow_id, started.execution_id)]);
        const events = await ctx.deps
          .sql`SELECT payload FROM notification_outbox WHERE entity_id = ${id} AND event_type = 'credential.refresh_failed'`;
        expect(events).toHaveLength(1);
        places.push([`${id} notification payload`, JSON.stringify(events[0]!.payload)]);
      }
    } finally {
      tokens.mode = 'ok';
    }
    // The server did get the secrets, in the encodings the checks look for.
    const sent = tokens.requests
      .slice(-3)
      .map((r) => `${r.authorization ?? ''} ${new URLSearchParams(r.form).toString()}`)
      .join('\n');
    expect(sent).toContain(encodingsOf(ECHO_SECRET)[7]);
    expect(sent).toContain(encodingsOf(ECHO_SECRET)[2]);
    const logs = ctx.logs.slice(logsBefore).join('\n');
    expect(logs).toContain('credential refresh failed');
    places.push(['logs', logs]);
    for (const [place, text] of places) {
      for (const form of [...encodingsOf(ECHO_SECRET), ...encodingsOf(echoRefresh)])
        expect(text, `${place} carries ${form}`).not.toContain(form);
    }
  }, 60_000);
});

describe('secrecy', () => {
  it('no value appears in any response body or log line of this file', async () => {
    const everything = responses.join('\n');
    const logs = ctx.logs.join('\n');
    expect(ctx.logs.length).toBeGreaterThan(0);
    const secrets = [CLIENT_SECRET, TYPED_SECRET, ...tokens.issued, ...[...refreshTokens]];
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
