import * as accounts from '../db/accounts';
import type { AccountFields, AccountRow } from '../db/accounts';
import type { AccountIndustry } from '../domain/accounts';
import { invalid, notFound } from '../domain/errors';
import type { ServiceDeps } from './deps';

export function accountView(row: AccountRow) {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    industry: row.industry as AccountIndustry | null,
    website: row.website,
    description: row.description,
    owner_id: row.owner_id,
    employee_count: row.employee_count,
    health_score: row.health_score,
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const accountNotFound = () => notFound('Account not found');
const unique = (tags: string[]) => [...new Set(tags)];

export type AccountInput = { name: string } & Partial<Omit<AccountFields, 'name'>>;

export async function listAccounts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  page: { limit: number; offset: number; search?: string },
) {
  const rows = await accounts.listAccounts(deps.sql, orgId, page);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    industry: r.industry as AccountIndustry | null,
    health_score: r.health_score,
    domain: r.domain,
  }));
}

export async function createAccount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, input: AccountInput) {
  const row = await accounts.insertAccount(deps.sql, orgId, {
    name: input.name,
    domain: input.domain ?? null,
    industry: input.industry ?? null,
    website: input.website ?? null,
    description: input.description ?? null,
    owner_id: input.owner_id ?? null,
    employee_count: input.employee_count ?? null,
    tags: unique(input.tags ?? []),
  });
  return accountView(row);
}

export async function getAccount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string) {
  const row = await accounts.getAccount(deps.sql, orgId, accountId);
  if (!row) throw accountNotFound();
  return accountView(row);
}

/** Only the fields sent change; null clears. */
export async function updateAccount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string, body: Partial<AccountFields>) {
  if (Object.keys(body).length === 0) throw invalid('No fields to update');
  const patch = body.tags ? { ...body, tags: unique(body.tags) } : body;
  const row = await accounts.updateAccount(deps.sql, orgId, accountId, patch);
  if (!row) throw accountNotFound();
  return accountView(row);
}

export async function deleteAccount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string): Promise<void> {
  if (!(await accounts.deleteAccount(deps.sql, orgId, accountId))) throw accountNotFound();
}
