import { recordAccountHealth } from '../services/account-health';
import type { AccountHealthInput } from '../workflows/account-messages';
import type { ActivityDeps } from './deps';

export function createAccountActivities(deps: ActivityDeps) {
  return {
    /** Scores and records in one transaction (services/account-health.ts); retried by the workflow's policy. */
    refreshAccountHealth: (input: AccountHealthInput) => recordAccountHealth(deps, input),
  };
}

/** What the accounts workflows may call: their `proxyActivities<AccountActivities>` type. */
export type AccountActivities = ReturnType<typeof createAccountActivities>;
