import * as contacts from '../../db/campaign-contacts';
import type { Sql } from '../../db/client';
import * as dnc from '../../db/do-not-call';
import type { DoNotCallRow } from '../../db/do-not-call';
import { notFound } from '../../domain/errors';
import { campaignWorkflowId, contactsSettledSignal } from '../../workflows/campaign-messages';
import type { ServiceDeps } from '../deps';
import { NameCursor, cursorPage, decodeCursor } from '../pagination';
import { emitCallsEnded } from '../webhooks/area-events';
import { signalWorkflow } from '../workflow-client';

// The organization's do-not-call list (docs/decisions/telephony.md): numbers in E.164, listed once (a second
// add is 409). The dispatcher reads it right before each call (services/campaigns/pacing.ts): an attempt to a
// listed number fails with `do_not_call` and its contact is not called again. Adding a number cancels the
// pending contacts that carry it at once.

const view = (row: DoNotCallRow) => ({
  number: row.number,
  organization_id: row.org_id,
  reason: row.reason,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
});

export async function listDoNotCall(deps: Pick<ServiceDeps, 'sql'>, orgId: string, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, NameCursor);
  const { rows, total } = await dnc.listNumbers(deps.sql, orgId, { limit: query.limit, afterNumber: after?.n });
  const page = cursorPage(rows, query.limit, total, (last) => ({ n: last.number }));
  return { data: page.data.map(view), pagination: page.pagination };
}

export async function getDoNotCall(deps: Pick<ServiceDeps, 'sql'>, orgId: string, number: string) {
  const row = await dnc.findNumber(deps.sql, orgId, number);
  if (!row) throw notFound('Number not on the do-not-call list');
  return view(row);
}

/** Lists the number (409 when it is already), and cancels the pending campaign contacts that carry it. */
export async function addDoNotCall(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'logger'>,
  orgId: string,
  actor: string,
  input: { number: string; reason?: string | null },
) {
  const { row, canceled, campaigns } = await deps.sql.begin(async (tx) => {
    const row = await dnc.insertNumber(tx, orgId, input.number, input.reason ?? null, actor);
    return { row, ...(await dnc.cancelPendingContactsOf(tx, orgId, input.number)) };
  });
  // A campaign left with nothing to call completes, as when its last call ends (best effort: the next cycle's
  // settle check, or a later move, finds it too).
  for (const id of await contacts.settledCampaigns(deps.sql, orgId, campaigns))
    await signalWorkflow(deps, campaignWorkflowId(id), contactsSettledSignal).catch((err: unknown) =>
      deps.logger.debug({ err, campaignId: id }, 'campaign workflow not signalled'),
    );
  return { ...view(row), canceled_contacts: canceled };
}

export async function removeDoNotCall(deps: Pick<ServiceDeps, 'sql'>, orgId: string, number: string): Promise<void> {
  if (!(await dnc.deleteNumber(deps.sql, orgId, number))) throw notFound('Number not on the do-not-call list');
}

/**
 * The dispatcher's attempts whose number the gate found listed: failed before any dial, with their `call.ended`
 * webhook message (no CRM call activity: no call was placed). Returns the campaigns touched.
 */
export async function failDoNotCallAttempts(sql: Sql, orgId: string, attempts: { id: string; key: string }[]): Promise<string[]> {
  if (!attempts.length) return [];
  return sql.begin(async (tx) => {
    const touched = await dnc.failAttempts(tx, orgId, attempts);
    await emitCallsEnded(
      tx,
      orgId,
      attempts.map((a) => a.key),
    );
    return touched;
  });
}
