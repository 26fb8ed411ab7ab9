import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CredentialActivities } from '../activities/credentials';
import type { RefreshOutcome, RefreshRunInput } from '../domain/credentials';
import { REFRESH_REJECTED } from './credential-messages';

const { beginCredentialRefresh, failCredentialRefresh } = proxyActivities<CredentialActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

// Three attempts at the outside call at most, so the run ends well within the lock's two minutes.
const { refreshCredentialValue } = proxyActivities<CredentialActivities>({
  startToCloseTimeout: '40 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [REFRESH_REJECTED],
  },
});

const failureText = (error: unknown): string => {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : 'Refresh failed';
};

/**
 * One refresh of a credential (`credential-refresh:<id>`, started by POST .../refresh or by the
 * credential's schedule). It takes the credential's refresh lock, so two triggers never refresh at
 * once; the activities read and write the value, this code only ever sees ids and statuses. The lock is
 * released on success (with the new value) and on failure (with the error), even when cancelled.
 */
export async function credentialRefresh(input: RefreshRunInput): Promise<RefreshOutcome> {
  const step = { orgId: input.orgId, credentialId: input.credentialId, executionId: workflowInfo().runId };
  const start = await beginCredentialRefresh({ ...input, executionId: step.executionId });
  if (start !== 'acquired') return { status: 'skipped', reason: start };
  try {
    return await refreshCredentialValue(step);
  } catch (error) {
    const message = failureText(error);
    await CancellationScope.nonCancellable(() => failCredentialRefresh({ ...step, error: message }));
    return { status: 'failed', error: message };
  }
}
