import { isClosedStage, type DealStage } from '../domain/deals';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { columnsOf, setColumns } from './kit/partial-update';

export interface DealRow {
  id: string;
  org_id: string;
  account_id: string | null;
  contact_id: string | null;
  name: string;
  stage: DealStage;
  /** numeric(16, 2) arrives as a string. */
  value: string | null;
  currency: string | null;
  owner_id: string | null;
  /** Selected as text (YYYY-MM-DD), so no time zone shifts it. */
  close_date: string | null;
  tags: string[];
  closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DealFields {
  name: string;
  stage: DealStage;
  value: number | null;
  currency: string | null;
  owner_id: string | null;
  account_id: string | null;
  contact_id: string | null;
  close_date: string | null;
  tags: string[];
}

const DEAL_COLUMNS = columnsOf<DealFields>()([
  'name',
  'stage',
  'value',
  'currency',
  'owner_id',
  'account_id',
  'contact_id',
  'close_date',
  'tags',
]);

// close_date as YYYY-MM-DD; a day stored outside the years 0001 to 9999 (BC, infinity) shows as the nearest inside.
const COLUMNS = (db: Db) => db`
  id, org_id, account_id, contact_id, name, stage, value, currency, owner_id,
  to_char(least(greatest(close_date, '0001-01-01'::date), '9999-12-31'::date), 'YYYY-MM-DD') AS close_date,
  tags, closed_at, created_at, updated_at`;

export async function insertDeal(db: Db, orgId: string, f: DealFields): Promise<DealRow> {
  const [row] = await db<DealRow[]>`
    INSERT INTO deals (id, org_id, account_id, contact_id, name, stage, value, currency, owner_id, close_date, tags, closed_at)
    VALUES (${newId()}, ${orgId}, ${f.account_id}, ${f.contact_id}, ${f.name}, ${f.stage}, ${f.value}, ${f.currency},
            ${f.owner_id}, ${f.close_date}, ${f.tags}, ${isClosedStage(f.stage) ? db`now()` : null})
    RETURNING ${COLUMNS(db)}`;
  return row!;
}

export async function getDeal(db: Db, orgId: string, id: string): Promise<DealRow | undefined> {
  const [row]: [DealRow?] = await db`SELECT ${COLUMNS(db)} FROM deals WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/**
 * Sets exactly the given columns. A stage change into closed_won/closed_lost stamps closed_at, a move
 * back to an open stage clears it, and an unchanged stage leaves it alone.
 */
export async function updateDeal(db: Db, orgId: string, id: string, patch: Partial<DealFields>): Promise<DealRow | undefined> {
  const closedAt =
    patch.stage === undefined
      ? db`closed_at`
      : isClosedStage(patch.stage)
        ? db`CASE WHEN stage = ${patch.stage} THEN closed_at ELSE now() END`
        : db`NULL`;
  const [row]: [DealRow?] = await db`
    UPDATE deals SET ${setColumns(db, patch, DEAL_COLUMNS)}, closed_at = ${closedAt}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId}
    RETURNING ${COLUMNS(db)}`;
  return row;
}

export async function deleteDeal(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM deals WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}

/** Newest first (created_at desc, tie-break id desc), optionally filtered. */
export function listDeals(
  db: Db,
  orgId: string,
  q: { stage?: DealStage; account_id?: string; owner_id?: string; limit: number; offset: number },
) {
  return db<DealRow[]>`
    SELECT ${COLUMNS(db)} FROM deals
    WHERE org_id = ${orgId}
    ${q.stage === undefined ? db`` : db`AND stage = ${q.stage}`}
    ${q.account_id === undefined ? db`` : db`AND account_id = ${q.account_id}`}
    ${q.owner_id === undefined ? db`` : db`AND owner_id = ${q.owner_id}`}
    ORDER BY created_at DESC, id DESC
    LIMIT ${q.limit} OFFSET ${q.offset}`;
}

/** The deal's id and account, holding the row against a concurrent delete inside a transaction. */
export async function lockDealRef(db: Db, orgId: string, id: string): Promise<{ id: string; account_id: string | null } | undefined> {
  const [row]: [{ id: string; account_id: string | null }?] =
    await db`SELECT id, account_id FROM deals WHERE id = ${id} AND org_id = ${orgId} FOR KEY SHARE`;
  return row;
}
