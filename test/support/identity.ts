import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestContext } from './context';

/** Identity-provider ids unique to one test, so files and tests never share an organization. */
export const externalId = (prefix: string) => `${prefix}_${crypto.randomBytes(6).toString('hex')}`;

export interface Tenant {
  org: string;
  user: string;
  /** A session of the tenant's user in the tenant's organization, with the given scopes. */
  session: string;
}

export async function newTenant(
  ctx: TestContext,
  scopes: string[] = ['api:read', 'api:manage', 'agents:manage', 'organizations:manage'],
): Promise<Tenant> {
  const org = externalId('org');
  const user = externalId('user');
  const session = await ctx.session({ sub: user, org_id: org, org_ids: [org], permissions: scopes });
  return { org, user, session };
}

export async function createOrgKey(ctx: TestContext, session: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await ctx.request('POST', '/organization-pats', { token: session, body: { name: 'test key', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.pat_key;
}

export async function createUserToken(ctx: TestContext, session: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await ctx.request('POST', '/user-pats', { token: session, body: { name: 'test token', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.token;
}

/** Our UUID of a tenant's organization, as GET /me shows it. */
export async function orgUuid(ctx: TestContext, tenant: { session: string }): Promise<string> {
  return (await ctx.request('GET', '/me', { token: tenant.session })).body.organization.id;
}
