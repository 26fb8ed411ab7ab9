import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import { createApp, type AreaRoutes } from '../../api/app';
import { buildDeps } from '../../server/build-deps';
import { listen } from '../../server/listen';
import type { AppDeps } from '../../api/deps';
import { createSql, databaseTimeouts } from '../../db/client';
import { loadConfig, type Config } from '../../platform/core/config';
import type { SessionClaims } from '../../platform/core/dev-idp';
import { createLogger } from '../../platform/core/logger';
import { freePort } from '../../dev-servers/ports';
import { createTemporalClient } from '../../platform/core/temporal';
import { createWorker } from '../../worker/create-worker';
import { createTestDatabase } from './database';
import { httpClient, type Request } from './http';

export interface TestContext {
  config: Config;
  deps: AppDeps;
  baseUrl: string;
  request: Request;
  /** Every log line the app wrote, for assertions that nothing secret is logged. */
  logs: string[];
  /** A session JWT of the development identity provider. */
  session(claims: SessionClaims, ttlSeconds?: number): Promise<string>;
  close(): Promise<void>;
}

export interface TestContextOptions {
  /** Run a worker on this file's own task queue with the bundle built by the global setup. */
  worker?: boolean;
  /** Use the S3 server instead of the local-disk store. */
  s3?: boolean;
  env?: Record<string, string>;
  /** Routes only this test file needs (e.g. one that throws), added after the service's own. */
  extraAreas?: AreaRoutes[];
}

/**
 * The real app for one test file: its own database, data dir and task queue, on the run's shared
 * Postgres, Temporal and S3 servers, listening on a free port.
 */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const db = await createTestDatabase();
  const dataDir = fs.mkdtempSync(path.join(inject('scratchDir'), 'ctx-'));
  const port = await freePort();
  const s3 = inject('s3');
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: db.url,
    DATABASE_POOL_MAX: '5',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${crypto.randomBytes(5).toString('hex')}`,
    LOG_LEVEL: 'info',
    // The outreach tests' SMTP and IMAP servers listen on loopback (outreach-mailboxes-hosts.test.ts turns it off).
    OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS: 'true',
    // Tests poll and write in bursts: quotas far above any test's rate (every request still goes through the
    // limiter); the rate-limit tests set their own.
    RATE_LIMIT_ORG_REQUESTS: '1000000',
    RATE_LIMIT_KEY_REQUESTS: '1000000',
    // The simulated dialer is off unless a deployment asks for it; the tests ask. Pacing far above any test's
    // calls (the pacing tests set their own).
    DIALER_SIMULATED_ALLOWED: 'true',
    CAMPAIGN_DEFAULT_CALLS_PER_SECOND: '1000',
    CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER: '1000',
    ...(options.s3
      ? {
          S3_ENDPOINT: s3.endpoint,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          S3_REGION: s3.region,
          S3_BUCKET: `b-${crypto.randomBytes(5).toString('hex')}`,
        }
      : {}),
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = createLogger(config.LOG_LEVEL, sink);
  const sql = createSql(db.url, 5, databaseTimeouts(config));
  const temporal = createTemporalClient(config.TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE, {}, config.TEMPORAL_REQUEST_TIMEOUT_MS);
  const deps = await buildDeps(config, { sql, temporal, logger });
  await deps.storage.ensureReady();
  const { app } = createApp(deps, options.extraAreas);
  const server: Server = await listen(app, port, '127.0.0.1');

  let stopWorker: (() => Promise<void>) | undefined;
  if (options.worker) {
    const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS! });
    const { worker } = await createWorker(
      { config, sql, storage: deps.storage, logger, temporal },
      { connection, workflowBundlePath: inject('workflowBundlePath') },
    );
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
      await connection.close();
    };
  }

  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    config,
    deps,
    baseUrl,
    request: httpClient(baseUrl),
    logs,
    session: (claims, ttl) => deps.devIdp!.sign(claims, ttl),
    async close() {
      await stopWorker?.();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await temporal.connection.close().catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}

/** The app's log lines as records (one JSON object per line), for assertions on what was logged. */
export function logRecords<T extends { msg: string }>(ctx: Pick<TestContext, 'logs'>): T[] {
  return ctx.logs.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as T);
}
