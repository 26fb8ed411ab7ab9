import type { HealthFactors } from '../domain/accounts';
import { CLOSED_DEAL_STAGES } from '../domain/deals';
import { newId } from '../platform/core/ids';
import { containsPattern, type Db } from './client';
import { columnsOf, setColumns } from './kit/partial-update';

/** The pool or a transaction of it; every query here runs on either. */

export interface AccountRow {
  id: string;
  org_id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  website: string | null;
  description: string | null;
  owner_id: string | null;
  employee_count: number | null;
  health_score: number | null;
  tags: string[];
  created_at: Date;
  updated_at: Date;
}

export type AccountListRow = Pick<AccountRow, 'id' | 'name' | 'industry' | 'health_score' | 'domain'>;

export type AccountFields = Pick<
  AccountRow,
  'name' | 'domain' | 'industry' | 'website' | 'description' | 'owner_id' | 'employee_count' | 'tags'
>;

const ACCOUNT_COLUMNS = columnsOf<AccountFields>()([
  'name',
  'domain',
  'industry',
  'website',
  'description',
  'owner_id',
  'employee_count',
  'tags',
]);

/**
 * The spec's search term: parentheses removed, each comma replaced by a space (so "Acme, Inc"
 * searches for "acme  inc" with two spaces), nothing else touched.
 */
export const accountSearchTerm = (search: string) => search.replace(/[()]/g, '').replace(/,/g, ' ');

/**
 * One page of an organization's accounts by name (tie-break id). The search is a substring match on
 * lower(name) or lower(domain), which the trigram GIN indexes of 0002 serve.
 */
export function listAccounts(db: Db, orgId: string, page: { limit: number; offset: number; search?: string }) {
  const pattern = page.search === undefined ? undefined : containsPattern(accountSearchTerm(page.search));
  return db<AccountListRow[]>`
    SELECT id, name, industry, health_score, domain FROM accounts
    WHERE org_id = ${orgId}
    ${pattern === undefined ? db`` : db`AND (lower(name) LIKE lower(${pattern}) OR lower(domain) LIKE lower(${pattern}))`}
    ORDER BY name COLLATE "und-x-icu", id
    LIMIT ${page.limit} OFFSET ${page.offset}`;
}

export async function insertAccount(db: Db, orgId: string, fields: AccountFields): Promise<AccountRow> {
  const [row] = await db<AccountRow[]>`
    INSERT INTO accounts (id, org_id, name, domain, industry, website, description, owner_id, employee_count, tags)
    VALUES (${newId()}, ${orgId}, ${fields.name}, ${fields.domain}, ${fields.industry}, ${fields.website},
            ${fields.description}, ${fields.owner_id}, ${fields.employee_count}, ${fields.tags})
    RETURNING *`;
  return row!;
}

export async function getAccount(db: Db, orgId: string, id: string): Promise<AccountRow | undefined> {
  const [row]: [AccountRow?] = await db`SELECT * FROM accounts WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/** Sets exactly the given columns (keys come from a strict schema, never from the caller's names). */
export async function updateAccount(db: Db, orgId: string, id: string, patch: Partial<AccountFields>): Promise<AccountRow | undefined> {
  const [row]: [AccountRow?] = await db`
    UPDATE accounts SET ${setColumns(db, patch, ACCOUNT_COLUMNS)}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId}
    RETURNING *`;
  return row;
}

/** Contacts, deals, activities and files keep living with account_id null (ON DELETE SET NULL). */
export async function deleteAccount(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM accounts WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}

export async function accountExists(db: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await db`SELECT 1 FROM accounts WHERE id = ${id} AND org_id = ${orgId}`;
  return row !== undefined;
}

/**
 * True when the account is in the organization; inside a transaction it also holds the row against a
 * concurrent delete (FOR KEY SHARE) until the referencing insert or update commits.
 */
export async function lockAccountRef(db: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await db`SELECT 1 FROM accounts WHERE id = ${id} AND org_id = ${orgId} FOR KEY SHARE`;
  return row !== undefined;
}

// ---- health ----

export interface HealthSignals {
  /** The database's clock when the signals were read. */
  measured_at: Date;
  last_activity_at: Date | null;
  open_deals: number;
  contacts: number;
  engaged_contacts: number;
}

/**
 * What the health score is computed from, read under a lock on the account row (so two refreshes of
 * one account serialize); undefined when the account is gone.
 */
export async function loadHealthSignals(db: Db, orgId: string, accountId: string): Promise<HealthSignals | undefined> {
  const [account] = await db`SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id = ${orgId} FOR UPDATE`;
  if (!account) return undefined;
  const [row] = await db<HealthSignals[]>`
    SELECT
      now() AS measured_at,
      (SELECT max(effective_time) FROM activities
        WHERE org_id = ${orgId} AND account_id = ${accountId} AND effective_time <= now()) AS last_activity_at,
      (SELECT count(*)::int FROM deals
        WHERE org_id = ${orgId} AND account_id = ${accountId} AND stage <> ALL(${CLOSED_DEAL_STAGES as string[]})) AS open_deals,
      (SELECT count(*)::int FROM contacts WHERE org_id = ${orgId} AND account_id = ${accountId}) AS contacts,
      (SELECT count(DISTINCT a.contact_id)::int FROM activities a JOIN contacts c ON c.id = a.contact_id
        WHERE c.org_id = ${orgId} AND c.account_id = ${accountId} AND a.org_id = ${orgId}
          AND a.effective_time > now() - interval '90 days' AND a.effective_time <= now()) AS engaged_contacts`;
  return row!;
}

export interface HealthScoreRow {
  id: string;
  score: number;
  factors: HealthFactors;
  computed_at: Date;
}

/** Appends to the history and sets the account's denormalized copy, in the caller's transaction. */
export async function recordHealthScore(
  db: Db,
  orgId: string,
  accountId: string,
  score: number,
  factors: Record<string, unknown>,
): Promise<HealthScoreRow> {
  const [row] = await db<HealthScoreRow[]>`
    INSERT INTO account_health_scores (id, org_id, account_id, score, factors)
    VALUES (${newId()}, ${orgId}, ${accountId}, ${score}, ${db.json(factors as never)})
    RETURNING id, score, factors, computed_at`;
  await db`UPDATE accounts SET health_score = ${score} WHERE id = ${accountId} AND org_id = ${orgId}`;
  return row!;
}

/** An account's health history, newest first. */
export function healthHistory(db: Db, orgId: string, accountId: string, limit: number) {
  return db<HealthScoreRow[]>`
    SELECT id, score, factors, computed_at FROM account_health_scores
    WHERE org_id = ${orgId} AND account_id = ${accountId}
    ORDER BY computed_at DESC, id DESC
    LIMIT ${limit}`;
}
