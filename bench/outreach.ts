import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SMTPServer } from 'smtp-server';
import { newId } from '../platform/core/ids';
import { freePort } from '../dev-servers/ports';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findTemporalCli } from '../platform/core/tools';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// Outreach sending on a real Temporal dev server, Postgres, worker process and SMTP server (one that
// accepts and discards): ENROLLMENTS enrollments in one single-step sequence over MAILBOXES mailboxes
// with a daily limit of LIMIT each. A simulated day ends when every mailbox is full; the next starts by
// moving the day's sends one local day back in Postgres (the times-in-Postgres clock of the tests).
// Figures: sends per simulated day (never above MAILBOXES × LIMIT) and per mailbox and day (never above
// LIMIT), sends/s through the workflow while a day's budget lasts, and the sender's history length per
// run (bounded by continue-as-new).

const ENROLLMENTS = Number(process.env.BENCH_OUTREACH_ENROLLMENTS ?? 5000);
const MAILBOXES = Number(process.env.BENCH_OUTREACH_MAILBOXES ?? 20);
const LIMIT = Number(process.env.BENCH_OUTREACH_LIMIT ?? 50);
const CYCLES_PER_RUN = process.env.BENCH_OUTREACH_CYCLES_PER_RUN ?? '20';
const DEADLINE_MS = 20 * 60_000;

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = DEADLINE_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function benchOutreach() {
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
  let accepted = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('end', () => {
        accepted += 1;
        callback();
      });
      stream.resume();
    },
  });
  const smtpPort = await freePort();
  await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve));
  // The SMTP server is on loopback: allowed here as in the tests (a deployment allows public mail hosts only).
  const settings = {
    OUTREACH_POLL_INTERVAL_MS: '1000',
    OUTREACH_CYCLES_PER_RUN: CYCLES_PER_RUN,
    OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS: 'true',
  };
  const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-outreach', ...settings });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-worker-'));
  let worker: ChildProcess | undefined;
  try {
    worker = await startWorker({
      ...settings,
      DATABASE_URL: env.databaseUrl,
      DATABASE_POOL_MAX: '20',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-outreach',
      DATA_DIR: workerDir,
      LOG_LEVEL: 'warn',
    });
    return await measure(env, smtpPort, () => accepted);
  } finally {
    await stopWorker(worker);
    await env.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  }
}

async function measure(bench: Awaited<ReturnType<typeof startBenchEnvironment>>, smtpPort: number, accepted: () => number) {
  const { deps, baseUrl } = bench;
  const session = await deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-org',
    org_ids: ['bench-org'],
    permissions: ['api:read', 'api:manage', 'outreach:manage'],
  });
  const call = jsonCaller(baseUrl, () => session);
  const orgId = (await call('GET', '/me')).organization.id as string;
  const mailboxIds: string[] = [];
  for (let i = 0; i < MAILBOXES; i++) {
    const mb = await call('POST', '/outreach/mailboxes', {
      email_address: `sender${i}@bench-outreach.test`,
      smtp: { host: '127.0.0.1', port: smtpPort, secure: false },
      daily_limit: LIMIT,
      window_start: '00:00',
      window_end: '24:00',
      window_days: [1, 2, 3, 4, 5, 6, 7],
    });
    mailboxIds.push(mb.id as string);
  }
  // The benchmark measures throughput: no spacing between two sends of a mailbox.
  await deps.sql`UPDATE outreach_mailboxes SET send_gap_min_seconds = 0, send_gap_max_seconds = 0 WHERE org_id = ${orgId}`;
  // Contacts straight into Postgres (the contacts API is not what is measured), then enrolled by the API.
  const contactIds = Array.from({ length: ENROLLMENTS }, () => newId());
  for (let i = 0; i < contactIds.length; i += 1000) {
    const rows = contactIds
      .slice(i, i + 1000)
      .map((id, j) => ({ id, org_id: orgId, first_name: `P${i + j}`, email: `p${i + j}@prospects.test` }));
    await deps.sql`INSERT INTO contacts ${deps.sql(rows)}`;
  }
  const seq = await call('POST', '/outreach/sequencer/sequences', {
    name: 'Bench',
    steps: [{ delay_days: 0, subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a short note.' }],
    mailbox_ids: mailboxIds,
  });
  for (let i = 0; i < contactIds.length; i += 1000) {
    await call('POST', `/outreach/sequencer/sequences/${seq.id}/enrollments`, { contact_ids: contactIds.slice(i, i + 1000) });
  }
  const sent = async () =>
    (
      await deps.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM outreach_messages WHERE org_id = ${orgId} AND status IN ('sent', 'unconfirmed')`
    )[0]!.n;
  const dailyBudget = MAILBOXES * LIMIT;

  const days: { day: number; sent: number; seconds: number; sends_per_second: number }[] = [];
  const startedAt = performance.now();
  await call('POST', `/outreach/sequencer/sequences/${seq.id}/activate`);
  for (let day = 1; (await sent()) < ENROLLMENTS; day++) {
    const before = await sent();
    const target = Math.min(ENROLLMENTS, before + dailyBudget);
    const t0 = performance.now();
    await waitUntil(async () => (await sent()) >= target, `day ${day}: ${target} sends`);
    const seconds = (performance.now() - t0) / 1000;
    // The day's budget is spent: two more poll intervals pass without a send beyond it.
    await new Promise((r) => setTimeout(r, 2500));
    const after = await sent();
    days.push({
      day,
      sent: after - before,
      seconds: Number(seconds.toFixed(1)),
      sends_per_second: Number(((target - before) / seconds).toFixed(1)),
    });
    if (after >= ENROLLMENTS) break;
    // The next simulated local day: every send so far moves one day back.
    await deps.sql`UPDATE outreach_messages SET local_day = local_day - 1, sent_at = sent_at - interval '1 day' WHERE org_id = ${orgId}`;
  }
  const totalSeconds = (performance.now() - startedAt) / 1000;
  await waitUntil(
    async () => (await call('GET', `/outreach/sequencer/sequences/${seq.id}`)).status === 'completed',
    'sequence completion',
    60_000,
  );

  const perMailboxDay = await deps.sql<{ max: number }[]>`
    SELECT max(n)::int AS max FROM (SELECT count(*) AS n FROM outreach_messages WHERE org_id = ${orgId} GROUP BY mailbox_id, local_day) x`;
  const perDay = await deps.sql<{ max: number }[]>`
    SELECT max(n)::int AS max FROM (SELECT count(*) AS n FROM outreach_messages WHERE org_id = ${orgId} GROUP BY local_day) x`;
  const runs: number[] = [];
  for await (const run of deps.temporal.workflow.list({ query: `WorkflowId = 'outreach-sequence:${seq.id}'` }))
    runs.push(run.historyLength);
  return {
    enrollments: ENROLLMENTS,
    mailboxes: MAILBOXES,
    daily_limit: LIMIT,
    days,
    max_sends_per_simulated_day: perDay[0]!.max,
    max_sends_per_mailbox_day: perMailboxDay[0]!.max,
    smtp_accepted: accepted(),
    total_seconds: Number(totalSeconds.toFixed(1)),
    sender_runs: runs.length,
    sender_history_events_max: Math.max(...runs),
    sender_cycles_per_run: Number(CYCLES_PER_RUN),
  };
}
