import { ScheduleOverlapPolicy, type ScheduleSpec } from '@temporalio/client';
import { expiryCheckSeconds, hasSchedule, isPaused, type RefreshPolicy, type RefreshRunInput } from '../../domain/credentials';
import { credentialRefreshWorkflow, refreshScheduleId, refreshWorkflowId } from '../../workflows/credential-messages';
import type { ServiceDeps } from '../deps';
import {
  createSchedule as createWorkflowSchedule,
  deleteSchedule as deleteWorkflowSchedule,
  scheduledStart,
  updateSchedule,
} from '../workflow-client';

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

/** The schedule's run: the refresh workflow of this credential, bounded by its execution timeout. */
function refreshStart(orgId: string, credentialId: string) {
  const input: RefreshRunInput = { orgId, credentialId, trigger: 'schedule' };
  return { workflowId: refreshWorkflowId(credentialId), args: [input] as [RefreshRunInput], workflowExecutionTimeout: '10 minutes' };
}

const note = (policy: RefreshPolicy) => (isPaused(policy) ? 'Paused through the credential' : undefined);

export async function createSchedule(deps: ScheduleDeps, orgId: string, credentialId: string, policy: RefreshPolicy): Promise<void> {
  await createWorkflowSchedule(deps, credentialRefreshWorkflow, orgId, {
    scheduleId: refreshScheduleId(credentialId),
    spec: scheduleSpec(policy),
    start: refreshStart(orgId, credentialId),
    // A run still refreshing when the next is due makes that next one a no-op.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute', pauseOnFailure: false },
    state: { paused: isPaused(policy), note: note(policy) },
  });
}

export async function deleteSchedule(deps: Pick<ServiceDeps, 'temporal'>, credentialId: string): Promise<void> {
  await deleteWorkflowSchedule(deps, refreshScheduleId(credentialId));
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
    if (hasSchedule(before)) await deleteSchedule(deps, credentialId);
    return;
  }
  const updated = await updateSchedule(deps, refreshScheduleId(credentialId), (previous) => ({
    ...previous,
    spec: scheduleSpec(after),
    action: scheduledStart(deps, credentialRefreshWorkflow, orgId, refreshStart(orgId, credentialId)),
    policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP },
    state: { ...previous.state, paused: isPaused(after), note: note(after) },
  }));
  if (!updated) await createSchedule(deps, orgId, credentialId, after);
}
