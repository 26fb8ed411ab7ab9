import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/tools';

// Workflow code must stay deterministic: no Node built-ins, no runtime imports of activities, the
// database or platform code. Only @temporalio/workflow, other workflow files and type-only imports.
const dir = path.join(PROJECT_ROOT, 'workflows');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts'));
const IMPORT = /^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms;

describe('workflow files', () => {
  it.each(files)('%s imports nothing with side effects', (file) => {
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    const offending: string[] = [];
    for (const [, typeOnly, from] of source.matchAll(IMPORT)) {
      if (typeOnly) continue;
      if (from === '@temporalio/workflow' || from!.startsWith('./')) continue;
      offending.push(from!);
    }
    expect(offending).toEqual([]);
  });
});
