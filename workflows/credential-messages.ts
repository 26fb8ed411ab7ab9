import type { credentialRefresh } from './credentials';
import type { RefreshRunInput } from '../domain/credentials';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the credential refresh workflow, its activities and the services that
// start it or keep its schedule.

/** Temporal ids of a credential's refresh: the workflow (`credential-refresh:<id>`) and the schedule (same text). */
export const refreshWorkflowId = (credentialId: string) => `credential-refresh:${credentialId}`;
export const refreshScheduleId = (credentialId: string) => `credential-refresh:${credentialId}`;
export const credentialRefreshWorkflow = workflowRef<typeof credentialRefresh>('credentialRefresh');

/** Failure type of a refresh attempt no retry can fix; the others (`CredentialRefreshFailed`) are retried. */
export const REFRESH_REJECTED = 'CredentialRefreshRejected';

/** What taking the refresh lock answered; anything but `acquired` ends the run as skipped. */
export type LockOutcome = 'acquired' | 'locked' | 'not_due' | 'missing' | 'no_refresher';

/** One step of a refresh run, made by the execution that holds the lock. */
export interface RefreshStep {
  orgId: string;
  credentialId: string;
  executionId: string;
}

// Inputs of the refresh activities (activities/credentials.ts).
export type RefreshBegin = RefreshRunInput & { executionId: string };
export type RefreshFailure = RefreshStep & { error: string };
