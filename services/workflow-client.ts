import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleUpdateOptions,
  type ScheduleDescription,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
  type WorkflowHandleWithStartDetails,
  WorkflowNotFoundError,
  type WorkflowSignalWithStartOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { QueryDefinition, SignalDefinition, UpdateDefinition, WithWorkflowArgs, Workflow } from '@temporalio/common';
import type { Config } from '../platform/core/config';
import { organizationAttribute } from '../platform/core/temporal';
import type { WorkflowRef } from '../workflows/workflow-ref';

// The one way services reach Temporal: workflows started and scheduled by their reference from
// workflows/<area>-messages.ts, on the configured task queue, tagged with their organization (operators
// filter the Temporal UI by it); signals, updates, queries, describe, cancel and terminate by workflow id.
// A workflow or schedule that is gone is an answer here (null/false), never an exception to catch.

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

/** Runs `call` within `deadlineMs` (the connection's deadline): a Temporal that stops answering fails it. */
const withinDeadline = <T>(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  deadlineMs: number | undefined,
  call: () => Promise<T>,
): Promise<T> => (deadlineMs === undefined ? call() : deps.temporal.connection.withDeadline(Date.now() + deadlineMs, call));

/** Sends an update and waits for its answer; a refused update is the workflow's WorkflowUpdateFailedError. */
export function updateWorkflow<R, A>(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  workflowId: string,
  update: UpdateDefinition<R, [A]>,
  arg: A,
  deadlineMs?: number,
): Promise<R> {
  return withinDeadline(deps, deadlineMs, () => deps.temporal.workflow.getHandle(workflowId).executeUpdate(update, { args: [arg] }));
}

/** Asks a query of the workflow; null when it does not answer within `deadlineMs` or is gone. */
export function queryWorkflow<R>(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  workflowId: string,
  query: QueryDefinition<R, []>,
  deadlineMs: number,
): Promise<R | null> {
  return withinDeadline(deps, deadlineMs, () => deps.temporal.workflow.getHandle(workflowId).query(query)).catch(() => null);
}

/** The workflow's description, or null when no workflow has this id. */
export async function describeWorkflow(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  workflowId: string,
): Promise<WorkflowExecutionDescription | null> {
  return ignoreGone(deps.temporal.workflow.getHandle(workflowId).describe(), null);
}

/** The workflow's result once it ends (its failure as the client's WorkflowFailedError). */
export function workflowResult<R>(deps: Pick<WorkflowClientDeps, 'temporal'>, workflowId: string): Promise<R> {
  return deps.temporal.workflow.getHandle(workflowId).result() as Promise<R>;
}

/** Asks the workflow to cancel itself; false when it is already gone. */
export function cancelWorkflow(deps: Pick<WorkflowClientDeps, 'temporal'>, workflowId: string): Promise<boolean> {
  return doneUnlessGone(deps.temporal.workflow.getHandle(workflowId).cancel());
}

/** Ends the workflow at once (no cleanup of its own); false when it is already gone. */
export function terminateWorkflow(deps: Pick<WorkflowClientDeps, 'temporal'>, workflowId: string, reason: string): Promise<boolean> {
  return doneUnlessGone(deps.temporal.workflow.getHandle(workflowId).terminate(reason));
}

/** True once `call` is done; false when its workflow or schedule is gone. */
const doneUnlessGone = (call: Promise<unknown>): Promise<boolean> =>
  ignoreGone(
    call.then(() => true),
    false,
  );

async function ignoreGone<T, G>(call: Promise<T>, gone: G): Promise<T | G> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || error instanceof ScheduleNotFoundError) return gone;
    throw error;
  }
}

// Schedules: each starts `ref` for one organization, on the task queue, with the organization's attribute.

export type ScheduledStart<W extends Workflow> = Omit<ScheduleOptionsStartWorkflowAction<W>, 'type' | 'workflowType' | Placed>;
export type ScheduleCreate<W extends Workflow> = Omit<ScheduleOptions, 'action' | 'typedSearchAttributes'> & { start: ScheduledStart<W> };

/** The schedule's action: start `ref` for `orgId` as `start` says (workflow id, args, timeouts). */
export function scheduledStart<W extends Workflow>(
  deps: Pick<WorkflowClientDeps, 'config'>,
  ref: WorkflowRef<W>,
  orgId: string,
  start: ScheduledStart<W>,
): ScheduleOptionsStartWorkflowAction<W> {
  return {
    ...start,
    type: 'startWorkflow',
    workflowType: ref.name,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    typedSearchAttributes: organizationAttribute(orgId),
  } as ScheduleOptionsStartWorkflowAction<W>;
}

/** Creates a schedule of `ref` for `orgId`; false when one with this id exists already (left as it is). */
export async function createSchedule<W extends Workflow>(
  deps: WorkflowClientDeps,
  ref: WorkflowRef<W>,
  orgId: string,
  { start, ...options }: ScheduleCreate<W>,
): Promise<boolean> {
  try {
    await deps.temporal.schedule.create({
      ...options,
      action: scheduledStart(deps, ref, orgId, start),
      typedSearchAttributes: organizationAttribute(orgId),
    });
    return true;
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return false;
    throw error;
  }
}

/** Rewrites a schedule from its current description; false when there is no such schedule. */
export function updateSchedule(
  deps: Pick<WorkflowClientDeps, 'temporal'>,
  scheduleId: string,
  update: (previous: ScheduleDescription) => ScheduleUpdateOptions,
): Promise<boolean> {
  return doneUnlessGone(deps.temporal.schedule.getHandle(scheduleId).update(update));
}

/** Pauses a schedule with a note operators see; false when there is no such schedule. */
export function pauseSchedule(deps: Pick<WorkflowClientDeps, 'temporal'>, scheduleId: string, note: string): Promise<boolean> {
  return doneUnlessGone(deps.temporal.schedule.getHandle(scheduleId).pause(note));
}

/** Deletes a schedule; false when there was none. */
export function deleteSchedule(deps: Pick<WorkflowClientDeps, 'temporal'>, scheduleId: string): Promise<boolean> {
  return doneUnlessGone(deps.temporal.schedule.getHandle(scheduleId).delete());
}
