import fs from 'node:fs';
import type { Server } from 'node:http';
import autocannon from 'autocannon';
import { createApp } from '../api/app';
import { freePort } from '../dev-servers/ports';
import type { BenchEnvironment } from './environment';

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
  non2xx: number;
  cpuUsPerRequest: number | undefined;
}

/** One second of 16 connections on `url`, the load generator on a worker thread of its own. */
async function slice(url: string, headers: Record<string, string>): Promise<Slice> {
  const before = threadCpuNs();
  const result = await autocannon({ url, headers, connections: 16, duration: 1, workers: 1 });
  const after = threadCpuNs();
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    non2xx: result.non2xx,
    cpuUsPerRequest:
      before === undefined || after === undefined || !result.requests.total ? undefined : (after - before) / 1000 / result.requests.total,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round2 = (n: number) => Number(n.toFixed(2));

function summary(slices: Slice[]) {
  const requests = slices.reduce((n, s) => n + s.requests, 0);
  const cpu = slices.every((s) => s.cpuUsPerRequest !== undefined)
    ? slices.reduce((us, s) => us + s.cpuUsPerRequest! * s.requests, 0) / requests
    : undefined;
  return {
    requestsPerSecond: Math.round(median(slices.map((s) => s.requestsPerSecond))),
    non2xx: slices.reduce((n, s) => n + s.non2xx, 0),
    requests,
    cpuUsPerRequest: cpu === undefined ? undefined : round2(cpu),
  };
}

/**
 * GET /me (a session, and an ak_ key) on the same process and database, three ways in turn within each
 * one-second slice: rate limits off, rate limits on with leases (RATE_LIMIT_LEASE_MAX, default 1,000: one upsert
 * per lease of a credential and of its organization), and rate limits asking the database on every
 * request (a lease of 1), for what the leases save. Quotas are far above the bench's rate, so every answer is
 * 200 and every one goes through the limiter. Ratios are per slice, then their median; `cpu_ratio` is the
 * server thread's CPU per request, limits off over limits on, per slice (what the rate ratio would be on a core of its
 * own); the three ways take turns in a rotating order.
 * Goal: limits on ≥ 0.9× limits off.
 */
export async function benchRateLimits(env: BenchEnvironment, seconds: number) {
  const config = env.deps.config;
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

  const servers: Server[] = [];
  const serve = async (overrides: Partial<typeof config>) => {
    const { app } = createApp({ ...env.deps, config: { ...config, ...overrides } });
    const port = await freePort();
    servers.push(
      await new Promise<Server>((resolve) => {
        const s = app.listen(port, '127.0.0.1', () => resolve(s));
      }),
    );
    return `http://127.0.0.1:${port}/me`;
  };
  const targets = {
    off: await serve({ RATE_LIMIT_ORG_REQUESTS: 0, RATE_LIMIT_KEY_REQUESTS: 0 }),
    leased: `${env.baseUrl}/me`,
    every_request: await serve({ RATE_LIMIT_LEASE_MAX: 1 }),
  };
  try {
    const tokens = { session, ak_key: created.pat_key };
    for (const token of Object.values(tokens))
      for (const url of Object.values(targets)) await slice(url, { Authorization: `Bearer ${token}` });
    const results: Record<string, unknown> = {};
    for (const [name, token] of Object.entries(tokens)) {
      const headers = { Authorization: `Bearer ${token}` };
      const runs = { off: [] as Slice[], leased: [] as Slice[], every_request: [] as Slice[] };
      const ways = Object.entries(targets);
      // Each slice runs the three in another order: none always follows the database-heavy one.
      for (let i = 0; i < seconds; i++)
        for (const [way, url] of [...ways.slice(i % 3), ...ways.slice(0, i % 3)])
          runs[way as keyof typeof runs].push(await slice(url, headers));
      const [off, leased, every] = [summary(runs.off), summary(runs.leased), summary(runs.every_request)];
      const ratio = (a: Slice[]) => round2(median(a.map((s, i) => s.requestsPerSecond / runs.off[i]!.requestsPerSecond)));
      // The server thread's CPU per request, limits off over the other way, per slice, then the median.
      const cpuRatio = (a: Slice[]) =>
        a.every((s, i) => s.cpuUsPerRequest && runs.off[i]!.cpuUsPerRequest)
          ? round2(median(a.map((s, i) => runs.off[i]!.cpuUsPerRequest! / s.cpuUsPerRequest!)))
          : undefined;
      results[name] = {
        limits_off: off,
        limits_on_leased: leased,
        limits_on_database_every_request: every,
        leased_vs_off: ratio(runs.leased),
        leased_vs_off_cpu: cpuRatio(runs.leased),
        every_request_vs_off: ratio(runs.every_request),
        every_request_vs_off_cpu: cpuRatio(runs.every_request),
      };
    }
    return {
      name: 'GET /me with rate limits off, on with leases, and on with a database statement per request (16 connections)',
      lease_max: config.RATE_LIMIT_LEASE_MAX,
      ...results,
      goal: 'leased_vs_off >= 0.9',
    };
  } finally {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
  }
}
