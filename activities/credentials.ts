import { Context } from '@temporalio/activity';
import { RefreshError } from '../platform/adapters/refreshers';
import { beginRefresh, failRefresh, runRefresh } from '../services/credentials/refresh';
import { REFRESH_REJECTED, type RefreshBegin, type RefreshFailure, type RefreshStep } from '../workflows/credential-messages';
import type { ActivityDeps } from './deps';
import { classify, onError } from './failures';

/** A refresher's failure is retried (`CredentialRefreshFailed`) or final (REFRESH_REJECTED), as the refresher said. */
const REFRESH_FAILURES = [
  onError(RefreshError, (e) => (e.retryable ? 'CredentialRefreshFailed' : REFRESH_REJECTED), { retryable: (e) => e.retryable }),
];

// Values are read and written in services/credentials/ only; what goes back to the workflow (and so
// into its history) is ids, statuses and error texts composed by the refreshers, never a value.
export function createCredentialActivities(deps: ActivityDeps) {
  return {
    beginCredentialRefresh: (input: RefreshBegin) => beginRefresh(deps, input, input.executionId),

    /** Each failed attempt is logged; the failure is classified by REFRESH_FAILURES. */
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
        throw classify(error, REFRESH_FAILURES);
      }
    },

    failCredentialRefresh: ({ orgId, credentialId, executionId, error }: RefreshFailure) =>
      failRefresh(deps, orgId, credentialId, executionId, error),
  };
}

/** What the credentials workflows may call: their `proxyActivities<CredentialActivities>` type. */
export type CredentialActivities = ReturnType<typeof createCredentialActivities>;
