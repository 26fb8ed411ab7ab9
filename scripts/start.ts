import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { loadConfigOrExit } from '../platform/config';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../platform/embedded-postgres';
import { preferredPort, waitForPort } from '../platform/ports';
import { PROJECT_ROOT, findTemporalCli } from '../platform/tools';

// `npm start`: the whole service on the embedded defaults. Postgres (embedded-postgres), the Temporal
// dev server with its UI, one worker and the API, each a child stopped cleanly on SIGINT/SIGTERM.
const config = loadConfigOrExit();
const say = (line: string) => process.stdout.write(`[start] ${line}\n`);
fs.mkdirSync(config.dataDir, { recursive: true });

const children: { name: string; child: ChildProcess }[] = [];
let database: EmbeddedDatabase | undefined;
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (stopping) return new Promise(() => {});
  stopping = true;
  say('stopping');
  // API and worker first (they drain), then Temporal, then Postgres.
  for (const group of [['api', 'worker'], ['temporal']]) {
    await Promise.all(children.filter((c) => group.includes(c.name)).map(({ child }) => stopChild(child)));
  }
  await database?.stop();
  say('stopped');
  process.exit(code);
}

/** SIGINT is what each child handles as a graceful stop (the Temporal CLI ignores SIGTERM); SIGKILL after 15 s. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const fallback = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(fallback);
      resolve();
    });
    child.kill('SIGINT');
  });
}

function run(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
  children.push({ name, child });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); stopping everything`);
      void stopAll(1);
    }
  });
  return child;
}

process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: config.dataDir };

if (!config.DATABASE_URL) {
  const port = await preferredPort(5433);
  say(`starting embedded Postgres on 127.0.0.1:${port} (data in ${path.join(config.dataDir, 'postgres')})`);
  database = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'postgres'), port, durable: true });
  const admin = postgres(database.url, { max: 1, onnotice: () => {} });
  const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = 'app'`;
  if (!exists) await admin.unsafe('CREATE DATABASE app');
  await admin.end();
  env.DATABASE_URL = database.urlFor('app');
}

let temporalUi: string | undefined;
if (!config.TEMPORAL_ADDRESS) {
  let cli = findTemporalCli();
  if (!cli) {
    say('temporal CLI not found; installing it (scripts/install-tools.sh temporal)');
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'temporal'], { stdio: 'inherit' });
    cli = findTemporalCli();
    if (!cli) {
      say('could not install the temporal CLI; set TEMPORAL_ADDRESS or TEMPORAL_CLI_PATH');
      await stopAll(1);
    }
  }
  const port = await preferredPort(7233);
  const uiPort = await preferredPort(config.TEMPORAL_UI_PORT);
  say(`starting Temporal dev server on 127.0.0.1:${port} (${cli})`);
  run('temporal', cli!, [
    'server', 'start-dev',
    '--ip', '127.0.0.1',
    '--port', String(port),
    '--ui-port', String(uiPort),
    '--db-filename', path.join(config.dataDir, 'temporal.db'),
    '--search-attribute', 'OrganizationId=Keyword',
    '--log-level', 'warn',
  ], env);
  await waitForPort(port);
  await waitForPort(uiPort);
  env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
  temporalUi = `http://localhost:${uiPort}`;
}

const tsx = ['--import', 'tsx'];
run('worker', process.execPath, [...tsx, path.join(PROJECT_ROOT, 'worker', 'main.ts')], env);
run('api', process.execPath, [...tsx, path.join(PROJECT_ROOT, 'api', 'main.ts')], env);

const base = `http://localhost:${config.PORT}`;
for (let i = 0; ; i++) {
  const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
  if (ok) break;
  if (i > 600) await stopAll(1);
  await new Promise((r) => setTimeout(r, 100));
}
say(`API         ${base}`);
say(`API docs    ${base}/docs`);
if (temporalUi) say(`Temporal UI ${temporalUi}`);
say('ready (Ctrl+C stops everything)');
