import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { RefreshRunInput } from '../domain/credentials';
import { RefreshError } from '../platform/adapters/refreshers';
import { beginRefresh, failRefresh, runRefresh } from '../services/credentials/refresh';
import { REFRESH_REJECTED, type RefreshStep } from '../workflows/credential-messages';
import type { ActivityDeps } from './deps';

// Values are read and written in services/credentials/ only; what goes back to the workflow (and so
// into its history) is ids, statuses and error texts composed by the refreshers, never a value.
export function createCredentialActivities(deps: ActivityDeps) {
  return {
    beginCredentialRefresh: (input: RefreshRunInput & { executionId: string }) => beginRefresh(deps, input, input.executionId),

    /** A refresher's failure is retried (`CredentialRefreshFailed`) or final (REFRESH_REJECTED), as the refresher said. */
    async refreshCredentialValue({ orgId, credentialId, executionId }: RefreshStep) {
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

    failCredentialRefresh: ({ orgId, credentialId, executionId, error }: RefreshStep & { error: string }) =>
      failRefresh(deps, orgId, credentialId, executionId, error),
  };
}
