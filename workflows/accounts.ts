import { proxyActivities } from '@temporalio/workflow';
import type { AccountActivities } from '../activities/accounts';
import type { AccountHealthInput, AccountHealthResult } from './account-messages';

const { refreshAccountHealth } = proxyActivities<AccountActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/**
 * Recomputes one account's health score. The activity scores and records in one transaction, so a
 * retry never half-writes; an account deleted meanwhile ends the run quietly with null.
 */
export async function accountHealthRefresh(input: AccountHealthInput): Promise<AccountHealthResult | null> {
  return refreshAccountHealth(input);
}
