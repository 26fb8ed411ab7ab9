import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { newId } from '../platform/core/ids';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { ACME_SOFTWARE, startCompanySite, type CompanySite } from '../test/support/fake-company-site';
import type { FakeWebsite } from '../test/support/fake-website';
import type { readinessNightlyWorkflow } from '../workflows/readiness';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';
import { load } from './load';

// Customer intelligence at batch size: ACCOUNTS accounts whose websites are local test sites are
// researched (RESEARCH_PARALLEL runs in flight), then fit-scored in ONE ICP-fit batch; figures are the
// wall times and the batch workflow's history (events and bytes). Then NIGHTLY accounts get a nightly
// readiness refresh while GET /accounts/{id}/readiness is loaded; its p50 is compared with the same load
// on an idle service. The worker runs as a process of its own, as in production.

const ACCOUNTS = Number(process.env.BENCH_INTEL_ACCOUNTS ?? 100);
const NIGHTLY = Number(process.env.BENCH_READINESS_ACCOUNTS ?? 5000);
const RESEARCH_PARALLEL = 10;
const DEADLINE_MS = 10 * 60_000;

const SITES: CompanySite[] = [
  ACME_SOFTWARE,
  {
    ...ACME_SOFTWARE,
    name: 'Bolt Logistics',
    pitch: 'Freight and warehousing logistics across Europe',
    employees: 900,
    city: 'Lyon',
    country: 'France',
    scripts: [],
  },
  {
    ...ACME_SOFTWARE,
    name: 'Cura Clinic',
    pitch: 'Healthcare for patients, clinic and hospital teams',
    employees: 60,
    city: 'Vienna',
    country: 'Austria',
  },
  {
    ...ACME_SOFTWARE,
    name: 'Delta Retail',
    pitch: 'Online store and retail e-commerce',
    employees: 40,
    city: 'Madrid',
    country: 'Spain',
    scripts: ['https://cdn.shopify.com/s.js'],
  },
];

export async function benchIntelligence(seconds: number) {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      searchAttributes: [ORGANIZATION_ID],
      log: { format: 'json', level: 'error' },
    },
  });
  const queue = 'bench-intelligence';
  const env = await startBenchEnvironment({
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: queue,
    WEB_FETCH_ALLOW_PRIVATE: 'true',
  });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-worker-'));
  const sites: FakeWebsite[] = [];
  let worker: ChildProcess | undefined;
  try {
    const { deps, baseUrl } = env;
    const token = await deps.devIdp!.sign({
      sub: 'bench-user',
      org_id: 'bench-org',
      org_ids: ['bench-org'],
      permissions: ['api:read', 'api:manage'],
    });
    const call = jsonCaller(baseUrl, () => token);
    const until = async (p: string) => {
      const started = performance.now();
      for (;;) {
        const run = await call('GET', p);
        if (['completed', 'failed', 'cancelled', 'incomplete'].includes(run.status)) return run;
        if (performance.now() - started > DEADLINE_MS) throw new Error(`${p} not final after the deadline`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const orgId = (await call('GET', '/me')).organization.id as string;
    for (const s of SITES) sites.push(await startCompanySite(s));
    worker = await startWorker({
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: queue,
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      DATA_DIR: workerDir,
    });

    // ---- research, then one ICP-fit batch ----
    const accountIds: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++)
      accountIds.push((await call('POST', '/accounts', { name: `Bench ${i}`, website: sites[i % sites.length]!.origin })).id);
    const researchStarted = performance.now();
    let next = 0;
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: RESEARCH_PARALLEL }, async () => {
        while (next < accountIds.length) {
          const id = accountIds[next++]!;
          const run = await until(
            `/intelligence/research-runs/${(await call('POST', '/intelligence/research-runs', { account_id: id })).id}`,
          );
          statuses[run.status] = (statuses[run.status] ?? 0) + 1;
        }
      }),
    );
    const researchSeconds = (performance.now() - researchStarted) / 1000;

    const profile = await call('POST', '/intelligence/icp-profiles', {
      name: 'Bench ICP',
      criteria: [
        { type: 'industry', values: ['software', 'healthcare'], weight: 40 },
        { type: 'employees', values: ['50-200'], weight: 30 },
        { type: 'country', values: ['Germany', 'Austria'], weight: 20 },
        { type: 'technology', values: ['HubSpot'], weight: 10 },
      ],
    });
    const fitStarted = performance.now();
    const started = await call('POST', '/intelligence/icp-fit-runs', { profile_id: profile.id, account_ids: accountIds });
    const fit = await until(`/intelligence/icp-fit-runs/${started.id}`);
    const fitSeconds = (performance.now() - fitStarted) / 1000;
    const handle = deps.temporal.workflow.getHandle(started.workflow_id);
    const history = await handle.fetchHistory();
    const grades: Record<string, number> = {};
    for (const r of fit.results) grades[r.grade ?? r.outcome] = (grades[r.grade ?? r.outcome] ?? 0) + 1;

    // ---- readiness reads during a nightly refresh ----
    const rows = Array.from({ length: NIGHTLY }, (_, i) => ({
      id: newId(),
      org_id: orgId,
      name: `Nightly ${String(i).padStart(5, '0')}`,
      industry: i % 3 ? 'software' : 'retail',
      employee_count: (i % 400) + 1,
    }));
    for (let i = 0; i < rows.length; i += 1000) await deps.sql`INSERT INTO accounts ${deps.sql(rows.slice(i, i + 1000))}`;
    await deps.sql`ANALYZE accounts`;
    const target = accountIds[0]!;
    await call('POST', `/accounts/${target}/readiness/refresh`);
    await until2(() =>
      call('GET', `/accounts/${target}/readiness`).then(
        () => true,
        () => false,
      ),
    );
    const url = `${baseUrl}/accounts/${target}/readiness`;
    const headers = { Authorization: `Bearer ${token}` };
    await load(url, { headers, seconds: 2 });
    const idle = await load(url, { headers, seconds });

    const nightlyStarted = performance.now();
    const nightlyId = `readiness-nightly-run:${orgId}`;
    const nightly = deps.temporal.workflow.execute<typeof readinessNightlyWorkflow>('readinessNightlyWorkflow', {
      workflowId: nightlyId,
      taskQueue: queue,
      args: [{ orgId, staleHours: 20, afterId: null }],
      typedSearchAttributes: [{ key: ORGANIZATION_ID, value: orgId }],
    });
    let nightlyDone = false;
    const nightlyResult = nightly.then((r) => ((nightlyDone = true), r));
    const during = await load(url, { headers, seconds });
    const duringWasRunning = !nightlyDone;
    const refreshed = await nightlyResult;
    const nightlySeconds = (performance.now() - nightlyStarted) / 1000;
    const runs: number[] = [];
    for await (const execution of deps.temporal.workflow.list({ query: `WorkflowId = '${nightlyId}'` })) {
      runs.push((await deps.temporal.workflow.getHandle(execution.workflowId, execution.runId).describe()).historyLength);
    }

    return {
      accounts: ACCOUNTS,
      research: { runs: ACCOUNTS, parallel: RESEARCH_PARALLEL, seconds: round(researchSeconds), statuses },
      icp_fit_batch: {
        accounts: ACCOUNTS,
        status: fit.status,
        wall_seconds: round(fitSeconds),
        history_events: history.events?.length ?? 0,
        history_bytes: JSON.stringify(history).length,
        grades,
      },
      readiness_read: {
        nightly_accounts: NIGHTLY + ACCOUNTS,
        idle: idle,
        during_nightly: during,
        nightly_still_running_at_end_of_load: duringWasRunning,
        nightly_refreshed: refreshed.refreshed,
        nightly_seconds: round(nightlySeconds),
        nightly_runs: runs.length,
        nightly_history_length_max: Math.max(...runs),
      },
    };
  } finally {
    await stopWorker(worker);
    await Promise.all(sites.map((s) => s.close()));
    await env.close();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  }
}

const round = (n: number) => Number(n.toFixed(2));

async function until2(check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > DEADLINE_MS) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 100));
  }
}
