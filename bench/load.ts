import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Sql } from '../db/client';
import { newId } from '../platform/core/ids';
import { freePort } from '../dev-servers/ports';
import { PROJECT_ROOT } from '../platform/core/tools';
import type { BenchEnvironment } from './environment';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/** Bounded load on a loopback URL: a fixed duration and connection count, then it stops by itself. */
export async function load(
  url: string,
  options: { headers?: Record<string, string>; connections?: number; seconds?: number } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    headers: options.headers,
    connections: options.connections ?? 16,
    duration: options.seconds ?? 10,
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

const MIXED_ACCOUNTS = 5_000;
const MIXED_CONTACTS = 5_000;
const MIXED_TAGS = 20;

/** One organization's CRM: accounts whose names a search term matches in part, contacts, tags. */
async function seedMixed(sql: Sql, orgId: string) {
  const words = ['Northwind', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Acme', 'Wayne', 'Tyrell', 'Aperture'];
  const accounts = Array.from({ length: MIXED_ACCOUNTS }, (_, i) => ({
    id: newId(),
    org_id: orgId,
    name: `${words[i % words.length]} ${['Systems', 'Labs', 'Group', 'Works'][i % 4]} ${String(i).padStart(5, '0')}`,
  }));
  const contacts = Array.from({ length: MIXED_CONTACTS }, (_, i) => ({
    id: newId(),
    org_id: orgId,
    email: `person${i}@example.com`,
    first_name: `Person${i}`,
    account_id: accounts[i % accounts.length]!.id,
  }));
  for (let i = 0; i < accounts.length; i += 1000) await sql`INSERT INTO accounts ${sql(accounts.slice(i, i + 1000))}`;
  for (let i = 0; i < contacts.length; i += 1000) await sql`INSERT INTO contacts ${sql(contacts.slice(i, i + 1000))}`;
  const tags = Array.from({ length: MIXED_TAGS }, (_, i) => ({ id: newId(), org_id: orgId, name: `tag-${i}` }));
  await sql`INSERT INTO tags ${sql(tags)}`;
  await sql`ANALYZE`;
  return { accountIds: accounts.map((a) => a.id), contactIds: contacts.map((c) => c.id) };
}

/** The API as a process of its own (so its RSS is its own), on the bench environment's database. */
async function startApiProcess(env: BenchEnvironment): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'server', 'main.ts')], {
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
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API process exited with ${child.exitCode}`);
    const up = await fetch(`${baseUrl}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, baseUrl };
    if (Date.now() > deadline) throw new Error('the API process did not answer /health within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `npm run bench -- load`: a mixed read/write load at `connections` over loopback against the API in
 * its own process, an ak_ key with read and write scopes: each connection cycles through an account
 * search, a contact read, the tag list and an activity create. Reports requests/s, p50/p99, errors and
 * the API process's RSS before, after a warm-up, at the peak and at the end.
 */
export async function benchMixedLoad(env: BenchEnvironment, seconds: number, connections = 64) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-load',
    org_ids: ['bench-load'],
    permissions: ['api:read', 'api:manage'],
  });
  const created = await fetch(`${env.baseUrl}/organization-pats`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['api:read', 'api:manage'] }),
  }).then((r) => r.json() as Promise<{ pat_key: string; organization_id: string }>);
  const { accountIds, contactIds } = await seedMixed(env.deps.sql, created.organization_id);

  const { child, baseUrl } = await startApiProcess(env);
  try {
    const pid = child.pid!;
    const rssStart = rssMiB(pid);
    const headers = { authorization: `Bearer ${created.pat_key}`, 'content-type': 'application/json' };
    const pick = (ids: string[]) => ids[Math.floor(Math.random() * ids.length)]!;
    const requests: autocannon.Request[] = [
      { method: 'GET', path: '/accounts?search=acme%20labs&limit=50', headers },
      { method: 'GET', path: '/contacts/x', headers, setupRequest: (req) => ({ ...req, path: `/contacts/${pick(contactIds)}` }) },
      { method: 'GET', path: '/tags', headers },
      {
        method: 'POST',
        path: '/accounts/x/activities',
        headers,
        body: JSON.stringify({ type: 'note', summary: 'Called back', body: 'Left a message about the renewal.' }),
        setupRequest: (req) => ({ ...req, path: `/accounts/${pick(accountIds)}/activities` }),
      },
    ];
    const run = (duration: number) =>
      autocannon({ url: baseUrl, connections, duration, requests, timeout: 10 }) as unknown as Promise<autocannon.Result>;

    await run(5); // warm-up: JIT, caches, pool
    const rssWarm = rssMiB(pid);
    let rssPeak = rssWarm;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(pid))), 1000);
    const result = await run(seconds);
    clearInterval(sampler);
    const rssEnd = rssMiB(pid);
    return {
      name: `mixed load: account search, contact read, tag list, activity create (${connections} connections, ${seconds} s)`,
      requests: result.requests.total,
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxMs: result.latency.max,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes: result.statusCodeStats,
      apiRssMiB: { start: rssStart, afterWarmup: rssWarm, peak: rssPeak, end: rssEnd },
      data: { accounts: MIXED_ACCOUNTS, contacts: MIXED_CONTACTS, tags: MIXED_TAGS },
    };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  }
}
