import * as phoneNumbers from '../db/phone-numbers';
import { notFound } from '../domain/errors';
import { phoneNumberView, toBool } from './agent-views';
import type { ServiceDeps } from './deps';
import { NameCursor, cursorPage, decodeCursor } from './pagination';

/** Registers a number in the organization's inventory; a number already there is a 409. */
export async function registerNumber(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: { number: string; label?: string | null },
) {
  return phoneNumberView(await phoneNumbers.insertPhoneNumber(deps.sql, orgId, input.number, input.label ?? null, actor));
}

export async function listNumbers(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { agent_id?: string; available?: 'true' | 'false'; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, NameCursor);
  const { rows, total } = await phoneNumbers.listPhoneNumbers(
    deps.sql,
    orgId,
    { agent_id: query.agent_id, available: toBool(query.available) },
    { limit: query.limit, afterNumber: after?.n },
  );
  const page = cursorPage(rows, query.limit, total, (last) => ({ n: last.number }));
  return { data: page.data.map(phoneNumberView), pagination: page.pagination };
}

/** Releases a number: it leaves the inventory and stops serving its agents. */
export async function releaseNumber(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await phoneNumbers.deletePhoneNumber(deps.sql, orgId, id))) throw notFound('Phone number not found');
}
