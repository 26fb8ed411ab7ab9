import { NativeConnection, Worker } from '@temporalio/worker';
import { connectionOptions } from '../../platform/core/temporal';
import { voiceTaskQueue } from '../../workflows/replay-messages';
import type { EngineDeps } from '../server';
import { createReplayEngineActivities } from './activities';

/** Replays an engine runs at once: each holds the model and the recognizer for its turns, one after another. */
const REPLAYS_AT_ONCE = 2;

/**
 * The engine's Temporal worker: replay activities only, on the engines' queue beside the service's, so a
 * replay's turns run where the speech models and the model are. No workflow code runs here.
 */
export async function startReplayWorker(deps: EngineDeps, options: { connection?: NativeConnection; concurrency?: number } = {}) {
  const { config } = deps;
  const connection =
    options.connection ?? (await NativeConnection.connect(connectionOptions(config, config.TEMPORAL_ADDRESS ?? 'localhost:7233')));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: voiceTaskQueue(config.TEMPORAL_TASK_QUEUE),
    activities: createReplayEngineActivities(deps),
    maxConcurrentActivityTaskExecutions: options.concurrency ?? REPLAYS_AT_ONCE,
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      if (!options.connection) await connection.close();
    },
  };
}
