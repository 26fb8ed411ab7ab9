import fs from 'node:fs';
import type { Server } from 'node:http';
import autocannon from 'autocannon';
import Koa from 'koa';
import { freePort } from '../dev-servers/ports';
import type { BenchEnvironment } from './environment';

/**
 * A bare Koa app answering GET /me with the same JSON the service answers, in the bench's process: the
 * floor the service's per-request cost is measured against (no auth, no middleware, no router).
 */
async function startBareKoa(body: unknown): Promise<{ url: string; close(): void }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = body;
  });
  const port = await freePort();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${port}/me`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** CPU time this thread has run, in nanoseconds (Linux: /proc/thread-self/schedstat); undefined elsewhere. */
function threadCpuNs(): number | undefined {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

interface Slice {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server's thread (the bench's main thread) during the slice, per request answered. */
  cpuUsPerRequest: number | undefined;
}

/** One second of 16 connections on `url`; the load generator on a worker thread of its own or on this one. */
async function slice(url: string, headers: Record<string, string>, ownThread: boolean): Promise<Slice> {
  const cpuBefore = threadCpuNs();
  const result = await autocannon({ url, headers, connections: 16, duration: 1, ...(ownThread ? { workers: 1 } : {}) });
  const cpuAfter = threadCpuNs();
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuUsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined || result.requests.total === 0
        ? undefined
        : (cpuAfter - cpuBefore) / 1000 / result.requests.total,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round2 = (n: number) => Number(n.toFixed(2));

/** One target over its slices: median requests/s, worst p99, and the server thread's CPU per request. */
function summary(slices: Slice[]) {
  const requests = slices.reduce((n, s) => n + s.requests, 0);
  const cpu = slices.every((s) => s.cpuUsPerRequest !== undefined)
    ? slices.reduce((us, s) => us + s.cpuUsPerRequest! * s.requests, 0) / requests
    : undefined;
  return {
    requestsPerSecond: Math.round(median(slices.map((s) => s.requestsPerSecond))),
    p50Ms: median(slices.map((s) => s.p50Ms)),
    p99Ms: Math.max(...slices.map((s) => s.p99Ms)),
    non2xx: slices.reduce((n, s) => n + s.non2xx, 0),
    errors: slices.reduce((n, s) => n + s.errors, 0),
    requests,
    cpuUsPerRequest: cpu === undefined ? undefined : round2(cpu),
  };
}

/** The median over slices of a/b, the two measured one right after the other. */
const sliceRatio = (a: Slice[], b: Slice[]) => round2(median(a.map((s, i) => s.requestsPerSecond / b[i]!.requestsPerSecond)));

/**
 * GET /me with an ak_ key against the same with a session JWT, and both against a bare Koa app answering
 * the same JSON, in one run (same process, same load generator, 16 connections). The ak_ path exchanges
 * the key through the verified-token cache, so Argon2id runs once; goals: ak_ at least 0.9x the session
 * rate, GET /me at least 0.5x the bare app's.
 *
 * Each round is `seconds` one-second slices, each measuring the bare app, the session and the ak_ key in
 * turn: on a machine shared with other work the load changes from second to second, so rate ratios are
 * taken within each slice, then their median. The steadier figure is the CPU time the server's thread
 * spends per request (`cpu_ratio`: bare app's over the service's, what the rate ratio would be with
 * the core to itself); it is the server's alone when the load generator runs on its own thread.
 */
export async function benchIdentity(env: BenchEnvironment, seconds: number) {
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

  const url = `${env.baseUrl}/me`;
  const sessionHeaders = { Authorization: `Bearer ${session}` };
  const keyHeaders = { Authorization: `Bearer ${created.pat_key}` };
  const me = await fetch(url, { headers: sessionHeaders }).then((r) => r.json());
  const bare = await startBareKoa(me);
  try {
    const round = async (ownThread: boolean) => {
      const runs = { bare: [] as Slice[], session: [] as Slice[], key: [] as Slice[] };
      for (let i = 0; i < seconds; i++) {
        runs.bare.push(await slice(bare.url, sessionHeaders, ownThread));
        runs.session.push(await slice(url, sessionHeaders, ownThread));
        runs.key.push(await slice(url, keyHeaders, ownThread));
      }
      const [bareKoa, sessionRun, keyRun] = [summary(runs.bare), summary(runs.session), summary(runs.key)];
      const cpuRatio = (s: typeof sessionRun) =>
        s.cpuUsPerRequest && bareKoa.cpuUsPerRequest ? round2(bareKoa.cpuUsPerRequest / s.cpuUsPerRequest) : undefined;
      return {
        bare_koa: bareKoa,
        session: sessionRun,
        ak_key: keyRun,
        ratio: sliceRatio(runs.key, runs.session),
        session_vs_bare: sliceRatio(runs.session, runs.bare),
        ak_key_vs_bare: sliceRatio(runs.key, runs.bare),
        session_vs_bare_cpu: cpuRatio(sessionRun),
        ak_key_vs_bare_cpu: cpuRatio(keyRun),
      };
    };
    // Warm every path (JIT, cache) before measuring.
    for (let i = 0; i < 2; i++)
      for (const [target, headers] of [
        [bare.url, sessionHeaders],
        [url, sessionHeaders],
        [url, keyHeaders],
      ] as const)
        await slice(target, headers, false);
    return {
      name: 'GET /me: ak_ key vs session JWT, and both vs a bare Koa app answering the same JSON (16 connections)',
      // The load generator on a worker thread of its own: the server's thread does only the serving.
      load_on_own_thread: await round(true),
      // The load generator on the server's thread (as the other benches run): its cost dilutes the ratios.
      load_on_server_thread: await round(false),
      goal: 'ratio >= 0.9; GET /me vs bare Koa >= 0.5',
    };
  } finally {
    bare.close();
  }
}
