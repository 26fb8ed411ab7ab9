import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AreaRoutes } from '../../api/app';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, createUserToken, externalId, newTenant } from '../support/identity';

// A read and a write route guarded exactly like the CRM's, to run the whole auth matrix against.
const guardedRoutes: AreaRoutes = (routes) => {
  routes.add({
    method: 'get',
    path: '/test/crm-read',
    tag: 'CRM',
    summary: 'read',
    auth: { scope: 'crmRead' },
    responses: { 200: { description: 'ok' } },
    handler: async ({ auth }) => ({ org: auth.orgExternalId }),
  });
  routes.add({
    method: 'post',
    path: '/test/crm-write',
    tag: 'CRM',
    summary: 'write',
    auth: { scope: 'crmManage' },
    responses: { 200: { description: 'ok' } },
    handler: async ({ auth }) => ({ org: auth.orgExternalId }),
  });
};

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ extraAreas: [guardedRoutes] });
});
afterAll(() => ctx?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('auth matrix: token kind × X-Service-Org × scope', () => {
  const scopeSets = { 'read-only': ['api:read'], manage: ['api:manage'], none: ['agents:read'] } as const;
  type ScopeName = keyof typeof scopeSets;
  type Kind = 'session' | 'ak_' | 'pat_';
  const tokens: Record<string, string> = {};
  let org = '';
  const otherOrg = externalId('org_unclaimed');

  beforeAll(async () => {
    org = externalId('org');
    for (const [name, scopes] of Object.entries(scopeSets)) {
      const session = await ctx.session({ sub: externalId('user'), org_id: org, org_ids: [org], permissions: [...scopes] });
      tokens[`session/${name}`] = session;
      // Keys are minted by a key admin, with exactly the scopes of the cell.
      const admin = await ctx.session({
        sub: externalId('admin'),
        org_id: org,
        org_ids: [org],
        permissions: [...scopes, 'organizations:manage'],
      });
      tokens[`ak_/${name}`] = await createOrgKey(ctx, admin, { scopes: [...scopes] });
      tokens[`pat_/${name}`] = await createUserToken(ctx, session);
    }
  });

  const scopeStatus = (scope: ScopeName, write: boolean) => (scope === 'manage' || (scope === 'read-only' && !write) ? 200 : 403);

  /** The spec's answer for one cell; [status, detail or undefined for 200]. */
  function expected(kind: Kind, header: 'absent' | 'right' | 'wrong', scope: ScopeName, write: boolean): [number, string?] {
    if (kind === 'ak_' && header !== 'absent') return [400, 'X-Service-Org is not accepted with an organization API key'];
    if (header === 'wrong') return [403, 'Organization not permitted for this token'];
    if (kind === 'pat_' && header === 'absent') return [400, 'Active organization required'];
    const status = scopeStatus(scope, write);
    return status === 200 ? [200] : [403, 'Insufficient permissions'];
  }

  const cells = (['session', 'ak_', 'pat_'] as Kind[]).flatMap((kind) =>
    (['absent', 'right', 'wrong'] as const).flatMap((header) =>
      (Object.keys(scopeSets) as ScopeName[]).flatMap((scope) => [false, true].map((write) => ({ kind, header, scope, write }))),
    ),
  );

  it.each(cells)('$kind, X-Service-Org $header, $scope scope, write=$write', async ({ kind, header, scope, write }) => {
    const headers: Record<string, string> = {};
    if (header === 'right') headers['X-Service-Org'] = org;
    if (header === 'wrong') headers['X-Service-Org'] = otherOrg;
    const res = await ctx.request(write ? 'POST' : 'GET', write ? '/test/crm-write' : '/test/crm-read', {
      token: tokens[`${kind}/${scope}`],
      headers,
    });
    const [status, detail] = expected(kind, header, scope, write);
    expect(res.status).toBe(status);
    if (detail) expect(res.body).toEqual({ detail });
    else expect(res.body).toEqual({ org });
  });

  // The same cells on real CRM endpoints: GET /tags (CRM read) and POST /tags (CRM manage).
  it.each(cells)('GET/POST /tags: $kind, X-Service-Org $header, $scope scope, write=$write', async ({ kind, header, scope, write }) => {
    const headers: Record<string, string> = {};
    if (header === 'right') headers['X-Service-Org'] = org;
    if (header === 'wrong') headers['X-Service-Org'] = otherOrg;
    const res = await ctx.request(write ? 'POST' : 'GET', '/tags', {
      token: tokens[`${kind}/${scope}`],
      headers,
      ...(write ? { body: { name: externalId('tag') } } : {}),
    });
    const [status, detail] = expected(kind, header, scope, write);
    expect(res.status).toBe(status);
    if (detail) expect(res.body).toEqual({ detail });
    else expect(res.body).toHaveProperty(write ? 'name' : 'tags');
  });
});

describe('bearer tokens that are refused with 401', () => {
  it.each([
    ['no header', undefined],
    ['not Bearer', 'Basic dXNlcjpwYXNz'],
    ['empty bearer', 'Bearer '],
    ['garbage JWT', 'Bearer not.a.jwt'],
    ['malformed ak_', 'Bearer ak_short.secret'],
    ['malformed pat_', 'Bearer pat_tooshort'],
    ['unknown ak_ key id', `Bearer ak_${'A'.repeat(16)}.${'b'.repeat(43)}`],
  ])('%s', async (_name, header) => {
    const res = await ctx.request('GET', '/me', { headers: header === undefined ? {} : { Authorization: header } });
    expect(res.status).toBe(401);
    expect(typeof res.body.detail).toBe('string');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('refuses an expired session', async () => {
    const token = await ctx.session({ sub: externalId('user'), org_id: externalId('org'), permissions: ['api:read'] }, -10);
    const res = await ctx.request('GET', '/me', { token });
    expect(res).toMatchObject({ status: 401, body: { detail: 'Token expired' } });
  });

  it('refuses a session signed by another key', async () => {
    const { generateKeyPair, SignJWT } = await import('jose');
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ org_id: 'o', permissions: ['api:manage'] })
      .setProtectedHeader({ alg: 'ES256' })
      .setSubject('intruder')
      .setIssuer('urn:voice-crm:dev-idp')
      .setAudience('voice-crm')
      .setExpirationTime('1h')
      .sign(privateKey);
    expect((await ctx.request('GET', '/me', { token: forged })).status).toBe(401);
  });

  it('refuses an ak_ key with the right id and a wrong secret', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    const wrong = `${key.slice(0, -4)}${key.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    expect((await ctx.request('GET', '/me', { token: wrong })).body).toEqual({ detail: 'Invalid API key' });
  });

  it('refuses an unknown key id without running Argon2', async () => {
    const before = ctx.deps.verifier.stats.secretVerifications;
    const res = await ctx.request('GET', '/me', { token: `ak_${'Z'.repeat(16)}.${'y'.repeat(43)}` });
    expect(res.status).toBe(401);
    const pat = await ctx.request('GET', '/me', { token: `pat_${'Z'.repeat(16)}${'y'.repeat(43)}` });
    expect(pat.status).toBe(401);
    expect(ctx.deps.verifier.stats.secretVerifications).toBe(before);
  });
});

describe('POST /organization-pats', () => {
  it('returns the row and the ak_ key once, storing only an Argon2id hash', async () => {
    const tenant = await newTenant(ctx, ['api:read', 'api:manage']);
    const res = await ctx.request('POST', '/organization-pats', { token: tenant.session, body: { name: 'ci' } });
    expect(res.status).toBe(200);
    expect(res.body.pat_key).toMatch(/^ak_[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(res.body).toMatchObject({
      name: 'ci',
      kind: 'organization',
      scopes: ['api:read', 'api:manage'],
      created_by: `user:${tenant.user}`,
      last_used_at: null,
      expires_at: null,
    });
    const secret = res.body.pat_key.split('.')[1];
    const [row] = await ctx.deps.sql`SELECT secret_hash FROM api_keys WHERE id = ${res.body.id}`;
    expect(row!.secret_hash).toMatch(/^\$argon2id\$/);
    expect(row!.secret_hash).not.toContain(secret);
  });

  it('accepts narrower scopes and refuses wider ones with 403', async () => {
    const tenant = await newTenant(ctx, ['api:manage']);
    const narrower = await ctx.request('POST', '/organization-pats', { token: tenant.session, body: { name: 'r', scopes: ['api:read'] } });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scopes).toEqual(['api:read']);
    const wider = await ctx.request('POST', '/organization-pats', {
      token: tenant.session,
      body: { name: 'w', scopes: ['agents:manage'] },
    });
    expect(wider).toMatchObject({ status: 403, body: { detail: 'Requested scopes exceed those of the session' } });
  });

  it('is an admin action: a read-only or CRM-manage session gets 403 on create and delete, and nothing is created', async () => {
    const org = externalId('org');
    const session = (permissions: string[]) => ctx.session({ sub: externalId('user'), org_id: org, org_ids: [org], permissions });
    const admin = await session(['api:read', 'organizations:manage']);
    const key = await createOrgKey(ctx, admin, { scopes: ['api:read'] });
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: admin })).body;
    for (const permissions of [['api:read'], ['api:read', 'organizations:read'], ['contacts:manage', 'deals:manage']]) {
      const caller = await session(permissions);
      const created = await ctx.request('POST', '/organization-pats', { token: caller, body: { name: 'sneaky', scopes: ['api:read'] } });
      expect(created, permissions.join(' ')).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
      expect(await ctx.request('DELETE', `/organization-pats/${id}`, { token: caller })).toMatchObject({
        status: 403,
        body: { detail: 'Insufficient permissions' },
      });
    }
    expect((await ctx.request('GET', '/organization-pats', { token: admin })).body.map((k: { name: string }) => k.name)).toEqual([
      'test key',
    ]);
    expect((await ctx.request('GET', '/me', { token: key })).status).toBe(200);
    // Either admin scope is enough, on its own.
    expect(
      (await ctx.request('POST', '/organization-pats', { token: await session(['api:manage']), body: { name: 'by api:manage' } })).status,
    ).toBe(200);
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: await session(['organizations:manage']) })).status).toBe(204);
  });

  it("caps a key at its creator: default scopes are the session's, a scope the session lacks is 403 and stores nothing", async () => {
    const tenant = await newTenant(ctx, ['organizations:manage', 'contacts:read']);
    const all = await ctx.request('POST', '/organization-pats', { token: tenant.session, body: { name: 'default' } });
    expect(all.body.scopes).toEqual(['organizations:manage', 'contacts:read']);
    // organizations:manage implies organizations:read, so that one may be asked for.
    const implied = await ctx.request('POST', '/organization-pats', {
      token: tenant.session,
      body: { name: 'implied', scopes: ['organizations:read'] },
    });
    expect(implied).toMatchObject({ status: 200, body: { scopes: ['organizations:read'] } });
    for (const scopes of [['api:manage'], ['contacts:read', 'contacts:manage'], ['service:operate']]) {
      const res = await ctx.request('POST', '/organization-pats', { token: tenant.session, body: { name: 'wider', scopes } });
      expect(res, scopes.join(' ')).toMatchObject({ status: 403, body: { detail: 'Requested scopes exceed those of the session' } });
    }
    const names = (await ctx.request('GET', '/organization-pats', { token: tenant.session })).body.map((k: { name: string }) => k.name);
    expect(names.sort()).toEqual(['default', 'implied']);
  });

  it('lists each key with its expiry', async () => {
    const tenant = await newTenant(ctx);
    const expiresAt = new Date(Date.now() + 86_400_000);
    const created = await ctx.request('POST', '/organization-pats', {
      token: tenant.session,
      body: { name: 'expiring', expires_at: expiresAt.toISOString() },
    });
    expect(created.status).toBe(200);
    expect(new Date(created.body.expires_at).getTime()).toBe(expiresAt.getTime());
    await createOrgKey(ctx, tenant.session, { name: 'forever' });
    const listed = (await ctx.request('GET', '/organization-pats', { token: tenant.session })).body as {
      name: string;
      expires_at: string | null;
    }[];
    expect(Object.fromEntries(listed.map((k) => [k.name, k.expires_at && new Date(k.expires_at).getTime()]))).toEqual({
      expiring: expiresAt.getTime(),
      forever: null,
    });
  });

  it('needs a session: an ak_ or pat_ caller gets 403', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    const res = await ctx.request('POST', '/organization-pats', { token: key, body: { name: 'x' } });
    expect(res).toMatchObject({ status: 403, body: { detail: 'This operation requires an identity-provider session' } });
  });

  it('validates the body (422) and refuses an expiry in the past', async () => {
    const tenant = await newTenant(ctx);
    const missing = await ctx.request('POST', '/organization-pats', { token: tenant.session, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'name'] });
    const past = await ctx.request('POST', '/organization-pats', {
      token: tenant.session,
      body: { name: 'x', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(422);
    expect(past.body.detail[0]).toMatchObject({ loc: ['body', 'expires_at'], msg: 'expires_at must be in the future' });
  });

  it('lists keys of the organization only, never with a secret, and records last use', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const key = await createOrgKey(ctx, a.session, { name: 'listed' });
    await createOrgKey(ctx, b.session, { name: 'other org' });
    await ctx.request('GET', '/me', { token: key });
    const res = await ctx.request('GET', '/organization-pats', { token: a.session });
    expect(res.status).toBe(200);
    expect(res.body.map((k: { name: string }) => k.name)).toEqual(['listed']);
    expect(res.body[0].last_used_at).not.toBeNull();
    expect(res.text).not.toContain(key.split('.')[1]);
    expect(res.body[0]).not.toHaveProperty('pat_key');
  });

  it('revokes with 204; another organization gets 404', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await createOrgKey(ctx, a.session);
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: a.session })).body;
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', '/organization-pats', { token: a.session })).body).toEqual([]);
  });

  it('lists and revokes keys only with a manage scope, never a read scope, for sessions too', async () => {
    const org = externalId('org');
    const admin = await ctx.session({ sub: externalId('user'), org_id: org, org_ids: [org], permissions: ['api:manage'] });
    const reader = await ctx.session({ sub: externalId('user'), org_id: org, org_ids: [org], permissions: ['api:read'] });
    const outsider = await ctx.session({ sub: externalId('user'), org_id: org, org_ids: [org], permissions: ['agents:read'] });
    await createOrgKey(ctx, admin);
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: admin })).body;
    expect(await ctx.request('GET', '/organization-pats', { token: reader })).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
    expect((await ctx.request('GET', '/organization-pats', { token: outsider })).status).toBe(403);
    expect(await ctx.request('DELETE', `/organization-pats/${id}`, { token: reader })).toMatchObject({
      status: 403,
      body: { detail: 'Insufficient permissions' },
    });
    expect((await ctx.request('DELETE', `/organization-pats/${id}`, { token: admin })).status).toBe(204);
  });

  it('lets an ak_ key with Org admin manage keys, but not one without', async () => {
    const tenant = await newTenant(ctx);
    const admin = await createOrgKey(ctx, tenant.session, { scopes: ['organizations:manage'] });
    const plain = await createOrgKey(ctx, tenant.session, { scopes: ['agents:manage'] });
    expect((await ctx.request('GET', '/organization-pats', { token: admin })).status).toBe(200);
    expect((await ctx.request('GET', '/organization-pats', { token: plain })).status).toBe(403);
  });
});

describe('revocation and expiry', () => {
  it('stops a revoked key at once in the process that revoked it', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    expect((await ctx.request('GET', '/me', { token: key })).status).toBe(200);
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: tenant.session })).body;
    await ctx.request('DELETE', `/organization-pats/${id}`, { token: tenant.session });
    expect(await ctx.request('GET', '/me', { token: key })).toMatchObject({ status: 401, body: { detail: 'API key revoked' } });
  });

  it('stops a key revoked elsewhere within the cache TTL at most', async () => {
    const short = await createTestContext({ env: { TOKEN_CACHE_TTL_SECONDS: '1' } });
    try {
      const tenant = await newTenant(short);
      const key = await createOrgKey(short, tenant.session);
      expect((await short.request('GET', '/me', { token: key })).status).toBe(200);
      // Another instance revokes: this process only learns of it when its cache entry expires.
      await short.deps.sql`UPDATE api_keys SET revoked_at = now() WHERE key_id = ${key.slice(3, 19)}`;
      expect((await short.request('GET', '/me', { token: key })).status).toBe(200);
      await sleep(1100);
      expect((await short.request('GET', '/me', { token: key })).status).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('stops an expired key at its expiry', async () => {
    const tenant = await newTenant(ctx);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const key = await createOrgKey(ctx, tenant.session, { expires_at: expiresAt });
    expect((await ctx.request('GET', '/me', { token: key })).status).toBe(200);
    await sleep(1700);
    const res = await ctx.request('GET', '/me', { token: key });
    expect(res.status).toBe(401);
    expect(['Token expired', 'API key expired']).toContain(res.body.detail);
  });

  it('runs Argon2id once per token per TTL', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    const before = ctx.deps.verifier.stats.secretVerifications;
    for (let i = 0; i < 10; i++) expect((await ctx.request('GET', '/me', { token: key })).status).toBe(200);
    expect(ctx.deps.verifier.stats.secretVerifications - before).toBe(1);
  });
});

describe('user tokens (pat_)', () => {
  it('are self-service, capped at the session: a read-only member makes a read-only token, never a wider one', async () => {
    const tenant = await newTenant(ctx, ['api:read']);
    const own = await ctx.request('POST', '/user-pats', { token: tenant.session, body: { name: 'mine' } });
    expect(own).toMatchObject({ status: 200, body: { scopes: ['api:read'] } });
    const wider = await ctx.request('POST', '/user-pats', { token: tenant.session, body: { name: 'wider', scopes: ['api:manage'] } });
    expect(wider).toMatchObject({ status: 403, body: { detail: 'Requested scopes exceed those of the session' } });
    expect((await ctx.request('POST', '/tags', { token: own.body.token, org: tenant.org, body: { name: 'no' } })).status).toBe(403);
    expect((await ctx.request('GET', '/user-pats', { token: tenant.session })).body.map((t: { name: string }) => t.name)).toEqual(['mine']);
  });

  it('stop at their expiry, which the list shows', async () => {
    const tenant = await newTenant(ctx);
    const expiresAt = new Date(Date.now() + 3000);
    const res = await ctx.request('POST', '/user-pats', {
      token: tenant.session,
      body: { name: 'short', expires_at: expiresAt.toISOString() },
    });
    expect(res.status).toBe(200);
    const listed = (await ctx.request('GET', '/user-pats', { token: tenant.session })).body;
    expect(new Date(listed[0].expires_at).getTime()).toBe(expiresAt.getTime());
    expect((await ctx.request('GET', '/me', { token: res.body.token, org: tenant.org })).status).toBe(200);
    await sleep(Math.max(0, expiresAt.getTime() - Date.now()) + 200);
    expect((await ctx.request('GET', '/me', { token: res.body.token, org: tenant.org })).status).toBe(401);
  });

  it('creates pat_<secret>, lists and revokes the user own tokens', async () => {
    const tenant = await newTenant(ctx);
    const res = await ctx.request('POST', '/user-pats', { token: tenant.session, body: { name: 'laptop' } });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^pat_[A-Za-z0-9_-]{59}$/);
    expect(res.body).toMatchObject({ kind: 'user', organization_id: null, name: 'laptop' });
    const pat = res.body.token;
    const list = await ctx.request('GET', '/user-pats', { token: pat, org: tenant.org });
    expect(list.body.map((t: { id: string }) => t.id)).toEqual([res.body.id]);
    expect(list.text).not.toContain(pat.slice(20));
    const stranger = await newTenant(ctx);
    expect((await ctx.request('DELETE', `/user-pats/${res.body.id}`, { token: stranger.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/user-pats/${res.body.id}`, { token: tenant.session })).status).toBe(204);
    expect((await ctx.request('GET', '/me', { token: pat, org: tenant.org })).status).toBe(401);
  });

  it('acts for any organization the user belongs to, chosen per request', async () => {
    const user = externalId('user');
    const [o1, o2] = [externalId('org'), externalId('org')];
    const session = await ctx.session({ sub: user, org_id: o1, org_ids: [o1, o2], permissions: ['api:read'] });
    const pat = await createUserToken(ctx, session);
    expect((await ctx.request('GET', '/me', { token: pat, org: o1 })).body.organization.external_id).toBe(o1);
    expect((await ctx.request('GET', '/me', { token: pat, org: o2 })).body.organization.external_id).toBe(o2);
    expect((await ctx.request('GET', '/me', { token: pat })).body.organization).toBeNull();
  });

  it('is limited in each organization to what its user holds there', async () => {
    const user = externalId('user');
    const [readOnlyOrg, managedOrg] = [externalId('org'), externalId('org')];
    // The user reads in one organization and manages in the other; the token comes from the latter.
    await ctx.request('GET', '/me', {
      token: await ctx.session({ sub: user, org_id: readOnlyOrg, org_ids: [readOnlyOrg, managedOrg], permissions: ['api:read'] }),
    });
    const managing = await ctx.session({
      sub: user,
      org_id: managedOrg,
      org_ids: [readOnlyOrg, managedOrg],
      permissions: ['api:read', 'api:manage'],
    });
    const pat = await createUserToken(ctx, managing);
    expect((await ctx.request('POST', '/tags', { token: pat, org: managedOrg, body: { name: 'ok' } })).status).toBe(200);
    const denied = await ctx.request('POST', '/tags', { token: pat, org: readOnlyOrg, body: { name: 'no' } });
    expect(denied).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
    expect((await ctx.request('GET', '/me', { token: pat, org: readOnlyOrg })).body.scopes).toEqual(['api:read']);
  });

  it('loses an organization the user has left', async () => {
    const short = await createTestContext({ env: { TOKEN_CACHE_TTL_SECONDS: '0' } });
    try {
      const user = externalId('user');
      const [kept, left] = [externalId('org'), externalId('org')];
      const before = await short.session({ sub: user, org_id: kept, org_ids: [kept, left], permissions: ['api:read'] });
      const pat = await createUserToken(short, before);
      expect((await short.request('GET', '/me', { token: pat, org: left })).status).toBe(200);
      // The provider's next session no longer lists the organization.
      await short.request('GET', '/me', {
        token: await short.session({ sub: user, org_id: kept, org_ids: [kept], permissions: ['api:read'] }),
      });
      expect((await short.request('GET', '/me', { token: pat, org: left })).status).toBe(403);
      expect((await short.request('GET', '/me', { token: pat, org: kept })).status).toBe(200);
    } finally {
      await short.close();
    }
  });

  it('is refused to an ak_ key', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    expect((await ctx.request('GET', '/user-pats', { token: key })).status).toBe(403);
  });
});

describe('POST /pat/exchange', () => {
  it('exchanges an ak_ key for a short-lived token carrying the organization and scopes', async () => {
    const tenant = await newTenant(ctx, ['api:read', 'organizations:manage']);
    const key = await createOrgKey(ctx, tenant.session, { scopes: ['api:read'] });
    const res = await ctx.request('POST', '/pat/exchange', { body: { token: key } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer' });
    expect(res.body.expires_in).toBeGreaterThan(0);
    expect(res.body.expires_in).toBeLessThanOrEqual(900);
    const me = await ctx.request('GET', '/me', { token: res.body.access_token });
    expect(me.body).toMatchObject({ token_kind: 'organization_key', scopes: ['api:read'], organization: { external_id: tenant.org } });
  });

  it('exchanges a pat_ token for one carrying the memberships', async () => {
    const tenant = await newTenant(ctx);
    const pat = await createUserToken(ctx, tenant.session);
    const { body } = await ctx.request('POST', '/pat/exchange', { body: { token: pat } });
    expect((await ctx.request('GET', '/me', { token: body.access_token, org: tenant.org })).body.organization.external_id).toBe(tenant.org);
    expect((await ctx.request('GET', '/me', { token: body.access_token, org: 'elsewhere' })).status).toBe(403);
  });

  it('refuses invalid and revoked tokens with 401, and a session JWT', async () => {
    const tenant = await newTenant(ctx);
    expect((await ctx.request('POST', '/pat/exchange', { body: { token: 'ak_nope' } })).status).toBe(401);
    expect((await ctx.request('POST', '/pat/exchange', { body: { token: tenant.session } })).status).toBe(401);
    const key = await createOrgKey(ctx, tenant.session);
    const { body } = await ctx.request('POST', '/pat/exchange', { body: { token: key } });
    const [{ id }] = (await ctx.request('GET', '/organization-pats', { token: tenant.session })).body;
    await ctx.request('DELETE', `/organization-pats/${id}`, { token: tenant.session });
    expect((await ctx.request('POST', '/pat/exchange', { body: { token: key } })).status).toBe(401);
    expect((await ctx.request('GET', '/me', { token: body.access_token })).status).toBe(401);
  });
});

describe('GET /me', () => {
  it('shows the user, the active organization, the token kind and scopes', async () => {
    const tenant = await newTenant(ctx, ['api:read', 'agents:read']);
    const res = await ctx.request('GET', '/me', { token: tenant.session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user: { external_id: tenant.user },
      organization: { external_id: tenant.org },
      token_kind: 'session',
      scopes: ['api:read', 'agents:read'],
    });
    expect(res.body.user.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('creates the organization and user on first sight, once', async () => {
    const tenant = await newTenant(ctx);
    await ctx.request('GET', '/me', { token: tenant.session });
    await ctx.request('GET', '/me', { token: await ctx.session({ sub: tenant.user, org_id: tenant.org, permissions: [] }) });
    const orgs = await ctx.deps.sql`SELECT id FROM organizations WHERE external_id = ${tenant.org}`;
    const users = await ctx.deps.sql`SELECT id FROM users WHERE external_id = ${tenant.user}`;
    expect(orgs.length).toBe(1);
    expect(users.length).toBe(1);
  });
});

describe('secrets', () => {
  it('never appear in logs', async () => {
    const tenant = await newTenant(ctx);
    const key = await createOrgKey(ctx, tenant.session);
    const pat = await createUserToken(ctx, tenant.session);
    await ctx.request('GET', '/me', { token: key });
    await ctx.request('GET', '/me', { token: pat, org: tenant.org });
    await ctx.request('POST', '/pat/exchange', { body: { token: key } });
    const all = ctx.logs.join('\n');
    expect(all).not.toContain(key.split('.')[1]);
    expect(all).not.toContain(pat.slice(20));
    expect(all).not.toContain(tenant.session);
  });
});
