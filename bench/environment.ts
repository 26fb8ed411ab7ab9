import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import postgres from 'postgres';
import { createApp } from '../api/app';
import { buildDeps } from '../server/build-deps';
import type { AppDeps } from '../api/deps';
import { createSql } from '../db/client';
import { migrate } from '../db/migrate';
import { loadConfig } from '../platform/core/config';
import { startEmbeddedPostgres } from '../dev-servers/embedded-postgres';
import { createLogger } from '../platform/core/logger';
import { freePort } from '../dev-servers/ports';

export interface BenchEnvironment {
  deps: AppDeps;
  baseUrl: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/** A throwaway embedded Postgres under `dir` with a migrated `bench` database. */
export async function startBenchDatabase(dir: string) {
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort() });
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe('CREATE DATABASE bench');
  await admin.end();
  const databaseUrl = pg.urlFor('bench');
  await migrate(databaseUrl);
  return { pg, databaseUrl };
}

/**
 * The JSON calls a bench makes through the API as one caller: the bearer token is read at each call
 * (a bench may swap a session for a key it minted); any status from 300 up throws with the body.
 */
export function jsonCaller(baseUrl: string, token: () => string) {
  return async (method: string, p: string, body?: unknown): Promise<Record<string, any>> => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { Authorization: `Bearer ${token()}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = res.status === 204 ? {} : ((await res.json()) as Record<string, any>);
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

/** A throwaway Postgres and the real app on a free port; Temporal is given by address when a bench needs it. */
export async function startBenchEnvironment(env: Record<string, string> = {}): Promise<BenchEnvironment> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-'));
  fs.chmodSync(dir, 0o755);
  const { pg, databaseUrl } = await startBenchDatabase(dir);
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '20',
    LOG_LEVEL: 'silent',
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    // Benches measure throughput: quotas far above any bench's rate, while every request still goes through
    // the limiter (one lease per RATE_LIMIT_LEASE_MAX requests, 1,000).
    RATE_LIMIT_ORG_REQUESTS: '1000000000',
    RATE_LIMIT_KEY_REQUESTS: '1000000000',
    ...env,
  });
  const deps = await buildDeps(config, { sql: createSql(databaseUrl, 20), logger: createLogger('silent') });
  await deps.storage.ensureReady();
  const { app } = createApp(deps);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(port, '127.0.0.1', () => resolve(s));
  });
  return {
    deps,
    baseUrl: `http://127.0.0.1:${port}`,
    databaseUrl,
    async close() {
      server.closeAllConnections();
      server.close();
      await deps.sql.end({ timeout: 5 });
      await deps.temporal.connection.close().catch(() => {});
      await pg.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
