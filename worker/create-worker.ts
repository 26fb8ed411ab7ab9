import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import path from 'node:path';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities/deps';
import { connectionOptions } from '../platform/core/temporal';
import { PROJECT_ROOT } from '../platform/core/tools';
import { activityLogContext } from './activity-log-context';

const WORKFLOW_LOG_CONTEXT = path.join(PROJECT_ROOT, 'worker', 'workflow-log-context.ts');

/**
 * A worker on the configured task queue with every workflow and activity. Given a prebuilt bundle
 * (tests bundle once per run) it skips bundling; otherwise it bundles workflows/index.ts at start, with
 * the workflow log context (worker/workflow-log-context.ts). Activities run in their log context
 * (worker/activity-log-context.ts) either way.
 */
export async function createWorker(
  deps: ActivityDeps,
  options: { connection?: NativeConnection; workflowBundlePath?: string; extra?: Partial<WorkerOptions> } = {},
) {
  const { config } = deps;
  const connection =
    options.connection ?? (await NativeConnection.connect(connectionOptions(config, config.TEMPORAL_ADDRESS ?? 'localhost:7233')));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    activities: createActivities(deps),
    ...(options.workflowBundlePath
      ? { workflowBundle: { codePath: options.workflowBundlePath }, interceptors: { activity: [activityLogContext] } }
      : {
          workflowsPath: path.join(PROJECT_ROOT, 'workflows', 'index.ts'),
          interceptors: { activity: [activityLogContext], workflowModules: [WORKFLOW_LOG_CONTEXT] },
        }),
    ...options.extra,
  });
  return { worker, connection };
}
