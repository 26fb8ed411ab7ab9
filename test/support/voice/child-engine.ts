import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../platform/core/tools';
import type { TestContext } from '../context';

// An engine process on the context's database, Temporal and data dir (its tokens' key), with the
// context's settings in `env` (the fake model's address); the test kills it to see a call go on.

export interface ChildEngine {
  proc: ChildProcess;
  url: string;
  kill(): void;
}

export function startChildEngine(ctx: Pick<TestContext, 'config'>, env: Record<string, string>, speechUrl: string): Promise<ChildEngine> {
  const { config } = ctx;
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'test', 'support', 'voice', 'engine-process.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATA_DIR: config.DATA_DIR,
      DATABASE_URL: config.DATABASE_URL!,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS!,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      PUBLIC_BASE_URL: config.PUBLIC_BASE_URL!,
      SPEECH_BASE_URL: speechUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      const port = /ready (\d+)/.exec(String(d))?.[1];
      if (port) resolve({ proc, url: `ws://127.0.0.1:${port}`, kill: () => proc.kill('SIGKILL') });
    });
    proc.once('exit', (code) => reject(new Error(`engine process exited (${code}): ${stderr}`)));
  });
}
