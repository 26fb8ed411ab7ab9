import { performance } from 'node:perf_hooks';
import { listAccounts } from '../db/accounts';
import { createSql, type Sql } from '../db/client';
import { newId } from '../platform/core/ids';
import type { BenchEnvironment } from './environment';
import { load, type LoadResult } from './load';

const CONNECTIONS = 32;
const ORGS = 50;
const ACCOUNTS_IN_MAIN_ORG = 10_000;
const ACCOUNTS_PER_OTHER_ORG = 2_000;
const BATCH = 1_000;

const PREFIXES = [
  'Northwind',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Vandelay',
  'Stark',
  'Wayne',
  'Tyrell',
  'Cyberdyne',
  'Soylent',
  'Wonka',
  'Gringotts',
  'Oscorp',
  'Aperture',
  'Monarch',
  'Blue Sun',
  'Acme',
  'Pied Piper',
  'Dunder',
  'Massive',
  'Nakatomi',
  'Virtucon',
  'Sirius',
  'Ollivander',
  'Zorg',
  'Genco',
  'Krusty',
  'Ajax',
  'Bluth',
];
const SUFFIXES = ['Systems', 'Labs', 'Group', 'Partners', 'Holdings', 'Industries', 'Networks', 'Solutions', 'Works', 'Logistics'];
const INDUSTRIES = ['software', 'retail', 'energy', 'healthcare', 'logistics', 'media', null];

/** Search terms measured: a broad one (a full default page of 200) and a selective one (a handful of rows). */
const TERMS = ['systems', 'acme labs 00'];

function account(orgId: string, i: number) {
  const prefix = PREFIXES[i % PREFIXES.length]!;
  const suffix = SUFFIXES[Math.floor(i / PREFIXES.length) % SUFFIXES.length]!;
  const n = String(i).padStart(5, '0');
  const name = `${prefix} ${suffix} ${n}`;
  return {
    id: newId(),
    org_id: orgId,
    name,
    domain: `${name.toLowerCase().replace(/ /g, '-')}.com`,
    industry: INDUSTRIES[i % INDUSTRIES.length] ?? null,
    health_score: i % 3 === 0 ? null : i % 101,
  };
}

/** 10k accounts in the measured organization and 2k in each of 49 others, one multi-row INSERT per batch. */
async function seed(sql: Sql, mainOrgId: string): Promise<number> {
  const orgIds = [mainOrgId];
  const others = Array.from({ length: ORGS - 1 }, (_, i) => ({ id: newId(), external_id: `bench-other-${i}` }));
  await sql`INSERT INTO organizations ${sql(others)}`;
  orgIds.push(...others.map((o) => o.id));
  let total = 0;
  for (const orgId of orgIds) {
    const count = orgId === mainOrgId ? ACCOUNTS_IN_MAIN_ORG : ACCOUNTS_PER_OTHER_ORG;
    for (let start = 0; start < count; start += BATCH) {
      const rows = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => account(orgId, start + k));
      await sql`INSERT INTO accounts ${sql(rows)}`;
      total += rows.length;
    }
  }
  await sql`ANALYZE accounts`;
  return total;
}

/** The handler's query straight through postgres.js, `connections` callers at once for `seconds`. */
async function direct(sql: Sql, orgId: string, search: string, connections: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await listAccounts(sql, orgId, { limit: 200, offset: 0, search });
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((x, y) => x - y);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  return { requestsPerSecond: Math.round(latencies.length / seconds), p50Ms: at(0.5), p99Ms: at(0.99), non2xx: 0, errors };
}

/**
 * GET /accounts?search= against one organization of 10k accounts among 50, next to the same query run
 * straight through postgres.js in this process at the same concurrency. Goal: the API at >= 60 % of it.
 */
export async function benchAccounts(env: BenchEnvironment, seconds: number) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-accounts',
    org_ids: ['bench-accounts'],
    permissions: ['api:read', 'api:manage'],
  });
  const created = await fetch(`${env.baseUrl}/organization-pats`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['api:read'] }),
  }).then((r) => r.json() as Promise<{ pat_key: string; organization_id: string }>);
  const headers = { Authorization: `Bearer ${created.pat_key}` };
  const orgId = created.organization_id;
  const seeded = await seed(env.deps.sql, orgId);

  // The direct side gets a pool of the API's size, so both sides have the same number of connections.
  const sql = createSql(env.databaseUrl, env.deps.config.DATABASE_POOL_MAX);
  const runs: Record<string, unknown> = {};
  try {
    for (const term of TERMS) {
      const url = `${env.baseUrl}/accounts?search=${encodeURIComponent(term)}`;
      const rows = ((await fetch(url, { headers }).then((r) => r.json())) as unknown[]).length;
      // Warm both paths (JIT, prepared statements, caches) before measuring.
      await load(url, { headers, connections: CONNECTIONS, seconds: 2 });
      await direct(sql, orgId, term, CONNECTIONS, 2);
      const api = await load(url, { headers, connections: CONNECTIONS, seconds });
      const db = await direct(sql, orgId, term, CONNECTIONS, seconds);
      runs[term] = { rows_per_response: rows, api, direct: db, ratio: Number((api.requestsPerSecond / db.requestsPerSecond).toFixed(2)) };
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
  return {
    name: `GET /accounts?search= vs the same query through postgres.js (${CONNECTIONS} connections)`,
    data: { organizations: ORGS, accounts: seeded, accounts_in_measured_org: ACCOUNTS_IN_MAIN_ORG },
    runs,
    goal: 'ratio >= 0.6',
  };
}
