import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';
import * as registered from '../../workflows';

// A workflow reference names its workflow by a string (services start it without bundling its code):
// every reference must name a workflow the worker registers, and every message file follows one name scheme.

const dir = path.join(PROJECT_ROOT, 'workflows');
const messageFiles = fs.readdirSync(dir).filter((f) => f.endsWith('-messages.ts'));

const isRef = (value: unknown): value is { name: string } =>
  typeof value === 'object' && value !== null && Object.keys(value).length === 1 && typeof (value as { name?: unknown }).name === 'string';

describe('workflow references', () => {
  it.each(messageFiles)('%s names only registered workflows', async (file) => {
    const exports: Record<string, unknown> = await import(path.join(dir, file));
    for (const [exported, value] of Object.entries(exports)) {
      if (!isRef(value)) continue;
      expect(typeof (registered as Record<string, unknown>)[value.name], `${file}: ${exported} → ${value.name}`).toBe('function');
    }
  });

  it('are declared in <area>-messages.ts files only (no *-signals files)', () => {
    expect(fs.readdirSync(dir).filter((f) => /-signals\.ts$/.test(f))).toEqual([]);
    const elsewhere = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('-messages.ts') && f !== 'workflow-ref.ts')
      .filter((f) => /\bworkflowRef</.test(fs.readFileSync(path.join(dir, f), 'utf8')));
    expect(elsewhere).toEqual([]);
  });

  it('are how every workflow is reached: only services/workflow-client.ts calls the client directly', () => {
    const offenders: string[] = [];
    for (const folder of ['services', 'activities', 'server', 'api', 'worker', 'scripts']) {
      const root = path.join(PROJECT_ROOT, folder);
      for (const file of fs.readdirSync(root, { recursive: true }) as string[]) {
        const relative = path.join(folder, file);
        if (!file.endsWith('.ts') || relative === path.join('services', 'workflow-client.ts')) continue;
        const source = fs.readFileSync(path.join(root, file), 'utf8');
        // Starts, signals, updates, queries, describe, cancel, terminate and schedules: one gateway.
        const direct =
          /\.workflow\s*\.\s*(start|signalWithStart|execute|getHandle|list|count)\s*[<(]|\.schedule\s*\.\s*(create|getHandle|list)\s*[<(]|\.(signal|executeUpdate|startUpdate|terminate)\(/;
        if (direct.test(source)) offenders.push(relative);
      }
    }
    expect(offenders).toEqual([]);
  });
});
