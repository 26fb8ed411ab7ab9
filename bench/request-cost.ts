import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../dev-servers/ports';
import { PROJECT_ROOT } from '../platform/core/tools';
import type { BenchEnvironment } from './environment';

/**
 * `npm run bench -- request-cost [--seconds N] [--rounds R] [--rate Q]`: GET /me with an ak_ key against the API as
 * `npm run api` serves it (server/main.ts, its own process, the bench database, stdout to /dev/null), at
 * LOG_LEVEL info and warn with rate limits on (quotas far above the bench's rate, so every request goes
 * through the limiter and its leases) and off, and against a bare Koa app answering the same JSON in a
 * process of its own; the load comes from autocannon in a third process (16 connections). Each round
 * measures every target once for N seconds, in an order that rotates from round to round, after a
 * warm-up of each. Beside each figure: the server process's CPU time per request (user + system, from
 * /proc) and the one-minute load average; and the median over the rounds of each ratio (many short rounds,
 * e.g. `--seconds 2 --rounds 9`, keep the machine's swings out of it). `--rate Q` offers Q requests a second in
 * all instead of as many as each server answers: the rates are then equal and the CPU time a request costs is
 * the figure to compare, measured below saturation, where the two cores' contention moves it least. REQUEST_COST_CPU_PROF=<dir> writes a
 * CPU profile of each API process into <dir>/<name> when it stops; REQUEST_COST_PROMISES=1 has each write the
 * promises it makes per request to stderr (bench/request-promises.ts).
 */

interface Measure {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  cpuUsPerRequest?: number;
  loadAverage: number;
}

interface Target {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
}

const CONNECTIONS = 16;
const TSX = ['--import', 'tsx'];
const round2 = (n: number) => Number(n.toFixed(2));

/** User + system CPU time of a process, in microseconds (Linux /proc; clock ticks of 10 ms). */
function processCpuUs(pid: number): number | undefined {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
}

async function waitUntilUp(child: ChildProcess, url: string, name: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${name} did not answer ${url} within 120 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** server/main.ts on the bench database, as `npm run api` runs it, with the given log level and limits. */
async function startApi(env: BenchEnvironment, name: string, logLevel: string, limits: boolean): Promise<Target> {
  const port = await freePort();
  const profileDir = process.env.REQUEST_COST_CPU_PROF;
  // One directory per process: each of its threads (the module loader's too) writes a profile of its own.
  const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, name)}`] : [];
  if (process.env.REQUEST_COST_PROMISES) flags.push('--import', path.join(PROJECT_ROOT, 'bench', 'request-promises.ts'));
  const quota = limits ? '1000000000' : '0';
  const child = spawn(process.execPath, [...TSX, ...flags, path.join(PROJECT_ROOT, 'server', 'main.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: env.deps.config.DATA_DIR, // the same development identity provider and encryption key
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: env.deps.config.TEMPORAL_ADDRESS,
      LOG_LEVEL: logLevel,
      RATE_LIMIT_ORG_REQUESTS: quota,
      RATE_LIMIT_KEY_REQUESTS: quota,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(child, `${base}/health`, name).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return { name, url: `${base}/me`, pid: child.pid!, child };
}

async function startBare(body: unknown): Promise<Target> {
  const child = spawn(process.execPath, [...TSX, path.join(PROJECT_ROOT, 'bench', 'bare-koa-me.ts')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, REQUEST_COST_BODY: JSON.stringify(body) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the bare app exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}/me`;
  await waitUntilUp(child, url, 'bare Koa');
  return { name: 'bare_koa', url, pid: child.pid!, child };
}

/** `seconds` of autocannon on `target` from a process of its own. */
async function measure(target: Target, token: string, seconds: number, rate?: number): Promise<Measure> {
  const cpuBefore = processCpuUs(target.pid);
  const child = spawn(
    process.execPath,
    [
      ...TSX,
      path.join(PROJECT_ROOT, 'bench', 'request-cost-load.ts'),
      target.url,
      String(seconds),
      String(CONNECTIONS),
      ...(rate ? [String(rate)] : []),
    ],
    { cwd: PROJECT_ROOT, env: { ...process.env, REQUEST_COST_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  const cpuAfter = processCpuUs(target.pid);
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  const result = JSON.parse(out) as Omit<Measure, 'cpuUsPerRequest' | 'loadAverage'>;
  // The CPU read brackets the load generator's start and exit too; the server is idle then.
  const cpuUsPerRequest =
    cpuBefore === undefined || cpuAfter === undefined || !result.requests ? undefined : round2((cpuAfter - cpuBefore) / result.requests);
  return { ...result, cpuUsPerRequest, loadAverage: round2(os.loadavg()[0]!) };
}

export async function benchRequestCost(env: BenchEnvironment, seconds: number, rounds: number, rate?: number) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-org',
    org_ids: ['bench-org'],
    permissions: ['api:read', 'api:manage'],
  });
  const created = await fetch(`${env.baseUrl}/organization-pats`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  }).then((r) => r.json() as Promise<{ pat_key: string }>);
  const token = created.pat_key;
  const me = await fetch(`${env.baseUrl}/me`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());

  const targets: Target[] = [];
  try {
    targets.push(await startBare(me));
    // One after another: each applies the migrations at start, under a lock a second one would fail to take.
    for (const [name, level, limits] of [
      ['info_limits_on', 'info', true],
      ['warn_limits_on', 'warn', true],
      ['info_limits_off', 'info', false],
      ['warn_limits_off', 'warn', false],
    ] as const)
      targets.push(await startApi(env, name, level, limits));
    for (const target of targets) await measure(target, token, 3); // warm-up: JIT, token cache, leases
    const runs: Record<string, Measure[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)];
      for (const target of order) runs[target.name]!.push(await measure(target, token, seconds, rate));
    }
    const bare = runs.bare_koa!;
    const perRound = (name: string, of: (m: Measure, i: number) => number | undefined) => runs[name]!.map(of);
    const vsBare = (name: string) => perRound(name, (m, i) => round2(m.requestsPerSecond / bare[i]!.requestsPerSecond));
    const vsBareCpu = (name: string) =>
      perRound(name, (m, i) =>
        m.cpuUsPerRequest && bare[i]!.cpuUsPerRequest ? round2(bare[i]!.cpuUsPerRequest! / m.cpuUsPerRequest) : undefined,
      );
    const onVsOff = (level: string) =>
      perRound(`${level}_limits_on`, (m, i) => round2(m.requestsPerSecond / runs[`${level}_limits_off`]![i]!.requestsPerSecond));
    // With many short rounds, the median of the rounds' ratios is the figure least moved by the machine's swings.
    const median = (values: (number | undefined)[]) => {
      const sorted = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
      return sorted.length ? sorted[Math.floor(sorted.length / 2)] : undefined;
    };
    const medians = (of: (name: string) => (number | undefined)[]) =>
      Object.fromEntries(targets.slice(1).map((t) => [t.name, median(of(t.name))]));
    return {
      name: `GET /me (ak_ key): the API process vs a bare Koa app, load from a third process (${CONNECTIONS} connections, ${seconds} s per run${rate ? `, ${rate} requests/s offered` : ''})`,
      rounds: runs,
      median_service_vs_bare: medians(vsBare),
      median_service_vs_bare_cpu: medians(vsBareCpu),
      median_limits_on_vs_off: { info: median(onVsOff('info')), warn: median(onVsOff('warn')) },
      service_vs_bare: Object.fromEntries(targets.slice(1).map((t) => [t.name, vsBare(t.name)])),
      service_vs_bare_cpu: Object.fromEntries(targets.slice(1).map((t) => [t.name, vsBareCpu(t.name)])),
      limits_on_vs_off: { info: onVsOff('info'), warn: onVsOff('warn') },
      goal: 'service_vs_bare >= 0.5; limits_on_vs_off >= 0.9',
      cpus: os.cpus().length,
    };
  } finally {
    await Promise.all(targets.map((t) => stop(t.child)));
  }
}
