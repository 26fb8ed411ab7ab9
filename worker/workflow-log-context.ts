import type { WorkflowInterceptors } from '@temporalio/workflow';
import { orgIdOf } from './org-id';

/**
 * Bundled into the workflow sandbox (createWorker passes it as an interceptor module): every
 * `workflow.log` line of a workflow whose input carries `orgId` also carries it. The SDK adds the
 * workflow id, run id and type itself; the runtime logger (worker/temporal-logger.ts) names them as
 * the service's other lines do.
 */
export const interceptors = (): WorkflowInterceptors => {
  let orgId: string | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          orgId = orgIdOf(input.args);
          return next(input);
        },
      },
    ],
    outbound: [
      {
        getLogAttributes(attributes, next) {
          return next(orgId === undefined ? attributes : { ...attributes, orgId });
        },
      },
    ],
  };
};
