import type { Db } from '../../db/client';
import * as db from '../../db/intelligence';
import type { IcpFitRunRow, ResearchRunRow } from '../../db/intelligence';
import { memberIdsOfActors } from '../../db/notifications';
import { notFound } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';

// What research and ICP-fit runs share: a start that makes the row and the workflow together, the
// notification of how a run ended, and the lookup of a run by its workflow id.

export const runNotFound = () => notFound('Run not found');

export async function startRun<T>(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  id: string,
  insert: (tx: Db) => Promise<T>,
  start: () => Promise<unknown>,
): Promise<T> {
  // Row and workflow start in one transaction: a start Temporal refuses rolls the row back, and the
  // workflow's first activity waits on the run's lock until this transaction ends.
  return deps.sql.begin(async (tx) => {
    await db.lockRun(tx, orgId, id);
    const [row] = await Promise.all([insert(tx), start()]);
    return row;
  }) as Promise<T>;
}

export async function notify(tx: Db, orgId: string, row: ResearchRunRow | IcpFitRunRow): Promise<void> {
  const kind = 'domain' in row ? 'research' : 'icp_fit';
  if (row.status === 'cancelled') return;
  await emitEvent(tx, orgId, {
    event_type: row.status === 'failed' ? 'research_run.failed' : 'research_run.completed',
    entity_type: kind === 'research' ? 'research_run' : 'icp_fit_run',
    entity_id: row.id,
    // Whoever asked for the run hears how it ended without subscribing first.
    recipient_user_ids: await memberIdsOfActors(tx, orgId, [row.created_by]),
    payload: {
      kind,
      status: row.status,
      ...(row.error ? { error: row.error } : {}),
      ...('domain' in row ? { domain: row.domain, account_id: row.account_id, facts: row.facts.length } : { scored: row.scored }),
    },
  });
}

/** A run named by its workflow id (`research:<id>` or `icp-fit:<id>`), only within the organization. */
export async function getRunByWorkflowId(deps: Pick<ServiceDeps, 'sql'>, orgId: string, workflowId: string) {
  const m = /^(research|icp-fit):([0-9a-f-]{36})$/i.exec(workflowId);
  if (!m) throw runNotFound();
  const row = m[1] === 'research' ? await db.getResearchRun(deps.sql, orgId, m[2]!) : await db.getIcpFitRun(deps.sql, orgId, m[2]!);
  if (!row) throw runNotFound();
  return {
    id: row.id,
    kind: m[1] === 'research' ? ('research' as const) : ('icp_fit' as const),
    workflow_id: workflowId,
    status: row.status,
  };
}
