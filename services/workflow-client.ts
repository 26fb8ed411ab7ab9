import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  type WorkflowHandleWithStartDetails,
  type WorkflowSignalWithStartOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { SignalDefinition, WithWorkflowArgs, Workflow } from '@temporalio/common';
import type { Config } from '../platform/core/config';
import { organizationAttribute } from '../platform/core/temporal';
import type { WorkflowRef } from '../workflows/workflow-ref';

// The one way services start or signal a workflow: by its reference from workflows/<area>-messages.ts,
// on the configured task queue, tagged with its organization (operators filter the Temporal UI by it).

export interface WorkflowClientDeps {
  temporal: Client;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>;
}

type Placed = 'taskQueue' | 'typedSearchAttributes';

export type StartOptions<W extends Workflow> = Omit<WorkflowStartOptions<W>, Placed>;
export type SignalWithStartOptions<W extends Workflow, A extends unknown[]> = Omit<
  WithWorkflowArgs<W, WorkflowSignalWithStartOptions<A>>,
  Placed
>;

/** Starts `ref` for `orgId`; the options' workflowId, args and policies are the caller's. */
export function startWorkflow<W extends Workflow>(
  deps: WorkflowClientDeps,
  ref: WorkflowRef<W>,
  orgId: string,
  options: StartOptions<W>,
): Promise<WorkflowHandleWithStartDetails<W>> {
  const placed = { ...options, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, typedSearchAttributes: organizationAttribute(orgId) };
  return deps.temporal.workflow.start<W>(ref.name, placed as WorkflowStartOptions<W>);
}

/** Signals the workflow, starting it first when it is not running: the signal is in its history once this returns. */
export function signalWithStart<W extends Workflow, A extends unknown[]>(
  deps: WorkflowClientDeps,
  ref: WorkflowRef<W>,
  orgId: string,
  options: SignalWithStartOptions<W, A>,
): Promise<WorkflowHandle<W>> {
  const placed = { ...options, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, typedSearchAttributes: organizationAttribute(orgId) };
  return deps.temporal.workflow.signalWithStart<W, A>(ref.name, placed as WithWorkflowArgs<W, WorkflowSignalWithStartOptions<A>>);
}

/** Signals a running workflow by id (a workflow that is gone answers WorkflowNotFoundError). */
export async function signalWorkflow<A extends unknown[]>(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  workflowId: string,
  signal: SignalDefinition<A>,
  ...args: A
): Promise<void> {
  await deps.temporal.workflow.getHandle(workflowId).signal(signal, ...args);
}

/** How long a start waits for the previous run of the same id to close (its last activity has already freed the row). */
const PREVIOUS_RUN_CLOSING_MS = 2_000;
const PREVIOUS_RUN_POLL_MS = 100;

/**
 * Starts the next run of a per-conversation workflow id (`workflowIdConflictPolicy: 'FAIL'`): the previous
 * run freed the conversation in its last activity and is returning, so an already-started answer is retried
 * for a moment before it is passed on.
 */
export async function startAfterPreviousRun<W extends Workflow>(
  deps: WorkflowClientDeps,
  ref: WorkflowRef<W>,
  orgId: string,
  options: StartOptions<W>,
): Promise<WorkflowHandleWithStartDetails<W>> {
  const deadline = Date.now() + PREVIOUS_RUN_CLOSING_MS;
  for (;;) {
    try {
      return await startWorkflow(deps, ref, orgId, { ...options, workflowIdConflictPolicy: 'FAIL' });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError) || Date.now() >= deadline) throw error;
      await sleep(PREVIOUS_RUN_POLL_MS);
    }
  }
}
