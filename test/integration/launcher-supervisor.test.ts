import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Supervisor, type OutputTail, type Running, type ServiceSpec } from '../../scripts/supervisor';
import { waitFor } from '../support/campaigns';

// The supervisor behind `npm start`, with real child processes: restart with backoff, restart order,
// and the one line that stops everything when a child keeps crashing.

const options = { maxCrashes: 3, crashWindowMs: 10_000, initialBackoffMs: 50, maxBackoffMs: 200 };

function node(script: string, output: OutputTail): Running {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => output.write(d));
  child.stderr!.on('data', (d: Buffer) => output.write(d));
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  return {
    pid: child.pid,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

const forever = 'setInterval(() => {}, 1000)';

describe('Supervisor', () => {
  it('restarts a killed child with a log line and leaves the others running', async () => {
    const lines: string[] = [];
    const pids: Record<string, number[]> = { db: [], api: [], worker: [] };
    const spec = (name: string, dependsOn: string[] = []): ServiceSpec => ({
      name,
      dependsOn,
      start: async (output) => {
        const running = node(forever, output);
        pids[name]!.push(running.pid!);
        return running;
      },
    });
    const supervisor = new Supervisor([spec('db'), spec('worker', ['db']), spec('api', ['db'])], { ...options, say: (l) => lines.push(l) });
    await supervisor.startAll();
    process.kill(pids.worker![0]!, 'SIGKILL');
    await waitFor(async () => pids.worker!.length === 2, 30_000, 'worker restarted');
    expect(lines).toContain('worker exited (SIGKILL); restarting in 0.1 s (restart 1 of at most 2 within 10 s)');
    expect(pids.api).toHaveLength(1);
    expect(pids.db).toHaveLength(1);
    await supervisor.stopAll(0);
    expect(await supervisor.done).toBe(0);
  });

  it('restarts a dependency, and a dependent that died meanwhile only once it is up again', async () => {
    const events: string[] = [];
    let dbStarts = 0;
    let dbUp!: () => void;
    const dbRestart = new Promise<void>((resolve) => (dbUp = resolve));
    const supervisor = new Supervisor(
      [
        {
          name: 'db',
          start: async (output) => {
            dbStarts++;
            if (dbStarts > 1) await dbRestart; // a slow restart, held until the test lets it finish
            events.push(`db up ${dbStarts}`);
            return node(forever, output);
          },
        },
        {
          name: 'worker',
          dependsOn: ['db'],
          start: async (output) => {
            events.push('worker up');
            return node(forever, output);
          },
        },
      ],
      { ...options, say: () => {} },
    );
    await supervisor.startAll();
    const inside = supervisor as unknown as { states: Map<string, { running: Running; up: boolean }>; upWaiters: Set<() => void> };
    const running = inside.states;
    process.kill(running.get('db')!.running.pid!, 'SIGKILL');
    await waitFor(async () => dbStarts === 2, 30_000, 'the db restart to begin');
    process.kill(running.get('worker')!.running.pid!, 'SIGKILL');
    // The worker's restart waits for the db, which is still starting: it is not started meanwhile.
    await waitFor(async () => !running.get('worker')!.up && inside.upWaiters.size > 0, 30_000, 'the worker to wait for the db');
    expect(events).toEqual(['db up 1', 'worker up']);
    dbUp();
    await waitFor(async () => events.length === 4, 30_000, 'both restarted');
    expect(events).toEqual(['db up 1', 'worker up', 'db up 2', 'worker up']);
    await supervisor.stopAll(0);
  });

  it('stops everything with one line naming the child and its last output after repeated fast crashes', async () => {
    const lines: string[] = [];
    let healthyStopped = false;
    const supervisor = new Supervisor(
      [
        {
          name: 'steady',
          start: async (output) => {
            const running = node(forever, output);
            return { ...running, stop: async () => ((healthyStopped = true), running.stop()) };
          },
        },
        {
          name: 'flaky',
          start: async (output) => node('console.error("boom: cannot bind"); setTimeout(() => process.exit(3), 20)', output),
        },
      ],
      { ...options, say: (l) => lines.push(l) },
    );
    await supervisor.startAll();
    expect(await supervisor.done).toBe(1);
    const final = lines.filter((l) => l.includes('stopping everything'));
    expect(final).toEqual([
      'flaky exited 3 times within 10 s (last: code 3); stopping everything. Last output of flaky: boom: cannot bind',
    ]);
    expect(healthyStopped).toBe(true);
    expect(lines.filter((l) => l.startsWith('flaky exited (code 3); restarting'))).toHaveLength(2);
  });
});
