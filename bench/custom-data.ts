import { performance } from 'node:perf_hooks';
import { countLive, mergeStaged, stageRows, tombstoneAbsent } from '../db/custom-data';
import { keyOf } from '../domain/custom-data';
import type { BenchEnvironment } from './environment';

const ROWS = 100_000;
const CHANGED = 0.1;
const GONE = 0.05;

const TABLE = {
  key: ['id'],
  properties: [
    { name: 'id', type: 'integer' },
    { name: 'email', type: 'string' },
    { name: 'plan', type: 'string' },
    { name: 'seats', type: 'integer' },
    { name: 'mrr', type: 'number' },
    { name: 'active', type: 'boolean' },
    { name: 'renews_at', type: 'timestamp' },
  ],
};

const row = (i: number, version: number) => ({
  id: i,
  email: `user${i}@example.com`,
  plan: ['free', 'team', 'business'][i % 3],
  seats: (i % 50) + 1 + version,
  mrr: ((i % 500) * 9.99 + version).toFixed(2),
  active: i % 7 !== 0,
  renews_at: new Date(Date.UTC(2026, i % 12, (i % 28) + 1)).toISOString(),
});

/** The base snapshot, and the next one: 10 % of rows changed, 5 % gone. */
function snapshots() {
  const base = Array.from({ length: ROWS }, (_, i) => row(i, 0));
  const next = base.filter((_, i) => i % Math.round(1 / GONE) !== 1).map((r, i) => (i % Math.round(1 / CHANGED) === 0 ? row(r.id, 1) : r));
  return { base, next };
}

/**
 * A 100,000-row snapshot with 10 % changed and 5 % gone: POST .../replace end to end (JSON over HTTP,
 * validation, COPY, merge, report) against a raw COPY of the same rows and the same merge SQL run
 * straight on the same Postgres. Goal: the endpoint at least half as fast as the raw path.
 */
export async function benchCustomData(env: BenchEnvironment) {
  const orgExternal = `bench-org-${Date.now()}`;
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: orgExternal,
    org_ids: [orgExternal],
    permissions: ['api:read', 'api:manage'],
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${env.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const me = await call('GET', '/me');
  const orgId = (me.organization as { id: string }).id;
  const { base, next } = snapshots();
  await call('PUT', '/core/custom-data/tables/bench_api', TABLE);
  await call('PUT', '/core/custom-data/tables/bench_raw', TABLE);
  await call('POST', '/core/custom-data/tables/bench_api/replace', { rows: base });
  await call('POST', '/core/custom-data/tables/bench_raw/replace', { rows: base });

  let start = performance.now();
  const report = await call('POST', '/core/custom-data/tables/bench_api/replace', { rows: next });
  const apiMs = performance.now() - start;

  const sql = env.deps.sql;
  const [table] = await sql<{ id: string }[]>`SELECT id FROM custom_data_tables WHERE org_id = ${orgId} AND name = 'bench_raw'`;
  start = performance.now();
  const raw = await sql.begin(async (tx) => {
    await stageRows(
      tx,
      orgId,
      next.map((r) => [keyOf(r, TABLE.key)!, JSON.stringify(r)] as [string, string]),
    );
    const written = await mergeStaged(tx, orgId, table!.id, next.length);
    const tombstoned = await tombstoneAbsent(tx, orgId, table!.id);
    return { written, tombstoned, live_after: await countLive(tx, orgId, table!.id) };
  });
  const rawMs = performance.now() - start;

  return {
    name: 'POST /core/custom-data/tables/{name}/replace, 100,000 rows (10 % changed, 5 % gone) vs raw COPY + merge SQL',
    rows: next.length,
    api: {
      ms: Math.round(apiMs),
      report: { written: report.written, unchanged: report.unchanged, tombstoned: report.tombstoned, live_after: report.live_after },
    },
    raw: { ms: Math.round(rawMs), ...raw },
    ratio: Number((rawMs / apiMs).toFixed(2)),
    goal: 'ratio >= 0.5 (raw time / endpoint time)',
  };
}
