import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { RefreshOutcome, RefreshRunInput } from '../domain/credentials';
import { RefreshError } from '../platform/refreshers';
import { beginRefresh, failRefresh, runRefresh, type LockOutcome } from '../services/credentials';
import type { ActivityDeps } from './deps';

/** Failure types of a refresh attempt: `CredentialRefreshRejected` is final, `CredentialRefreshFailed` is retried. */
export const REFRESH_REJECTED = 'CredentialRefreshRejected';

export interface RefreshStep {
  orgId: string;
  credentialId: string;
  executionId: string;
}

// Values are read and written here only; what goes back to the workflow (and so into its history) is
// ids, statuses and error texts composed by the refreshers, never a value.
export function createCredentialActivities(deps: ActivityDeps) {
  return {
    async beginCredentialRefresh(input: RefreshRunInput & { executionId: string }): Promise<LockOutcome> {
      return beginRefresh(deps, input, input.executionId);
    },

    async refreshCredentialValue({
      orgId,
      credentialId,
      executionId,
    }: RefreshStep): Promise<Extract<RefreshOutcome, { status: 'success' }>> {
      try {
        return await runRefresh(deps, orgId, credentialId, executionId);
      } catch (error) {
        if (!(error instanceof RefreshError)) throw error;
        const attempt = Context.current().info.attempt;
        deps.logger.warn(
          { orgId, credentialId, executionId, attempt, retryable: error.retryable, reason: error.message },
          'credential refresh attempt failed',
        );
        if (error.retryable) throw ApplicationFailure.retryable(error.message, 'CredentialRefreshFailed');
        throw ApplicationFailure.nonRetryable(error.message, REFRESH_REJECTED);
      }
    },

    async failCredentialRefresh({ orgId, credentialId, executionId, error }: RefreshStep & { error: string }): Promise<boolean> {
      const released = await failRefresh(deps, orgId, credentialId, executionId, error);
      deps.logger.warn({ orgId, credentialId, executionId, reason: error }, 'credential refresh failed');
      return released;
    },
  };
}
