import { ScheduleNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { startSimulatedOAuthProvider, type SimulatedProvider } from '../../dev-servers/simulated-oauth-provider';
import { readCredentialValue } from '../../services/credentials/values';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { walkConsent } from '../support/oauth-consent';

// The whole connect flow on the real stack, against a real OAuth 2.0 / OpenID Connect provider
// (oidc-provider) on loopback, configured as a deployment would configure one (INTEGRATION_PROVIDERS,
// a confidential client): consent, tokens into a workflow credential, refresh through the credentials
// area's workflow, invalid_grant, reconnect, revocation, replay of a used link, tenancy and scopes.

let ctx: TestContext;
let op: SimulatedProvider;
let a: Tenant;
let b: Tenant;
let readOnly: string;
let issuer: string;

const CLIENT = { client_id: 'acme-client', client_secret: 'acme-client-secret-value' };

beforeAll(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const catalog = [
    {
      key: 'acme',
      name: 'Acme Cloud',
      description: 'A third-party account',
      issuer,
      authorization_url: `${issuer}/auth`,
      token_url: `${issuer}/token`,
      revocation_url: `${issuer}/token/revocation`,
      userinfo_url: `${issuer}/me`,
      scopes: [
        { name: 'openid', description: 'Who you are' },
        { name: 'email', description: 'Your address' },
        { name: 'contacts.read', description: 'Read your contacts' },
      ],
      client_id: CLIENT.client_id,
      client_secret: CLIENT.client_secret,
    },
    {
      // The same server, with each organization bringing its own OAuth client (a workflow credential).
      key: 'acme-own',
      name: 'Acme Cloud (own client)',
      issuer,
      authorization_url: `${issuer}/auth`,
      token_url: `${issuer}/token`,
      userinfo_url: `${issuer}/me`,
      scopes: [{ name: 'openid', description: 'Who you are' }],
      client_source: 'organization',
    },
  ];
  ctx = await createTestContext({ worker: true, env: { INTEGRATION_PROVIDERS: JSON.stringify(catalog) } });
  op = await startSimulatedOAuthProvider({
    port,
    redirectUris: [],
    clients: [
      {
        ...CLIENT,
        redirect_uris: [`${ctx.baseUrl}/integrations/oauth/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  a = await newTenant(ctx);
  b = await newTenant(ctx);
  readOnly = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['api:read'] });
}, 120_000);

afterAll(async () => {
  await ctx?.close();
  await op?.close();
});

const success = () => `${ctx.baseUrl}/done`;
const failure = () => `${ctx.baseUrl}/failed`;

async function connectToken(tenant: Tenant, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/integrations/connect-tokens', {
    token: tenant.session,
    body: { allowed_integrations: ['acme'], success_url: success(), error_url: failure(), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { token: string; expires_at: string; connect_url: string };
}

async function connect(tenant: Tenant, options: { loginHint?: string; body?: Record<string, unknown> } = {}) {
  const minted = await connectToken(tenant, options.body);
  const walked = await walkConsent(minted.connect_url, 'acme', { loginHint: options.loginHint, serviceBase: ctx.baseUrl });
  expect(walked.status).toBe(302);
  expect(`${walked.final.origin}${walked.final.pathname}`, walked.final.href).toBe(success());
  return { minted, walked, connectionId: walked.final.searchParams.get('connection_id')! };
}

const getConnection = (tenant: Tenant, id: string) => ctx.request('GET', `/integrations/connections/${id}`, { token: tenant.session });

async function refreshAndWait(tenant: Tenant, credentialId: string, status: 'success' | 'failed') {
  const before = (await ctx.request('GET', `/workflow/credentials/${credentialId}`, { token: tenant.session })).body.last_refresh_at;
  const started = await ctx.request('POST', `/workflow/credentials/${credentialId}/refresh`, { token: tenant.session });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return waitFor(
    async () => {
      const res = await ctx.request('GET', `/workflow/credentials/${credentialId}`, { token: tenant.session });
      return res.body.last_refresh_at !== before && res.body.last_refresh_status === status ? res.body : undefined;
    },
    30_000,
    `refresh ${status}`,
  );
}

describe('catalog and connect tokens', () => {
  it('lists the configured integrations with what each scope grants, to CRM readers', async () => {
    const res = await ctx.request('GET', '/integrations', { token: readOnly });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({
        key: 'acme',
        name: 'Acme Cloud',
        simulated: false,
        client_source: 'config',
        supports_revocation: true,
        default_scopes: ['openid', 'email', 'contacts.read'],
        scopes: expect.arrayContaining([{ name: 'contacts.read', description: 'Read your contacts' }]),
      }),
      expect.objectContaining({ key: 'acme-own', client_source: 'organization', supports_revocation: false }),
    ]);
    expect(JSON.stringify(res.body)).not.toContain(CLIENT.client_secret);
  });

  it('mints a short-lived token with an unauthenticated connect_url; read-only callers may not', async () => {
    const minted = await connectToken(a);
    expect(minted.token).toMatch(/^ict_[A-Za-z0-9_-]{43}$/);
    expect(minted.connect_url).toBe(`${ctx.baseUrl}/integrations/connect/${minted.token}`);
    const ttl = new Date(minted.expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000);
    const denied = await ctx.request('POST', '/integrations/connect-tokens', {
      token: readOnly,
      body: { allowed_integrations: ['acme'], success_url: success(), error_url: failure() },
    });
    expect(denied).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
  });

  it('refuses unknown integrations and redirect URLs off the allowlist; the allowlist is per organization', async () => {
    const post = (tenant: Tenant, body: Record<string, unknown>) =>
      ctx.request('POST', '/integrations/connect-tokens', {
        token: tenant.session,
        body: { allowed_integrations: ['acme'], success_url: success(), error_url: failure(), ...body },
      });
    expect(await post(a, { allowed_integrations: ['nope'] })).toMatchObject({ status: 400, body: { detail: 'Unknown integration: nope' } });
    const off = await post(a, { success_url: 'https://app.example.com/ok' });
    expect(off.status).toBe(400);
    expect(off.body.detail).toContain('success_url must be on an allowed origin');
    expect((await ctx.request('GET', '/integrations/settings', { token: a.session })).body.allowed_redirect_origins).toEqual([ctx.baseUrl]);

    const put = await ctx.request('PUT', '/integrations/settings', {
      token: b.session,
      body: { allowed_redirect_origins: ['https://app.example.com/ignored/path', ctx.baseUrl] },
    });
    expect(put.body.allowed_redirect_origins).toEqual(['https://app.example.com', ctx.baseUrl]);
    expect((await post(b, { success_url: 'https://app.example.com/ok' })).status).toBe(200);
    expect((await post(a, { success_url: 'https://app.example.com/ok' })).status).toBe(400);
    expect((await ctx.request('PUT', '/integrations/settings', { token: readOnly, body: { allowed_redirect_origins: [] } })).status).toBe(
      403,
    );
    expect((await post(a, { connection_id: '0190f5a0-0000-7000-8000-00000000dead' })).status).toBe(404);
  });

  it('answers an unknown or expired link with an error page, never a stack trace', async () => {
    const unknown = await fetch(`${ctx.baseUrl}/integrations/connect/ict_${'x'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('text/html');
    expect(await unknown.text()).toContain('Link not valid');
    const minted = await connectToken(a);
    await ctx.deps
      .sql`UPDATE integration_connect_tokens SET expires_at = now() - interval '1 second' WHERE org_id = ${await orgUuid(ctx, a)}
      AND created_at = (SELECT max(created_at) FROM integration_connect_tokens WHERE org_id = ${await orgUuid(ctx, a)})`;
    const expired = await fetch(minted.connect_url);
    expect(expired.status).toBe(410);
    const page = await expired.text();
    expect(page).toContain('Link expired');
    expect(page).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('the connect flow', () => {
  let connectionId: string;
  let credentialId: string;

  it('shows the connect page, runs the consent and stores the connection with its tokens in a credential', async () => {
    const minted = await connectToken(a, { end_user_id: 'end-user-7' });
    const page = await fetch(minted.connect_url);
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toContain('Connect Acme Cloud');

    const walked = await walkConsent(minted.connect_url, 'acme', { loginHint: 'alice', serviceBase: ctx.baseUrl });
    expect(walked.final.pathname).toBe('/done');
    connectionId = walked.final.searchParams.get('connection_id')!;
    expect(walked.final.searchParams.get('integration')).toBe('acme');

    const res = await getConnection(a, connectionId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: connectionId,
      integration: 'acme',
      provider: { key: 'acme', name: 'Acme Cloud', simulated: false },
      status: 'active',
      external_account_id: 'alice',
      external_account_label: 'alice@simulated.invalid',
      granted_scopes: ['contacts.read', 'email', 'openid'],
      end_user_id: 'end-user-7',
      connected_by: `user:${a.user}`,
      revoked_at: null,
    });
    credentialId = res.body.credential_id;
    const credential = await ctx.request('GET', `/workflow/credentials/${credentialId}`, { token: a.session });
    expect(credential.body).toMatchObject({
      has_value: true,
      refresh_policy: { type: 'before_expiry', lead_seconds: 300 },
      temporal_schedule_id: `credential-refresh:${credentialId}`,
    });
    expect(credential.body.value_keys).toEqual(expect.arrayContaining(['access_token', 'refresh_token', 'integration']));
    // Write-only: no answer or log line carries a token.
    const value = (await readCredentialValue(ctx.deps, await orgUuid(ctx, a), credentialId))!;
    const secrets = [value.access_token, value.refresh_token, CLIENT.client_secret] as string[];
    for (const body of [JSON.stringify(res.body), JSON.stringify(credential.body), ctx.logs.join('\n')])
      for (const s of secrets) expect(body).not.toContain(s);
  });

  it('refuses the replay of a used connect link, its authorize step and its callback', async () => {
    const { minted, walked } = await connect(a, { loginHint: 'carol' });
    const again = await fetch(minted.connect_url);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('already been used');
    expect((await fetch(`${minted.connect_url}/authorize?integration=acme`, { redirect: 'manual' })).status).toBe(410);
    const replay = await fetch(walked.callback, { redirect: 'manual' });
    expect(replay.status).toBe(410);
    expect((await fetch(`${ctx.baseUrl}/integrations/oauth/callback?state=forged&code=x`, { redirect: 'manual' })).status).toBe(404);
  });

  it('refreshes the tokens through the credentials workflow', async () => {
    const before = (await readCredentialValue(ctx.deps, await orgUuid(ctx, a), credentialId))!.access_token;
    await refreshAndWait(a, credentialId, 'success');
    const after = (await readCredentialValue(ctx.deps, await orgUuid(ctx, a), credentialId))!.access_token;
    expect(after).not.toBe(before);
    const res = await getConnection(a, connectionId);
    expect(res.body).toMatchObject({ status: 'active', last_refresh_status: 'success', last_refresh_error: null });
    expect(res.body.last_refresh_at).not.toBeNull();
  });

  it('moves the connection to needs_reconnect on invalid_grant, emits the event and pauses the schedule', async () => {
    const orgId = await orgUuid(ctx, a);
    const value = (await readCredentialValue(ctx.deps, orgId, credentialId))!;
    // The provider forgets the grant (as when the user removes the app on the provider's side).
    const revoked = await fetch(`${issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: String(value.refresh_token), token_type_hint: 'refresh_token' }),
    });
    expect(revoked.status).toBe(200);
    const credential = await refreshAndWait(a, credentialId, 'failed');
    expect(credential.last_refresh_error).toContain('invalid_grant');
    expect(credential.refresh_policy).toMatchObject({ type: 'before_expiry', paused: true });
    const schedule = await ctx.deps.temporal.schedule.getHandle(`credential-refresh:${credentialId}`).describe();
    expect(schedule.state.paused).toBe(true);

    const res = await getConnection(a, connectionId);
    expect(res.body).toMatchObject({ status: 'needs_reconnect', last_refresh_status: 'failed' });
    expect(res.body.last_refresh_error).toContain('invalid_grant');
    const events = await ctx.deps.sql<{ entity_id: string; payload: Record<string, unknown>; recipient_user_ids: string[] }[]>`
      SELECT entity_id, payload, recipient_user_ids FROM notification_outbox WHERE org_id = ${orgId} AND event_type = 'integration.needs_reconnect'`;
    expect(events).toEqual([
      expect.objectContaining({
        entity_id: connectionId,
        payload: expect.objectContaining({ integration: 'acme', connection_id: connectionId }),
      }),
    ]);
    // The connection's creator is told without subscribing first.
    const [creator] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${a.user}`;
    expect(events[0]!.recipient_user_ids).toEqual([creator!.id]);
  });

  it('reconnects onto the same connection id, active again and refreshing', async () => {
    const { connectionId: again } = await connect(a, { loginHint: 'alice', body: { connection_id: connectionId } });
    expect(again).toBe(connectionId);
    const res = await getConnection(a, connectionId);
    expect(res.body).toMatchObject({
      status: 'active',
      status_reason: null,
      credential_id: credentialId,
      last_refresh_status: null,
      last_refresh_error: null,
    });
    const schedule = await ctx.deps.temporal.schedule.getHandle(`credential-refresh:${credentialId}`).describe();
    expect(schedule.state.paused).toBe(false);
    await refreshAndWait(a, credentialId, 'success');
    // A reconnect with another account is refused: the browser goes to error_url.
    const minted = await connectToken(a, { connection_id: connectionId });
    const walked = await walkConsent(minted.connect_url, 'acme', { loginHint: 'mallory', serviceBase: ctx.baseUrl });
    expect(walked.final.pathname).toBe('/failed');
    expect(walked.final.searchParams.get('error')).toBe('account_mismatch');
  });

  it('keeps several accounts of one provider, once each', async () => {
    const { connectionId: bob } = await connect(a, { loginHint: 'bob' });
    expect(bob).not.toBe(connectionId);
    const { connectionId: bobAgain } = await connect(a, { loginHint: 'bob' });
    expect(bobAgain).toBe(bob);
    const list = await ctx.request('GET', '/integrations/connections?status=active', { token: readOnly });
    expect(list.status).toBe(200);
    const labels = list.body.data.map((c: { external_account_id: string }) => c.external_account_id);
    expect(labels.filter((l: string) => l === 'bob')).toHaveLength(1);
    expect(labels).toEqual(expect.arrayContaining(['alice', 'bob', 'carol']));
    const forEndUser = await ctx.request('GET', '/integrations/connections?end_user_id=end-user-7&integration=acme', { token: a.session });
    expect(forEndUser.body.data.map((c: { id: string }) => c.id)).toEqual([connectionId]);
    expect((await ctx.request('GET', '/integrations/connections?status=gone', { token: a.session })).status).toBe(400);
    const page = await ctx.request('GET', '/integrations/connections?limit=1', { token: a.session });
    expect(page.body.data).toHaveLength(1);
    const next = await ctx.request('GET', `/integrations/connections?limit=1&cursor=${page.body.next_cursor}`, { token: a.session });
    expect(next.body.data[0].id).not.toBe(page.body.data[0].id);
  });

  it('sends a denied consent to error_url with access_denied', async () => {
    const minted = await connectToken(a);
    const walked = await walkConsent(minted.connect_url, 'acme', { loginHint: 'dave', deny: true, serviceBase: ctx.baseUrl });
    expect(walked.final.pathname).toBe('/failed');
    expect(walked.final.searchParams.get('error')).toBe('access_denied');
  });

  it("keeps another organization's connection out of reach (404) and writes to CRM managers", async () => {
    expect((await getConnection(b, connectionId)).status).toBe(404);
    expect((await ctx.request('DELETE', `/integrations/connections/${connectionId}`, { token: b.session })).status).toBe(404);
    const list = await ctx.request('GET', '/integrations/connections', { token: b.session });
    expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(connectionId);
    const foreign = await ctx.request('POST', '/integrations/connect-tokens', {
      token: b.session,
      body: { allowed_integrations: ['acme'], success_url: success(), error_url: failure(), connection_id: connectionId },
    });
    expect(foreign.status).toBe(404);
    expect((await getConnection(b, connectionId)).body).toEqual({ detail: 'Connection not found' });
    expect((await ctx.request('GET', `/integrations/connections/${connectionId}`, { token: readOnly })).status).toBe(200);
    expect((await ctx.request('DELETE', `/integrations/connections/${connectionId}`, { token: readOnly })).status).toBe(403);
  });

  it('revokes at the provider on delete, deletes the credential and its schedule, and keeps the connection as revoked', async () => {
    const orgId = await orgUuid(ctx, a);
    const value = (await readCredentialValue(ctx.deps, orgId, credentialId))!;
    const revocationsBefore = op.requests.filter((r) => r.path === '/token/revocation').length;
    const res = await ctx.request('DELETE', `/integrations/connections/${connectionId}`, { token: a.session });
    expect(res.status).toBe(204);
    expect(op.requests.filter((r) => r.path === '/token/revocation').length).toBe(revocationsBefore + 2);
    // The provider no longer honours the refresh token.
    const grant = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(value.refresh_token) }),
    });
    expect(grant.status).toBe(400);
    expect(((await grant.json()) as { error: string }).error).toBe('invalid_grant');

    const after = await getConnection(a, connectionId);
    expect(after.body).toMatchObject({ status: 'revoked', credential_id: null, status_reason: 'Revoked at the provider' });
    expect(after.body.revoked_at).not.toBeNull();
    expect((await ctx.request('GET', `/workflow/credentials/${credentialId}`, { token: a.session })).status).toBe(404);
    await expect(ctx.deps.temporal.schedule.getHandle(`credential-refresh:${credentialId}`).describe()).rejects.toBeInstanceOf(
      ScheduleNotFoundError,
    );
    expect((await ctx.request('DELETE', `/integrations/connections/${connectionId}`, { token: a.session })).status).toBe(204);
    const revokedList = await ctx.request('GET', '/integrations/connections?status=revoked', { token: a.session });
    expect(revokedList.body.data.map((c: { id: string }) => c.id)).toEqual([connectionId]);
  });
});

describe("an organization's own OAuth client", () => {
  it('needs the workflow credential integration-client:<key>, then connects and refreshes with it', async () => {
    const tenant = await newTenant(ctx);
    const body = { allowed_integrations: ['acme-own'], success_url: success(), error_url: failure() };
    const missing = await ctx.request('POST', '/integrations/connect-tokens', { token: tenant.session, body });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain('integration-client:acme-own');

    const client = await ctx.request('POST', '/workflow/credentials', {
      token: tenant.session,
      body: { name: 'integration-client:acme-own', value: { client_id: CLIENT.client_id, client_secret: CLIENT.client_secret } },
    });
    expect(client.status, JSON.stringify(client.body)).toBe(200);
    const minted = await ctx.request('POST', '/integrations/connect-tokens', { token: tenant.session, body });
    expect(minted.status).toBe(200);
    const walked = await walkConsent(minted.body.connect_url, 'acme-own', { loginHint: 'erin', serviceBase: ctx.baseUrl });
    expect(walked.final.pathname).toBe('/done');
    const connection = await getConnection(tenant, walked.final.searchParams.get('connection_id')!);
    expect(connection.body).toMatchObject({
      status: 'active',
      integration: 'acme-own',
      external_account_id: 'erin',
      granted_scopes: ['openid'],
    });
    await refreshAndWait(tenant, connection.body.credential_id, 'success');
    // Without a revocation endpoint, a delete still ends the connection here.
    expect((await ctx.request('DELETE', `/integrations/connections/${connection.body.id}`, { token: tenant.session })).status).toBe(204);
    expect((await getConnection(tenant, connection.body.id)).body).toMatchObject({
      status: 'revoked',
      status_reason: 'Revoked here; the provider has no revocation endpoint',
    });
  });
});
