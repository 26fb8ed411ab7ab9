import type { HealthFactors } from '../domain/accounts';
import type { accountHealthRefresh } from './accounts';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the account health workflow, its activity and the service that starts it.

/** One refresh per account at a time (`account-health:<account_id>`); a later refresh reuses the id. */
export const accountHealthWorkflowId = (accountId: string) => `account-health:${accountId}`;
export const accountHealthRefreshWorkflow = workflowRef<typeof accountHealthRefresh>('accountHealthRefresh');

export interface AccountHealthInput {
  orgId: string;
  accountId: string;
}

export interface AccountHealthResult {
  score: number;
  factors: HealthFactors;
  computed_at: string;
}
