import type { TestContext } from './context';
import { createOrgKey, newTenant, type Tenant } from './identity';

/** A tenant plus its organization's own uuid (tag rows and SQL fixtures use it). */
export interface CrmTenant extends Tenant {
  orgId: string;
}

export async function crmTenant(ctx: TestContext): Promise<CrmTenant> {
  const tenant = await newTenant(ctx);
  // The organization is created on first sight of its session.
  const me = await ctx.request('GET', '/me', { token: tenant.session });
  return { ...tenant, orgId: me.body.organization.id };
}

/** An ak_ key of the tenant's organization with CRM read only. */
export const readOnlyKey = (ctx: TestContext, tenant: Tenant) => createOrgKey(ctx, tenant.session, { scopes: ['api:read'] });

/** An account row written straight to the database, so contact tests need no accounts API. */
export async function insertAccount(ctx: TestContext, orgId: string, name = 'Acme'): Promise<string> {
  const [row] = await ctx.deps.sql<{ id: string }[]>`
    INSERT INTO accounts (id, org_id, name) VALUES (gen_random_uuid(), ${orgId}, ${name}) RETURNING id`;
  return row!.id;
}

export async function createContact(ctx: TestContext, tenant: Tenant, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/contacts', {
    token: tenant.session,
    body: { first_name: 'Ada', last_name: 'Lovelace', ...body },
  });
  if (res.status !== 200) throw new Error(`contact create failed: ${res.status} ${res.text}`);
  return res.body as Record<string, any>;
}

export const MISSING_ID = '0190c0de-0000-7000-8000-00000000beef';
