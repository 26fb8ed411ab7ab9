import { newId } from '../platform/core/ids';
import type { Direction } from '../domain/agents';
import { conflict } from '../domain/errors';
import { PG, isPgError } from './pg-errors';
import type { Db } from './client';

export type { Direction };

export interface PhoneNumberRow {
  id: string;
  org_id: string;
  number: string;
  label: string | null;
  inbound_agent_id: string | null;
  outbound_agent_id: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertPhoneNumber(
  db: Db,
  orgId: string,
  number: string,
  label: string | null,
  actor: string,
): Promise<PhoneNumberRow> {
  try {
    const [row] = await db<PhoneNumberRow[]>`
      INSERT INTO phone_numbers (id, org_id, number, label, created_by) VALUES (${newId()}, ${orgId}, ${number}, ${label}, ${actor})
      RETURNING *`;
    return row!;
  } catch (error) {
    if (isPgError(error, PG.UNIQUE_VIOLATION)) throw conflict(`Phone number already registered: ${number}`);
    throw error;
  }
}

export interface PhoneNumberFilters {
  agent_id?: string;
  available?: boolean;
}

/** One page of the inventory in number order, after the cursor's number; and the total matching. */
export async function listPhoneNumbers(
  db: Db,
  orgId: string,
  filters: PhoneNumberFilters,
  page: { limit: number; afterNumber?: string },
): Promise<{ rows: PhoneNumberRow[]; total: number }> {
  const where = [db`org_id = ${orgId}`];
  if (filters.agent_id) where.push(db`(inbound_agent_id = ${filters.agent_id} OR outbound_agent_id = ${filters.agent_id})`);
  if (filters.available === true) where.push(db`inbound_agent_id IS NULL AND outbound_agent_id IS NULL`);
  if (filters.available === false) where.push(db`(inbound_agent_id IS NOT NULL OR outbound_agent_id IS NOT NULL)`);
  const matching = where.reduce((acc, cond) => db`${acc} AND ${cond}`);
  const after = page.afterNumber !== undefined ? db`AND number > ${page.afterNumber}` : db``;
  const rows = await db<PhoneNumberRow[]>`
    SELECT * FROM phone_numbers WHERE ${matching} ${after} ORDER BY number LIMIT ${page.limit + 1}`;
  const [count] = await db<{ total: number }[]>`SELECT count(*)::int AS total FROM phone_numbers WHERE ${matching}`;
  return { rows, total: count!.total };
}

export async function deletePhoneNumber(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM phone_numbers WHERE org_id = ${orgId} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

/** The organization's rows for these numbers, locked for the rest of the transaction. */
export async function lockNumbers(db: Db, orgId: string, numbers: string[]): Promise<PhoneNumberRow[]> {
  if (numbers.length === 0) return [];
  return db<PhoneNumberRow[]>`
    SELECT * FROM phone_numbers WHERE org_id = ${orgId} AND number = ANY(${numbers}::text[]) ORDER BY number FOR UPDATE`;
}

export async function setHolder(db: Db, id: string, direction: Direction, agentId: string | null): Promise<void> {
  if (direction === 'inbound') await db`UPDATE phone_numbers SET inbound_agent_id = ${agentId}, updated_at = now() WHERE id = ${id}`;
  else await db`UPDATE phone_numbers SET outbound_agent_id = ${agentId}, updated_at = now() WHERE id = ${id}`;
}

export async function numbersOfAgent(db: Db, orgId: string, agentId: string): Promise<PhoneNumberRow[]> {
  return db<PhoneNumberRow[]>`
    SELECT * FROM phone_numbers WHERE org_id = ${orgId} AND (inbound_agent_id = ${agentId} OR outbound_agent_id = ${agentId})
    ORDER BY number`;
}

/** Gives the agent, for inbound calls, the first number that serves nobody; undefined when none is free. */
export async function claimFreeNumber(db: Db, orgId: string, agentId: string): Promise<PhoneNumberRow | undefined> {
  const [row]: [PhoneNumberRow?] = await db`
    UPDATE phone_numbers SET inbound_agent_id = ${agentId}, updated_at = now()
    WHERE id = (
      SELECT id FROM phone_numbers WHERE org_id = ${orgId} AND inbound_agent_id IS NULL AND outbound_agent_id IS NULL
      ORDER BY number LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING *`;
  return row;
}
