import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { probeDependencies } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/** Runs the worker's dependency probe: proves a worker is polling and can reach Postgres and storage. */
export async function healthProbe() {
  return probeDependencies();
}
