import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ephemeralPortRange, freePort, isPortFree, waitForPort } from './ports';
import { findS3Server } from '../platform/core/tools';

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  kind: 'minio' | 'weed';
  stop(): Promise<void>;
}

const ACCESS_KEY = 'devaccess';
const SECRET_KEY = 'devsecret-devsecret';

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/**
 * Four ports for weed (master, volume, filer, S3), picked as one set: each free together with its gRPC companion
 * (port + 10,000, which every weed listener also takes), both below the ephemeral range where they can be, and
 * none equal to another or to another's companion. Picked one by one, a released port was handed out twice (the
 * S3 port again as the volume server's), weed's other listener took it first and the S3 API failed to bind.
 */
async function weedPorts(): Promise<[number, number, number, number]> {
  const taken = new Set<number>();
  const ports: number[] = [];
  const below = ephemeralPortRange()[0] - 10_001; // the companion too stays below the ephemeral range
  while (ports.length < 4) {
    const p = await freePort(below);
    if (p >= 55_000 || taken.has(p) || taken.has(p + 10_000) || !(await isPortFree(p + 10_000))) continue;
    ports.push(p);
    taken.add(p).add(p + 10_000);
  }
  return ports as [number, number, number, number];
}

/** Resolves once the port answers while the child still runs; rejects when the child exits first. */
async function listening(child: ChildProcess, port: number): Promise<void> {
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`the S3 server exited (${code ?? signal}) before listening on ${port}`))),
  );
  exited.catch(() => {});
  await Promise.race([waitForPort(port, '127.0.0.1', 60_000), exited]);
  // A listener fails to bind a moment after the others are up: make sure the server is still running.
  await Promise.race([new Promise((r) => setTimeout(r, 500)), exited]);
}

/** Starts a real S3-compatible server on free loopback ports, data under dataDir (three tries at a port race). */
export async function startS3Server(dataDir: string, log: (line: string) => void = () => {}): Promise<S3Server> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startS3ServerOnce(dataDir, log);
    } catch (error) {
      if (attempt >= 3) throw error;
      log(`S3 server did not start (${(error as Error).message}); trying other ports`);
    }
  }
}

async function startS3ServerOnce(dataDir: string, log: (line: string) => void): Promise<S3Server> {
  const found = findS3Server();
  if (!found) throw new Error('no S3 server found: run `npm run tools` (scripts/install-tools.sh) first');
  fs.mkdirSync(dataDir, { recursive: true });
  let port: number;
  let child: ChildProcess;
  if (found.kind === 'minio') {
    port = await freePort();
    const console = await freePort();
    child = spawn(found.path, ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${console}`], {
      env: { ...process.env, MINIO_ROOT_USER: ACCESS_KEY, MINIO_ROOT_PASSWORD: SECRET_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } else {
    const identities = {
      identities: [
        {
          name: 'dev',
          credentials: [{ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    };
    const configFile = path.join(dataDir, 's3.json');
    fs.writeFileSync(configFile, JSON.stringify(identities));
    const [master, volume, filer, s3] = await weedPorts();
    port = s3;
    child = spawn(
      found.path,
      [
        'server',
        `-dir=${dataDir}`,
        '-ip=127.0.0.1',
        '-ip.bind=127.0.0.1',
        `-master.port=${master}`,
        `-volume.port=${volume}`,
        '-filer',
        `-filer.port=${filer}`,
        '-s3',
        `-s3.port=${port}`,
        `-s3.config=${configFile}`,
        // Iceberg and Lance listeners default to fixed ports, which clash between parallel runs.
        '-s3.port.iceberg=0',
        '-s3.port.lance=0',
        '-master.volumeSizeLimitMB=64',
        // Each bucket is a collection that grows volumes of its own; the default cap of 8 volumes runs
        // out after a few test files' buckets (writes then fail with InternalError). 0: by free disk.
        '-volume.max=0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  }
  child.stdout?.on('data', (d) => log(String(d)));
  child.stderr?.on('data', (d) => log(String(d)));
  try {
    await listening(child, port);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: ACCESS_KEY,
    secretAccessKey: SECRET_KEY,
    region: 'us-east-1',
    kind: found.kind,
    stop: () => stopChild(child),
  };
}
