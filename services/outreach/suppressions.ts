import * as db from '../../db/outreach/suppressions';
import type { SuppressionRow } from '../../db/outreach/suppressions';
import { notFound } from '../../domain/errors';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// The organization's suppression list: no sequence ever mails a listed address again. Hard bounces and
// unsubscribes add themselves; people add and remove entries by API.

export type SuppressionReason = SuppressionRow['reason'];

export const suppressionView = (row: SuppressionRow) => ({
  id: row.id,
  email: row.email,
  reason: row.reason,
  note: row.note,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
});

export async function listSuppressions(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  q: { search?: string; reason?: SuppressionReason; limit: number; cursor?: string },
) {
  const after = decodeCursor(q.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    db.listSuppressions(deps.sql, orgId, { search: q.search, reason: q.reason, limit: q.limit, after }),
    db.countSuppressions(deps.sql, orgId, { search: q.search, reason: q.reason }),
  ]);
  return cursorPage(rows, q.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), suppressionView);
}

/** Adds an address (idempotent: an address already listed keeps its first entry and reason). */
export async function addSuppression(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: { email: string; reason?: SuppressionReason; note?: string },
) {
  const { row } = await db.suppress(deps.sql, orgId, {
    id: newId(),
    email: input.email,
    reason: input.reason ?? 'manual',
    note: input.note ?? null,
    created_by: actor,
  });
  return suppressionView(row);
}

export async function removeSuppression(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await db.deleteSuppression(deps.sql, orgId, id))) throw notFound('Suppression not found');
}

/** Called where an address proves unmailable or asks to stop (bounce, unsubscribe, complaint), in the caller's transaction. */
export async function suppressAddress(
  tx: Parameters<typeof db.suppress>[0],
  orgId: string,
  email: string,
  reason: Exclude<SuppressionReason, 'manual'>,
  note: string,
) {
  if (!email.trim()) return;
  await db.suppress(tx, orgId, { id: newId(), email, reason, note: note.slice(0, 500), created_by: 'system:outreach' });
}
