import { proxyActivities } from '@temporalio/workflow';
import type { HealthActivities } from '../activities/health';

const { probeDependencies } = proxyActivities<HealthActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/** Runs the worker's dependency probe: proves a worker is polling and can reach Postgres and storage. */
export async function healthProbe() {
  return probeDependencies();
}
