import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../platform/core/tools';

/** The worker entry point as a child process; resolves once it polls (it bundles the workflows first). */
export function startWorker(workerEnv: Record<string, string>): Promise<ChildProcess> {
  // BENCH_WORKER_CPU_PROF=<dir>: each worker writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_WORKER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(PROJECT_ROOT, 'worker', 'main.ts')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...workerEnv, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output.slice(-2000)}`)), 180_000);
    child.stdout!.on('data', (d) => {
      output += String(d);
      if (output.includes('worker polling')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (d) => (output += String(d)));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${output.slice(-2000)}`)));
  });
}

/** Stops a worker started by startWorker, if it still runs, and waits for it to exit. */
export async function stopWorker(worker: ChildProcess | undefined): Promise<void> {
  if (!worker || worker.exitCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGTERM');
  await exited;
}
