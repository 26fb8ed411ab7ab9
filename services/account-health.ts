import * as accounts from '../db/accounts';
import type { HealthScoreRow } from '../db/accounts';
import { scoreAccountHealth } from '../domain/accounts';
import {
  accountHealthRefreshWorkflow,
  accountHealthWorkflowId,
  type AccountHealthInput,
  type AccountHealthResult,
} from '../workflows/account-messages';
import { accountNotFound } from './accounts';
import type { ServiceDeps } from './deps';
import { startWorkflow } from './workflow-client';

// An account's health score: started on request, computed by the accountHealthRefresh workflow, read with its history.

const healthEntry = (row: HealthScoreRow) => ({
  id: row.id,
  score: row.score,
  factors: row.factors,
  computed_at: row.computed_at.toISOString(),
});

/**
 * Starts the account's health refresh. USE_EXISTING: a refresh while one runs attaches to it instead
 * of failing; a finished run's id is reused for the next refresh (the default reuse policy allows it).
 */
export async function refreshHealth(deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>, orgId: string, accountId: string) {
  if (!(await accounts.accountExists(deps.sql, orgId, accountId))) throw accountNotFound();
  const handle = await startWorkflow(deps, accountHealthRefreshWorkflow, orgId, {
    workflowId: accountHealthWorkflowId(accountId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [{ orgId, accountId }],
  });
  return { workflow_id: handle.workflowId };
}

export async function getHealth(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string, limit: number) {
  const row = await accounts.getAccount(deps.sql, orgId, accountId);
  if (!row) throw accountNotFound();
  const history = await accounts.healthHistory(deps.sql, orgId, row.id, limit);
  return {
    account_id: row.id,
    health_score: row.health_score,
    computed_at: history[0]?.computed_at.toISOString() ?? null,
    history: history.map(healthEntry),
  };
}

/**
 * Reads the account's signals, scores them and records the score, in one transaction holding the
 * account row; null (and nothing written) when the account no longer exists. The workflow's activity.
 */
export async function recordAccountHealth(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  { orgId, accountId }: AccountHealthInput,
): Promise<AccountHealthResult | null> {
  const result = await deps.sql.begin(async (tx) => {
    const signals = await accounts.loadHealthSignals(tx, orgId, accountId);
    if (!signals) return null;
    const { score, factors } = scoreAccountHealth({
      now: signals.measured_at.toISOString(),
      lastActivityAt: signals.last_activity_at?.toISOString() ?? null,
      openDeals: signals.open_deals,
      contacts: signals.contacts,
      engagedContacts: signals.engaged_contacts,
    });
    const row = await accounts.recordHealthScore(tx, orgId, accountId, score, { ...factors });
    return { score, factors, computed_at: row.computed_at.toISOString() };
  });
  if (!result) deps.logger.info({ orgId, accountId }, 'account gone before its health refresh; nothing recorded');
  return result;
}
