import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, createUserToken, newTenant } from '../support/identity';

// Every declared route, read from the app itself, against the guards its auth rule promises: a route
// added later is covered without a test of its own. Guards run before any input is read, so paths
// carry placeholder ids and requests carry no body.
let ctx: TestContext;
let routes: ReturnType<typeof createApp>['routes'];
let patWithoutOrg: string;
let keyWithoutScopes: string;

beforeAll(async () => {
  ctx = await createTestContext();
  routes = createApp(ctx.deps).routes;
  const tenant = await newTenant(ctx, ['api:read', 'api:manage', 'agents:manage', 'organizations:manage', 'calendar:read']);
  patWithoutOrg = await createUserToken(ctx, tenant.session);
  keyWithoutScopes = await createOrgKey(ctx, tenant.session, { scopes: ['calendar:read'] }); // in no scope group
});
afterAll(() => ctx?.close());

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '01a1fca5-0000-7000-8000-000000000000');

describe('route guards', () => {
  it('every authenticated route refuses a request without a bearer token with 401', async () => {
    const guarded = routes.filter((r) => r.auth !== 'public');
    expect(guarded.length).toBeGreaterThan(40);
    for (const route of guarded) {
      const res = await ctx.request(route.method.toUpperCase(), concrete(route.path));
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
    }
  });

  it('every route that needs an organization answers a pat_ without X-Service-Org with 400 or 403', async () => {
    const needing = routes.filter((r) => r.auth !== 'public' && r.auth.org !== 'optional' && !r.auth.session);
    expect(needing.length).toBeGreaterThan(40);
    for (const route of needing) {
      const res = await ctx.request(route.method.toUpperCase(), concrete(route.path), { token: patWithoutOrg });
      const status = route.auth !== 'public' && route.auth.org === 'required-403' ? 403 : 400;
      expect(res, `${route.method} ${route.path}`).toMatchObject({ status, body: { detail: 'Active organization required' } });
    }
  });

  it('every route with a scope refuses a key without it with 403 Insufficient permissions', async () => {
    const scoped = routes.filter((r) => r.auth !== 'public' && r.auth.scope);
    expect(scoped.length).toBeGreaterThan(40);
    for (const route of scoped) {
      const res = await ctx.request(route.method.toUpperCase(), concrete(route.path), { token: keyWithoutScopes });
      // A session-only route (creating keys) refuses any ak_ key first for what it is.
      const detail =
        route.auth !== 'public' && route.auth.session ? 'This operation requires an identity-provider session' : 'Insufficient permissions';
      expect(res, `${route.method} ${route.path}`).toMatchObject({ status: 403, body: { detail } });
    }
  });
});
