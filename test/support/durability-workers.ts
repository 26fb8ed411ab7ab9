import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';
import { createWorker } from '../../worker/create-worker';
import type { TestContext } from './context';

// The workers of the durability tests: one in a process of its own, for the test to kill with SIGKILL,
// and one in the test's process that takes over. Both poll the context's task queue with the prebuilt
// workflow bundle, so each starts in a second or two.

/**
 * test/support/worker-process.ts as a child process on the context's database and Temporal, plus `env`
 * (the settings the test's context was made with); resolves once it polls, rejects if it exits first.
 */
export function startChildWorker(ctx: Pick<TestContext, 'config'>, env: Record<string, string>): Promise<ChildProcess> {
  const { config } = ctx;
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'test', 'support', 'worker-process.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: config.DATA_DIR,
      DATABASE_URL: config.DATABASE_URL!,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => String(d).includes('ready') && resolve(proc));
    proc.once('exit', (code) => reject(new Error(`worker process exited (${code}): ${stderr}`)));
  });
}

export interface InProcessWorker {
  worker: Worker;
  running: Promise<void>;
  connection: NativeConnection;
}

/** A worker in the test's process, on the context's dependencies. */
export async function startInProcessWorker(ctx: Pick<TestContext, 'config' | 'deps'>): Promise<InProcessWorker> {
  const connection = await NativeConnection.connect({ address: ctx.config.TEMPORAL_ADDRESS! });
  const { worker } = await createWorker(
    { config: ctx.config, sql: ctx.deps.sql, storage: ctx.deps.storage, logger: ctx.deps.logger, temporal: ctx.deps.temporal },
    { connection, workflowBundlePath: inject('workflowBundlePath') },
  );
  return { worker, connection, running: worker.run() };
}

export async function stopInProcessWorker(running: InProcessWorker | undefined): Promise<void> {
  if (!running) return;
  running.worker.shutdown();
  await running.running;
  await running.connection.close();
}
