import * as credentials from '../../db/credentials';
import type { Db } from '../../db/client';
import { REFRESH_LOCK_SECONDS, isDue, type RefreshOutcome, type RefreshRunInput } from '../../domain/credentials';
import { conflict } from '../../domain/errors';
import { redactSecrets, stringsIn } from '../../platform/core/redact';
import { RefreshError, createSafeHttp, findRefresher } from '../../platform/adapters/refreshers';
import { credentialRefreshWorkflow, refreshWorkflowId, type LockOutcome } from '../../workflows/credential-messages';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';
import { startWorkflow } from '../workflow-client';
import { credentialNotFound } from './crud';
import { readCredentialValue, writeValue } from './values';

// A credential's refresh: started now or by its schedule, run by the credentialRefresh workflow whose
// activities call the steps below (lock, run the refresher, record a failure).

/** An error text safe to store and show: every form of every secret removed, cut to 500 characters. */
const safeErrorText = (message: string, secrets: readonly string[]) => redactSecrets(message, secrets).slice(0, 500);

/** `POST .../refresh`: starts a refresh now, or returns the one already running. */
export async function triggerRefresh(deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>, orgId: string, id: string) {
  const row = await credentials.getCredential(deps.sql, orgId, id);
  if (!row) throw credentialNotFound();
  if (!row.refresher_workflow_id) throw conflict('The credential has no refresher');
  const input: RefreshRunInput = { orgId, credentialId: id, trigger: 'manual' };
  const handle = await startWorkflow(deps, credentialRefreshWorkflow, orgId, {
    workflowId: refreshWorkflowId(id),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    workflowExecutionTimeout: '10 minutes',
  });
  return { credential_id: id, workflow_id: handle.workflowId, execution_id: handle.firstExecutionRunId };
}

/** Takes the refresh lock for one execution; a before-expiry schedule run also checks that a refresh is due. */
export async function beginRefresh(deps: Pick<ServiceDeps, 'sql'>, input: RefreshRunInput, executionId: string): Promise<LockOutcome> {
  return deps.sql.begin(async (tx) => {
    const row = await credentials.getCredential(tx, input.orgId, input.credentialId, { lock: true });
    if (!row) return 'missing';
    if (!row.refresher_workflow_id) return 'no_refresher';
    if (input.trigger === 'schedule' && !isDue(row.refresh_policy, row.expires_at, new Date())) return 'not_due';
    const locked = await credentials.acquireRefreshLock(tx, input.orgId, input.credentialId, executionId, REFRESH_LOCK_SECONDS);
    return locked ? 'acquired' : 'locked';
  });
}

/**
 * Runs the credential's refresher through the safe fetcher and, on success, stores the new value and
 * expiry, records the success and releases the lock in one transaction. A failure throws RefreshError.
 */
export async function runRefresh(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  id: string,
  executionId: string,
): Promise<Extract<RefreshOutcome, { status: 'success' }>> {
  const row = await credentials.getCredential(deps.sql, orgId, id);
  if (!row?.refresher_workflow_id) throw new RefreshError('The credential or its refresher is gone', false);
  const refresher = findRefresher(row.refresher_workflow_id);
  if (!refresher) throw new RefreshError(`Unknown refresher ${row.refresher_workflow_id}`, false);
  const value = (await readCredentialValue(deps, orgId, id)) ?? {};
  const http = createSafeHttp({ allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE, timeoutMs: deps.config.CREDENTIAL_REFRESH_TIMEOUT_MS });
  let result: Awaited<ReturnType<typeof refresher.refresh>>;
  try {
    result = await refresher.refresh({ input: row.refresh_input, value, now: new Date(), http });
  } catch (error) {
    // The error text goes to the row, the workflow history, the notification and logs: none of the
    // value's strings may survive in it, in any encoding.
    const secrets = stringsIn(value);
    if (error instanceof RefreshError) throw new RefreshError(safeErrorText(error.message, secrets), error.retryable);
    throw new RefreshError(safeErrorText(`Refresher failed: ${(error as Error).message}`, secrets), true);
  }
  await deps.sql.begin(async (tx) => {
    if (!(await credentials.getCredential(tx, orgId, id, { lock: true }))) return;
    await writeValue(tx, deps.config, orgId, id, result.value, result.expiresAt, { source: 'refresh', actor: null, merge: true });
    await credentials.finishRefresh(tx, orgId, id, executionId, { status: 'success', error: null });
  });
  return { status: 'success', expires_at: result.expiresAt?.toISOString() ?? null };
}

/**
 * Runs inside a failed refresh's transaction, after its notification: another area reacts to the
 * failure of a credential it owns (integrations move a connection whose grant is gone to needs_reconnect).
 */
export type RefreshFailureHook = (
  tx: Db,
  deps: Pick<ServiceDeps, 'sql'> & Partial<Pick<ServiceDeps, 'temporal'>>,
  orgId: string,
  credentialId: string,
  error: string,
) => Promise<void>;
const refreshFailureHooks = new Set<RefreshFailureHook>();
export const onRefreshFailure = (hook: RefreshFailureHook): void => void refreshFailureHooks.add(hook);

/**
 * Records a failed refresh, releases the lock and emits the always-send `credential.refresh_failed`
 * notification, in one transaction; true when this execution still held the lock (a retried call
 * finds it released and neither records nor notifies twice). The refresh workflow's last step.
 */
export async function failRefresh(
  deps: Pick<ServiceDeps, 'sql' | 'logger'> & Partial<Pick<ServiceDeps, 'temporal'>>,
  orgId: string,
  id: string,
  executionId: string,
  error: string,
): Promise<boolean> {
  const released = await deps.sql.begin(async (tx) => {
    const released = await credentials.finishRefresh(tx, orgId, id, executionId, { status: 'failed', error: error.slice(0, 500) });
    if (!released) return false;
    const row = await credentials.getCredential(tx, orgId, id);
    await emitEvent(tx, orgId, {
      event_type: 'credential.refresh_failed',
      entity_type: 'credential',
      entity_id: id,
      payload: { credential_id: id, credential_name: row?.name ?? null, error: error.slice(0, 500), execution_id: executionId },
    });
    for (const hook of refreshFailureHooks) await hook(tx, deps, orgId, id, error.slice(0, 500));
    return true;
  });
  deps.logger.warn({ orgId, credentialId: id, executionId, reason: error }, 'credential refresh failed');
  return released;
}
