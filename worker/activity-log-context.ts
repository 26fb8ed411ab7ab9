import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { AsyncLocalStorage } from 'node:async_hooks';
import { orgIdOf } from './org-id';

/** What every line written while an activity runs carries, named as the service's other lines are. */
export interface ActivityLogFields {
  workflow_id?: string;
  run_id?: string;
  workflow_type?: string;
  activity_type: string;
  activity_id: string;
  attempt: number;
  org_id?: string;
}

const running = new AsyncLocalStorage<ActivityLogFields>();

function fieldsOf(info: Context['info'], orgId: string | undefined): ActivityLogFields {
  return {
    ...(info.workflowExecution ? { workflow_id: info.workflowExecution.workflowId, run_id: info.workflowExecution.runId } : {}),
    ...(info.workflowType ? { workflow_type: info.workflowType } : {}),
    activity_type: info.activityType,
    activity_id: info.activityId,
    attempt: info.attempt,
    ...(orgId ? { org_id: orgId } : {}),
  };
}

/**
 * The worker's activity interceptors: each execution runs inside its log context, so the lines the
 * services write through the app's logger (deps.logger, whose mixin is `activityLogFields`) carry the
 * workflow id, run id, activity type and organization, and the SDK's own activity lines
 * (`Context.log`, lifecycle) carry the organization too.
 */
export const activityLogContext: ActivityInterceptorsFactory = (ctx) => {
  let orgId: string | undefined;
  return {
    inbound: {
      execute(input, next) {
        orgId = orgIdOf(input.args);
        return running.run(fieldsOf(ctx.info, orgId), () => next(input));
      },
    },
    outbound: {
      getLogAttributes(attributes, next) {
        return next(orgId === undefined ? attributes : { ...attributes, orgId });
      },
    },
  };
};

/** The pino mixin of the worker's logger: the running activity's fields, or none outside one. */
export function activityLogFields(): Partial<ActivityLogFields> {
  return running.getStore() ?? {};
}

/** Runs `write` outside any activity's context, so a line written for another event is not given its fields. */
export function outsideActivity<T>(write: () => T): T {
  return running.exit(write);
}
