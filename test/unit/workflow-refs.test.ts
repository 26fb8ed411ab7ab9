import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/tools';
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

  it('start every workflow a service starts: no service names a workflow by a bare string', () => {
    const services = path.join(PROJECT_ROOT, 'services');
    const offenders: string[] = [];
    for (const file of fs.readdirSync(services, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') || file === 'workflow-client.ts') continue;
      const source = fs.readFileSync(path.join(services, file), 'utf8');
      if (/\.workflow\s*\.\s*(start|signalWithStart|execute)\s*[<(]/.test(source)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
