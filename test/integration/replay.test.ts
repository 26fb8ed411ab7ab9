import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { HISTORIES_DIR } from '../support/histories';

// Every kept history replays against today's workflow bundle: a change that would break a running
// workflow (non-determinism) fails here before it ships.
const files = fs.existsSync(HISTORIES_DIR)
  ? fs
      .readdirSync(HISTORIES_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];

describe('workflow replay', () => {
  it('has kept histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('replays %s', async (file) => {
    const history = JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, file);
  });
});
