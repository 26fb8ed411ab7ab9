import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, waitForPort } from './ports';
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

/** Starts a real S3-compatible server on free loopback ports, data under dataDir. */
export async function startS3Server(dataDir: string, log: (line: string) => void = () => {}): Promise<S3Server> {
  const found = findS3Server();
  if (!found) throw new Error('no S3 server found: run `npm run tools` (scripts/install-tools.sh) first');
  fs.mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess;
  if (found.kind === 'minio') {
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
    // Each weed server also listens on port + 10000 for gRPC, so pick ports below 55000.
    const ports: number[] = [];
    while (ports.length < 3) {
      const p = await freePort();
      if (p < 55_000 && !ports.includes(p)) ports.push(p);
    }
    const [master, volume, filer] = ports as [number, number, number];
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
  await waitForPort(port, '127.0.0.1', 60_000);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: ACCESS_KEY,
    secretAccessKey: SECRET_KEY,
    region: 'us-east-1',
    kind: found.kind,
    stop: () => stopChild(child),
  };
}
