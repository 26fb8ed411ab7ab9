import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, findTemporalCli } from '../../platform/core/tools';

export const HISTORIES_DIR = path.join(PROJECT_ROOT, 'test', 'histories');

/**
 * With UPDATE_HISTORIES=1, a workflow test keeps the history of a representative run under
 * test/histories/<name>.json (the Temporal CLI's JSON form); the replay test then guards every later
 * change of workflow code against non-determinism on those histories.
 */
export function keepHistory(address: string, workflowId: string, name: string): void {
  if (process.env.UPDATE_HISTORIES !== '1') return;
  const json = execFileSync(
    findTemporalCli()!,
    ['workflow', 'show', '--address', address, '--workflow-id', workflowId, '--output', 'json'],
    {
      encoding: 'utf8',
    },
  );
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  fs.writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), json);
}
