import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import path from 'node:path';
import { createActivities } from '../activities';
import type { ActivityDeps } from '../activities/deps';
import { connectionOptions } from '../platform/temporal';
import { PROJECT_ROOT } from '../platform/tools';

/**
 * A worker on the configured task queue with every workflow and activity. Given a prebuilt bundle
 * (tests bundle once per run) it skips bundling; otherwise it bundles workflows/index.ts at start.
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
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : { workflowsPath: path.join(PROJECT_ROOT, 'workflows', 'index.ts') }),
    ...options.extra,
  });
  return { worker, connection };
}
