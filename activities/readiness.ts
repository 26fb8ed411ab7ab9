import { recordReadiness, refreshStalePage } from '../services/readiness';
import type { ReadinessProfileInput, StalePageInput } from '../workflows/readiness-messages';
import type { ActivityDeps } from './deps';

export function createReadinessActivities(deps: ActivityDeps) {
  return {
    /** Computes and records the profile in one transaction; null (nothing written) when the account is gone. */
    computeReadinessProfile: (input: ReadinessProfileInput) => recordReadiness(deps, input),
    refreshStaleReadinessPage: (input: StalePageInput) => refreshStalePage(deps, input),
  };
}

/** What the readiness workflows may call: their `proxyActivities<ReadinessActivities>` type. */
export type ReadinessActivities = ReturnType<typeof createReadinessActivities>;
