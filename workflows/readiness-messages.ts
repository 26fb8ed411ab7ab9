import type { ReadinessLabel } from '../domain/readiness';
import type { readinessNightlyWorkflow, readinessRefreshWorkflow } from './readiness';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the readiness workflows, their activities and the services that start
// them or keep the nightly schedule.

/** One refresh per account at a time (`readiness:<account_id>`); a later refresh reuses the id. */
export const readinessWorkflowId = (accountId: string) => `readiness:${accountId}`;
/** The organization's nightly schedule (`readiness-nightly:<org_id>`) and the run it starts (`readiness-nightly-run:<org_id>`). */
export const readinessScheduleId = (orgId: string) => `readiness-nightly:${orgId}`;
export const readinessNightlyWorkflowId = (orgId: string) => `readiness-nightly-run:${orgId}`;
export const readinessRefreshWorkflowRef = workflowRef<typeof readinessRefreshWorkflow>('readinessRefreshWorkflow');
export const readinessNightlyWorkflowRef = workflowRef<typeof readinessNightlyWorkflow>('readinessNightlyWorkflow');

export interface ReadinessRefreshInput {
  orgId: string;
  accountId: string;
}

export interface ReadinessProfileInput extends ReadinessRefreshInput {
  trigger: 'manual' | 'nightly';
}

/** The recorded profile as the workflow's history keeps it: its id and label, not its axes. */
export interface ReadinessRecorded {
  id: string;
  label: ReadinessLabel;
  computed_at: string;
}

export interface ReadinessNightlyInput {
  orgId: string;
  staleHours: number;
  /** Where the previous run (before continuing as new) stopped; null from the start. */
  afterId: string | null;
  refreshed?: number;
}

export type StalePageInput = Omit<ReadinessNightlyInput, 'refreshed'>;

/** How many profiles a page recomputed, and where the next page starts (null when the organization is done). */
export interface StalePageResult {
  refreshed: number;
  next: string | null;
}
