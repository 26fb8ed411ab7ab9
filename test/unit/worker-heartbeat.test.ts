import type { State } from '@temporalio/worker';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HEARTBEAT_FILE, startHeartbeat } from '../../worker/heartbeat';

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-heartbeat-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the worker heartbeat', () => {
  it('writes the file only while the worker runs, refreshes it, and removes it on stop', async () => {
    const dataDir = path.join(tempDir(), 'data'); // created on the first beat
    let state: State = 'INITIALIZED';
    const heartbeat = startHeartbeat({ getState: () => state }, dataDir, 20);
    const file = path.join(dataDir, HEARTBEAT_FILE);
    expect(heartbeat.file).toBe(file);
    expect(fs.existsSync(file)).toBe(false);

    state = 'RUNNING';
    await expect.poll(() => fs.existsSync(file), { timeout: 30_000 }).toBe(true);
    const first = JSON.parse(fs.readFileSync(file, 'utf8')) as { state: string; time: string; pid: number };
    expect(first).toMatchObject({ state: 'RUNNING', pid: process.pid });
    await expect
      .poll(() => (JSON.parse(fs.readFileSync(file, 'utf8')) as { time: string }).time > first.time, { timeout: 30_000 })
      .toBe(true);

    // Draining or stopped: a beat writes nothing, so the file goes stale. The beats are run here rather
    // than waited for, and the file is compared with itself (utimes keeps the time to the microsecond).
    state = 'DRAINING';
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(file, old, old);
    const stale = { mtimeMs: fs.statSync(file).mtimeMs, text: fs.readFileSync(file, 'utf8') };
    for (let i = 0; i < 3; i++) heartbeat.beat();
    expect({ mtimeMs: fs.statSync(file).mtimeMs, text: fs.readFileSync(file, 'utf8') }).toEqual(stale);

    heartbeat.stop();
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
