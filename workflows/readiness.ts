import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReadinessActivities } from '../activities/readiness';
import { NIGHTLY_PAGES_PER_RUN } from '../domain/readiness';
import type { ReadinessNightlyInput, ReadinessRefreshInput } from './readiness-messages';

const { computeReadinessProfile, refreshStaleReadinessPage } = proxyActivities<ReadinessActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** One account's readiness refresh (`readiness:<account_id>`); null when the account is gone. */
export async function readinessRefreshWorkflow(input: ReadinessRefreshInput) {
  return computeReadinessProfile({ ...input, trigger: 'manual' });
}

/**
 * The organization's nightly refresh, started by its schedule: walks the accounts page by page (one
 * activity per page) and recomputes the stale profiles only, so a repeated run is a no-op. It
 * continues as new every NIGHTLY_PAGES_PER_RUN pages, bounding its history whatever the organization's size.
 */
export async function readinessNightlyWorkflow(input: ReadinessNightlyInput): Promise<{ refreshed: number }> {
  let afterId = input.afterId;
  let refreshed = input.refreshed ?? 0;
  for (let page = 0; ; page++) {
    if (page >= NIGHTLY_PAGES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      return continueAsNew<typeof readinessNightlyWorkflow>({ ...input, afterId, refreshed });
    }
    const result = await refreshStaleReadinessPage({ orgId: input.orgId, afterId, staleHours: input.staleHours });
    refreshed += result.refreshed;
    if (result.next === null) return { refreshed };
    afterId = result.next;
  }
}
