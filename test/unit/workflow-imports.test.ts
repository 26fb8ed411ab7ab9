import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';

// Workflow code must stay deterministic: no Node built-ins, no runtime imports of activities, the
// database or platform code. Only @temporalio/workflow, other workflow files, domain/ and type-only imports.
const dir = path.join(PROJECT_ROOT, 'workflows');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts'));
const IMPORT = /^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms;

describe('workflow files', () => {
  it.each(files)('%s imports nothing with side effects', (file) => {
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    const offending: string[] = [];
    for (const [, typeOnly, from] of source.matchAll(IMPORT)) {
      if (typeOnly) continue;
      // domain/ holds pure rules only, shared with workflows by design.
      // async-mutex is promises only, as Temporal's safe-message-handlers sample uses it.
      if (from === '@temporalio/workflow' || from === 'async-mutex' || from!.startsWith('./') || from!.startsWith('../domain/')) continue;
      offending.push(from!);
    }
    expect(offending).toEqual([]);
  });
});
