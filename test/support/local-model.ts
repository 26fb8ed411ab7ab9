import fs from 'node:fs';
import { loadConfig } from '../../platform/core/config';
import { localModelPath } from '../../platform/adapters/llm/llm-local';

/**
 * Whether the local language model file is installed (the global setup installs it with
 * `scripts/install-tools.sh llm`). Outside CI a missing model skips its tests; under CI it fails them.
 */
export function hasLocalModel(): boolean {
  const file = localModelPath(loadConfig({}));
  if (fs.existsSync(file)) return true;
  if (process.env.CI === 'true') throw new Error(`The local language model is missing at ${file}: scripts/install-tools.sh llm`);
  return false;
}

/** Settings of a runner for one test: the default model, a small context, its own limits. */
export function localModelConfig(env: Record<string, string> = {}) {
  return loadConfig({ LLM_LOCAL_THREADS: '1', LLM_LOCAL_CONTEXT_SIZE: '1024', ...env });
}
