import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleSpec } from '@temporalio/client';
import { expiryCheckSeconds, hasSchedule, isPaused, type RefreshPolicy, type RefreshRunInput } from '../../domain/credentials';
import { organizationAttribute } from '../../platform/core/temporal';
import { credentialRefreshWorkflow, refreshScheduleId, refreshWorkflowId } from '../../workflows/credential-messages';
import type { ServiceDeps } from '../deps';

// A credential's refresh schedule (`credential-refresh:<id>`): made, changed and deleted with the row's policy.

type ScheduleDeps = Pick<ServiceDeps, 'temporal' | 'config'>;

function scheduleSpec(policy: RefreshPolicy): ScheduleSpec {
  switch (policy.type) {
    case 'interval':
      return { intervals: [{ every: `${policy.every_seconds}s` }] };
    case 'cron':
      return { cronExpressions: [policy.expression], timezone: policy.timezone };
    case 'before_expiry':
      return { intervals: [{ every: `${expiryCheckSeconds(policy)}s` }] };
    case 'manual':
      throw new Error('a manual policy has no schedule');
  }
}

function scheduleAction(deps: ScheduleDeps, orgId: string, credentialId: string) {
  const input: RefreshRunInput = { orgId, credentialId, trigger: 'schedule' };
  return {
    type: 'startWorkflow' as const,
    workflowType: credentialRefreshWorkflow.name,
    workflowId: refreshWorkflowId(credentialId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    typedSearchAttributes: organizationAttribute(orgId),
    workflowExecutionTimeout: '10 minutes',
  };
}

const note = (policy: RefreshPolicy) => (isPaused(policy) ? 'Paused through the credential' : undefined);

export async function createSchedule(deps: ScheduleDeps, orgId: string, credentialId: string, policy: RefreshPolicy): Promise<void> {
  await deps.temporal.schedule.create({
    scheduleId: refreshScheduleId(credentialId),
    spec: scheduleSpec(policy),
    action: scheduleAction(deps, orgId, credentialId),
    // A run still refreshing when the next is due makes that next one a no-op.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute', pauseOnFailure: false },
    state: { paused: isPaused(policy), note: note(policy) },
    typedSearchAttributes: organizationAttribute(orgId),
  });
}

export async function deleteSchedule(temporal: Client, credentialId: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(refreshScheduleId(credentialId)).delete();
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
}

/** Brings the credential's schedule in line with its new policy: created, updated (and paused) or deleted. */
export async function reconcileSchedule(
  deps: ScheduleDeps,
  orgId: string,
  credentialId: string,
  before: RefreshPolicy,
  after: RefreshPolicy,
): Promise<void> {
  if (!hasSchedule(after)) {
    if (hasSchedule(before)) await deleteSchedule(deps.temporal, credentialId);
    return;
  }
  const handle = deps.temporal.schedule.getHandle(refreshScheduleId(credentialId));
  try {
    await handle.update((previous) => ({
      ...previous,
      spec: scheduleSpec(after),
      action: scheduleAction(deps, orgId, credentialId),
      policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP },
      state: { ...previous.state, paused: isPaused(after), note: note(after) },
    }));
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    await createSchedule(deps, orgId, credentialId, after);
  }
}
