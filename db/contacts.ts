import type postgres from 'postgres';
import { type ContactField, NAMED_RULE, type ImportValues, type Stage } from '../domain/contacts';
import { notFound, unprocessable } from '../domain/errors';
import { PG, isPgError } from './pg-errors';
import { newId } from '../platform/core/ids';
import { containsPattern, type Db } from './client';
import { conflictOnUnique } from './kit/unique';
import { columnsOf, insertColumns, setColumns } from './kit/partial-update';

export interface ContactRow {
  id: string;
  org_id: string;
  account_id: string | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  title: string | null;
  department: string | null;
  phone: string | null;
  linkedin_url: string | null;
  company: string | null;
  company_domain: string | null;
  source: string | null;
  notes: string | null;
  owner_id: string | null;
  stage: Stage;
  stage_changed_at: Date | null;
  tags: string[];
  created_at: Date;
  updated_at: Date;
}

/** The columns a caller may write (stage and timestamps are the service's own). */
export type ContactValues = Partial<Pick<ContactRow, ContactField | 'email' | 'tags'>>;

export interface ContactFilters {
  search?: string;
  stage?: Stage;
  accountId?: string;
  tag?: string;
  ownerId?: string;
}

/**
 * Write failures only SQL sees, as domain outcomes: another contact with the email (409), an account
 * removed between the check and the write (404), a contact left without a name or email (422).
 */
function translate(error: unknown): never {
  conflictOnUnique(error, 'A contact with this email already exists');
  if (isPgError(error, PG.FOREIGN_KEY_VIOLATION)) throw notFound('Account not found');
  if (isPgError(error, PG.CHECK_VIOLATION) && (error as { constraint_name?: string }).constraint_name === 'contacts_named') {
    throw unprocessable([{ loc: ['body'], msg: NAMED_RULE }]);
  }
  throw error;
}

const CONTACT_COLUMNS = columnsOf<ContactValues>()([
  'account_id',
  'first_name',
  'last_name',
  'email',
  'title',
  'department',
  'phone',
  'linkedin_url',
  'company',
  'company_domain',
  'source',
  'notes',
  'owner_id',
  'tags',
]);

/** True when the account exists in the organization; `lock` keeps it from vanishing until commit. */
export async function accountInOrg(db: Db, orgId: string, accountId: string, lock = false): Promise<boolean> {
  const rows = lock
    ? await db`SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id = ${orgId} FOR KEY SHARE`
    : await db`SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id = ${orgId}`;
  return rows.length > 0;
}

/** The ids among `accountIds` that are accounts of the organization, locked until commit. */
export async function accountsInOrg(db: Db, orgId: string, accountIds: string[]): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`
    SELECT id FROM accounts WHERE org_id = ${orgId} AND id = ANY(${accountIds}::uuid[]) FOR KEY SHARE`;
  return new Set(rows.map((r) => r.id));
}

export async function insertContact(db: Db, orgId: string, values: ContactValues): Promise<ContactRow> {
  const row = { id: newId(), org_id: orgId, ...values };
  try {
    const [created] = await db<ContactRow[]>`
      INSERT INTO contacts ${insertColumns(db, row, ['id', 'org_id', ...CONTACT_COLUMNS])} RETURNING *`;
    return created!;
  } catch (error) {
    translate(error);
  }
}

export async function getContact(db: Db, orgId: string, id: string): Promise<ContactRow | undefined> {
  const [row]: [ContactRow?] = await db`SELECT * FROM contacts WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/** Sets exactly the given columns; undefined when the organization has no such contact. */
export async function updateContact(db: Db, orgId: string, id: string, values: ContactValues): Promise<ContactRow | undefined> {
  try {
    const [row]: [ContactRow?] = await db`
      UPDATE contacts SET ${setColumns(db, values, CONTACT_COLUMNS)}, updated_at = now()
      WHERE id = ${id} AND org_id = ${orgId} RETURNING *`;
    return row;
  } catch (error) {
    translate(error);
  }
}

export async function deleteContact(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM contacts WHERE id = ${id} AND org_id = ${orgId}`;
  return rows.count > 0;
}

/** `%term%` for ILIKE, with the term's own wildcards taken literally. */

function filterClause(db: Db, orgId: string, f: ContactFilters) {
  const conditions = [db`org_id = ${orgId}`];
  if (f.stage !== undefined) conditions.push(db`stage = ${f.stage}`);
  if (f.accountId !== undefined) conditions.push(db`account_id = ${f.accountId}`);
  if (f.ownerId !== undefined) conditions.push(db`owner_id = ${f.ownerId}`);
  if (f.tag !== undefined) conditions.push(db`tags @> ARRAY[${f.tag}]::text[]`);
  if (f.search !== undefined && f.search !== '') {
    const pattern = containsPattern(f.search);
    conditions.push(db`(
      concat_ws(' ', first_name, last_name) ILIKE ${pattern}
      OR email ILIKE ${pattern}
      OR company ILIKE ${pattern}
      OR company_domain ILIKE ${pattern})`);
  }
  return conditions.reduce((all, next) => db`${all} AND ${next}`);
}

/** One page, newest first, and the number of contacts matching the filters. */
export async function listContacts(
  db: Db,
  orgId: string,
  filters: ContactFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const where = filterClause(db, orgId, filters);
  // One statement, so the page and its total come from the same snapshot.
  const rows = await db<(ContactRow & { total_matches: number })[]>`
    SELECT *, (count(*) OVER ())::int AS total_matches FROM contacts WHERE ${where}
    ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
  if (rows.length === 0 && page.offset > 0) {
    // Past the end: the window had no row to carry the total.
    const [count] = await db<{ total: number }[]>`SELECT count(*)::int AS total FROM contacts WHERE ${where}`;
    return { rows: [], total: count!.total };
  }
  return { rows: rows.map(({ total_matches: _, ...row }) => row as ContactRow), total: rows[0]?.total_matches ?? 0 };
}

export type MoveResult = { row: ContactRow } | { current: string } | undefined;

/**
 * Moves the contact to `to` when its stage is one of `from`, in one statement so concurrent moves
 * cannot both pass the check. Otherwise answers its current stage, or undefined when there is none.
 */
export async function moveStage(db: Db, orgId: string, id: string, to: string, from: readonly string[]): Promise<MoveResult> {
  const [row]: [ContactRow?] = await db`
    UPDATE contacts SET stage = ${to}, stage_changed_at = now(), updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} AND stage = ANY(${from as string[]}::text[]) RETURNING *`;
  if (row) return { row };
  const [current]: [{ stage: string }?] = await db`SELECT stage FROM contacts WHERE id = ${id} AND org_id = ${orgId}`;
  return current && { current: current.stage };
}

/** A contact an import wrote, with its owner before the write (null for a new contact). */
export interface UpsertedContact {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  owner_id: string | null;
  previous_owner_id: string | null;
  inserted: boolean;
}

export interface UpsertResult {
  created: number;
  updated: number;
  contacts: UpsertedContact[];
}

/** Columns an import overwrites only with a non-null value, keeping the contact's own otherwise. */
const IMPORT_COALESCED = CONTACT_COLUMNS.filter((c): c is ContactField => c !== 'email' && c !== 'tags');

/**
 * Upserts rows by email (case-insensitive) in one statement: a new email creates a contact at stage
 * `new`; a known one gets each non-null value, keeping the rest (and its stage). Emails must be
 * distinct within `rows`.
 */
export async function upsertContactsByEmail(db: Db, orgId: string, rows: ImportValues[]): Promise<UpsertResult> {
  if (rows.length === 0) return { created: 0, updated: 0, contacts: [] };
  const records = rows.map((r, ord) => ({ ...r, id: newId(), ord }));
  // The owners before the write (locked, so they stay so until commit): owner changes are told apart.
  const before = await db<{ email_key: string; owner_id: string | null }[]>`
    SELECT lower(email) AS email_key, owner_id FROM contacts
    WHERE org_id = ${orgId} AND lower(email) IN (SELECT lower(e) FROM unnest(${rows.map((r) => r.email)}::text[]) AS e)
    FOR UPDATE`;
  const previous = new Map(before.map((b) => [b.email_key, b.owner_id]));
  const result = await db<(Omit<UpsertedContact, 'previous_owner_id'> & { email_key: string })[]>`
    INSERT INTO contacts (id, org_id, account_id, first_name, last_name, email, title, department, phone,
                          linkedin_url, company, company_domain, source, notes, owner_id, tags)
    SELECT r.id, ${orgId}, r.account_id, r.first_name, r.last_name, r.email, r.title, r.department, r.phone,
           r.linkedin_url, r.company, r.company_domain, r.source, r.notes, r.owner_id, coalesce(r.tags, '{}')
    FROM jsonb_to_recordset(${db.json(records as unknown as postgres.JSONValue)}) AS r(
      id uuid, ord int, account_id uuid, first_name text, last_name text, email text, title text, department text,
      phone text, linkedin_url text, company text, company_domain text, source text, notes text, owner_id text, tags text[])
    ORDER BY r.ord
    ON CONFLICT (org_id, lower(email)) WHERE email IS NOT NULL DO UPDATE SET
      ${IMPORT_COALESCED.map((c) => db`${db(c)} = coalesce(EXCLUDED.${db(c)}, contacts.${db(c)}),`)}
      -- An empty tags cell arrives as '{}' and keeps the contact's tags.
      tags = CASE WHEN cardinality(EXCLUDED.tags) > 0 THEN EXCLUDED.tags ELSE contacts.tags END,
      updated_at = now()
    RETURNING id, first_name, last_name, email, owner_id, lower(email) AS email_key, (xmax = 0) AS inserted`;
  const created = result.filter((r) => r.inserted).length;
  const contacts = result.map(({ email_key, ...r }) => ({
    ...r,
    previous_owner_id: r.inserted ? null : (previous.get(email_key) ?? null),
  }));
  return { created, updated: result.length - created, contacts };
}

/** True when the contact is in the organization; holds it against a concurrent delete inside a transaction. */
export async function lockContactRef(db: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await db`SELECT 1 FROM contacts WHERE id = ${id} AND org_id = ${orgId} FOR KEY SHARE`;
  return row !== undefined;
}
