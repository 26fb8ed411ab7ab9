import { newId } from '../platform/core/ids';
import type { Direction } from '../domain/agents';
import type { Db } from './client';
import { onUnique } from './kit/unique';

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
  /** Set when the number was imported from the telephony provider. */
  provider: string | null;
  provider_number_id: string | null;
}

export async function insertPhoneNumber(
  db: Db,
  orgId: string,
  number: string,
  label: string | null,
  actor: string,
): Promise<PhoneNumberRow> {
  const [row] = await onUnique(
    db<PhoneNumberRow[]>`
      INSERT INTO phone_numbers (id, org_id, number, label, created_by) VALUES (${newId()}, ${orgId}, ${number}, ${label}, ${actor})
      RETURNING *`,
    `Phone number already registered: ${number}`,
  );
  return row!;
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

export type ImportResult = 'imported' | 'updated' | 'unchanged';

/**
 * Upserts the provider's numbers into the organization's inventory, by number, in one transaction: a new
 * number is inserted; one already there is linked to the provider's id (and given the provider's label
 * when it has none), or left as it is when it already is. Other organizations' rows are never touched.
 */
export async function importPhoneNumbers(
  db: Db,
  orgId: string,
  provider: string,
  numbers: { number: string; provider_number_id: string; label: string | null }[],
  actor: string,
): Promise<{ row: PhoneNumberRow; result: ImportResult }[]> {
  if (numbers.length === 0) return [];
  const ids = numbers.map(() => newId());
  // New numbers first (a concurrent import's rows are skipped), then every row of these numbers, locked.
  const inserted = await db<{ number: string }[]>`
    INSERT INTO phone_numbers (id, org_id, number, label, created_by, provider, provider_number_id)
    SELECT id, ${orgId}, number, label, ${actor}, ${provider}, provider_number_id
    FROM unnest(${ids}::uuid[], ${numbers.map((n) => n.number)}::text[], ${numbers.map((n) => n.label)}::text[],
                ${numbers.map((n) => n.provider_number_id)}::text[]) AS t(id, number, label, provider_number_id)
    ON CONFLICT (org_id, number) DO NOTHING
    RETURNING number`;
  const fresh = new Set(inserted.map((r) => r.number));
  const out: { row: PhoneNumberRow; result: ImportResult }[] = [];
  const rows = new Map(
    (
      await lockNumbers(
        db,
        orgId,
        numbers.map((n) => n.number),
      )
    ).map((r) => [r.number, r]),
  );
  for (const n of numbers) {
    const row = rows.get(n.number);
    if (!row) continue;
    if (fresh.has(n.number)) {
      out.push({ row, result: 'imported' });
      continue;
    }
    const label = row.label ?? n.label;
    if (row.provider === provider && row.provider_number_id === n.provider_number_id && row.label === label) {
      out.push({ row, result: 'unchanged' });
      continue;
    }
    const [updated] = await db<PhoneNumberRow[]>`
      UPDATE phone_numbers SET provider = ${provider}, provider_number_id = ${n.provider_number_id}, label = ${label}, updated_at = now()
      WHERE id = ${row.id} AND org_id = ${orgId}
      RETURNING *`;
    out.push({ row: updated!, result: 'updated' });
  }
  return out.sort((a, b) => (a.row.number < b.row.number ? -1 : a.row.number > b.row.number ? 1 : 0));
}
