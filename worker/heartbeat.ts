import type { State } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';

/** Under DATA_DIR: `/app/.data/worker-heartbeat.json` in the image. */
export const HEARTBEAT_FILE = 'worker-heartbeat.json';
export const HEARTBEAT_INTERVAL_MS = 10_000;

/**
 * The worker serves no HTTP, so its health is a file: while the worker is RUNNING (polling its task
 * queue) its state and the time are written every `intervalMs`, replacing the file whole. A probe that
 * finds the file older than a few intervals has a worker that stopped polling or an event loop that is
 * stuck (docker-compose.yml's healthcheck, the chart's liveness probe). The file goes when the worker stops.
 */
export function startHeartbeat(worker: { getState(): State }, dataDir: string, intervalMs = HEARTBEAT_INTERVAL_MS) {
  const file = path.join(dataDir, HEARTBEAT_FILE);
  const partial = `${file}.${process.pid}.partial`;
  const beat = () => {
    const state = worker.getState();
    if (state !== 'RUNNING') return;
    try {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(partial, `${JSON.stringify({ state, time: new Date().toISOString(), pid: process.pid })}\n`);
      fs.renameSync(partial, file);
    } catch {
      // A full or read-only disk: the probe sees a stale file and says so.
    }
  };
  const timer = setInterval(beat, intervalMs);
  timer.unref();
  beat();
  return {
    file,
    beat,
    stop() {
      clearInterval(timer);
      fs.rmSync(file, { force: true });
      fs.rmSync(partial, { force: true });
    },
  };
}
