import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ALL_SCOPES } from '../api/auth/scopes';
import { freePort } from '../dev-servers/ports';
import { PROJECT_ROOT } from '../platform/core/tools';

// `npm run fuzz`: starts the whole service the way `npm start` does, on a fresh DATA_DIR and free ports,
// mints a development session and an `ak_` key of every scope, and runs Schemathesis (pinned, from
// .tools/venv) over the live /openapi.json with every check (the default: a `--checks` here would override
// the per-operation switches of schemathesis.toml) and phase, a bounded number of examples per
// operation and a fixed seed. Exits non-zero on any failure. Settings: test/contract/schemathesis.toml;
// FUZZ_MAX_EXAMPLES and FUZZ_SEED override the defaults, extra arguments go to `st run`.
const say = (line: string) => process.stdout.write(`[fuzz] ${line}\n`);
const MAX_EXAMPLES = process.env.FUZZ_MAX_EXAMPLES ?? '15';
const SEED = process.env.FUZZ_SEED ?? '1';
const STARTUP_TIMEOUT_MS = 180_000;

const st = path.join(PROJECT_ROOT, '.tools', 'venv', 'bin', 'st');
if (!fs.existsSync(st)) {
  say('schemathesis not found; installing it (scripts/install-tools.sh schemathesis)');
  const installed = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'schemathesis'], { stdio: 'inherit' });
  if (installed.status !== 0 || !fs.existsSync(st)) {
    say('could not install schemathesis (needs python3 and PyPI)');
    process.exit(1);
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'voice-crm-fuzz-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  TEMPORAL_UI_PORT: String(await freePort()),
  LOG_LEVEL: 'fatal',
  NODE_ENV: 'development',
  // Configured fully, so signed callbacks answer as in production instead of 503 "not configured".
  DIALER_CALLBACK_SECRET: crypto.randomBytes(24).toString('hex'),
  MEETING_WEBHOOK_SECRETS: `whsec_${crypto.randomBytes(24).toString('base64')}`,
  OUTREACH_INBOUND_SECRETS: `whsec_${crypto.randomBytes(24).toString('base64')}`,
  DIALER_SIMULATED_LATENCY_MS: '200',
  // AI chat turns run on the local model here: one model call each keeps the fuzzer's CPU for the others.
  AI_CHAT_MAX_STEPS: '1',
};
// A fresh service of our own: never one the caller's environment points at.
for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'S3_ENDPOINT', 'S3_BUCKET', 'IDP_JWKS_URL', 'PUBLIC_BASE_URL']) delete env[name];

const logFile = path.join(dataDir, 'service.log');
const log = fs.openSync(logFile, 'a');
const service: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'start.ts')], {
  cwd: PROJECT_ROOT,
  env,
  stdio: ['ignore', log, log],
});
const serviceEnded = new Promise<void>((resolve) => service.once('exit', () => resolve()));

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (service.exitCode === null && service.signalCode === null) {
      service.kill('SIGINT');
      const force = setTimeout(() => service.kill('SIGKILL'), 30_000);
      await serviceEnded;
      clearTimeout(force);
    }
    if (code !== 0) {
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
      process.stderr.write(`[fuzz] last lines of the service's output:\n${tail}\n`);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(130));
process.on('SIGTERM', () => void stop(143));

async function waitForHealth(): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.exitCode !== null) throw new Error('the service exited during start');
    if (
      await fetch(`${base}/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the service was not ready within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

try {
  say(`starting the service on ${base} (DATA_DIR ${dataDir})`);
  await waitForHealth();

  const session = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'cli.ts'), 'session', '--user', 'fuzz-user', '--org', 'fuzz-org'],
    {
      cwd: PROJECT_ROOT,
      env,
      encoding: 'utf8',
    },
  );
  if (session.status !== 0) throw new Error(`cli session failed: ${session.stderr}`);
  const sessionToken = session.stdout.trim();
  const created = await fetch(`${base}/organization-pats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fuzz', scopes: ALL_SCOPES }),
  });
  if (created.status !== 200) throw new Error(`POST /organization-pats answered ${created.status}: ${await created.text()}`);
  const { pat_key: apiKey, scopes } = (await created.json()) as { pat_key: string; scopes: string[] };
  // Every operation is reachable: a missing scope would turn its checks into 403s that prove nothing.
  if ([...scopes].sort().join() !== [...ALL_SCOPES].sort().join())
    throw new Error(`the ak_ key got the scopes ${scopes.join(' ')}, not every scope`);

  // Operations the document reserves to sessions or to users (session or pat_) get the session; all others the ak_ key.
  const document = (await fetch(`${base}/openapi.json`).then((r) => r.json())) as {
    paths: Record<
      string,
      Record<string, { operationId?: string; security?: Record<string, string[]>[]; responses?: Record<string, unknown> }>
    >;
  };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
  const idsOf = (matching: (op: (typeof operations)[number]) => boolean) =>
    operations
      .filter(matching)
      .map((op) => op.operationId)
      .filter((id): id is string => !!id);
  const sessionOnly = idsOf((op) => !!op.security?.length && op.security.every((s) => 'sessionAuth' in s || 'userAuth' in s));
  // A declared 503 is the designed end of a bounded wait (Temporal's answer past its deadline, a readiness
  // check): on a busy machine it is the service's answer, not a server error. 500, 502 and undeclared statuses
  // are still failures.
  const declares503 = idsOf((op) => !!op.responses && '503' in op.responses);

  const config = path.join(dataDir, 'schemathesis.toml');
  let toml = fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'contract', 'schemathesis.toml'), 'utf8');
  if (sessionOnly.length) {
    toml += `\n[[operations]]\ninclude-operation-id = ${JSON.stringify(sessionOnly)}\nheaders = { Authorization = "Bearer \${FUZZ_SESSION_TOKEN}" }\n`;
  }
  if (declares503.length) {
    toml += `\n[[operations]]\ninclude-operation-id = ${JSON.stringify(declares503)}\nchecks.not_a_server_error.expected-statuses = ["2XX", "3XX", "4XX", "503"]\n`;
  }
  fs.writeFileSync(config, toml);

  const args = [
    '--config-file',
    config,
    'run',
    `${base}/openapi.json`,
    '--url',
    base,
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    SEED,
    ...process.argv.slice(2),
  ];
  say(`st ${args.join(' ')}`);
  const run = spawn(st, args, {
    cwd: dataDir, // its cache of found failures stays out of the work tree
    env: { ...process.env, FUZZ_API_KEY: apiKey, FUZZ_SESSION_TOKEN: sessionToken, NO_COLOR: '1' },
    stdio: 'inherit',
  });
  const code = await new Promise<number>((resolve) => run.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  say(code === 0 ? 'schemathesis: no failures' : `schemathesis exited with ${code}`);
  await stop(code);
} catch (error) {
  say(`could not run: ${(error as Error).message}`);
  await stop(1);
}
