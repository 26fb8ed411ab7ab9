import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';

// The import rule of .dependency-cruiser.cjs, tried on a small tree laid out like the project: each
// backwards import or circle must be reported by name, and the allowed directions must pass.

const CONFIG = path.join(PROJECT_ROOT, '.dependency-cruiser.cjs');
const roots: string[] = [];
afterAll(() => {
  for (const dir of roots) fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the project's rule (the same CLI and config `npm run deps` uses) on a tree of files; the names of the rules broken. */
async function violations(files: Record<string, string>): Promise<string[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  roots.push(root);
  const all = {
    ...files,
    'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, module: 'esnext', moduleResolution: 'bundler' } }),
  };
  for (const [file, source] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), source);
  }
  const dirs = [...new Set(Object.keys(files).map((f) => f.split('/')[0]!))];
  const bin = path.join(PROJECT_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  let stdout: string;
  try {
    stdout = execFileSync(process.execPath, [bin, ...dirs, '--config', CONFIG, '--output-type', 'json'], { cwd: root, encoding: 'utf8' });
  } catch (error) {
    stdout = (error as { stdout: string }).stdout; // exit code 1 when a rule is broken
  }
  const output = JSON.parse(stdout) as { summary: { violations: { rule: { name: string } }[] } };
  return [...new Set(output.summary.violations.map((v) => v.rule.name))].sort();
}

describe('the layer rule', () => {
  it('lets imports run api → services → db → platform, and every layer reach domain', async () => {
    expect(
      await violations({
        'domain/deals.ts': 'export const STAGES = ["open"];\n',
        'platform/ids.ts': 'export const newId = () => "x";\n',
        'db/deals.ts':
          'import { STAGES } from "../domain/deals";\nimport { newId } from "../platform/ids";\nexport const q = () => [STAGES, newId()];\n',
        'services/deals.ts': 'import { q } from "../db/deals";\nexport const run = () => q();\n',
        'api/routes/deals.ts': 'import { run } from "../../services/deals";\nexport const route = () => run();\n',
        'workflows/deals.ts':
          'import { STAGES } from "../domain/deals";\nimport type { A } from "../activities/deals";\nexport const w = (a: A) => [a, STAGES];\n',
        'activities/deals.ts': 'import { run } from "../services/deals";\nexport type A = string;\nexport const act = () => run();\n',
        'workflows/deal-messages.ts': 'export const dealWorkflowId = (id: string) => "deal:" + id;\n',
        'services/deal-starts.ts':
          'import { dealWorkflowId } from "../workflows/deal-messages";\nimport type { w } from "../workflows/deals";\nexport const id = (x: typeof w) => [x, dealWorkflowId("1")];\n',
      }),
    ).toEqual([]);
  });

  it.each([
    [
      'db → services',
      { 'services/x.ts': 'export const s = 1;\n', 'db/x.ts': 'import { s } from "../services/x";\nexport const d = s;\n' },
      'db-holds-sql-only',
    ],
    [
      'domain → db',
      { 'db/x.ts': 'export const d = 1;\n', 'domain/x.ts': 'import { d } from "../db/x";\nexport const r = d;\n' },
      'domain-imports-nothing-of-ours',
    ],
    [
      'services → api',
      { 'api/x.ts': 'export const a = 1;\n', 'services/x.ts': 'import { a } from "../api/x";\nexport const s = a;\n' },
      'nothing-imports-api',
    ],
    [
      'workflow → db',
      { 'db/x.ts': 'export const d = 1;\n', 'workflows/x.ts': 'import { d } from "../db/x";\nexport const w = d;\n' },
      'workflows-import-domain-and-activity-types-only',
    ],
    [
      'workflow → activity code',
      { 'activities/x.ts': 'export const a = 1;\n', 'workflows/x.ts': 'import { a } from "../activities/x";\nexport const w = a;\n' },
      'workflows-take-activity-types-only',
    ],
    [
      'route → db',
      { 'db/x.ts': 'export const d = 1;\n', 'api/routes/x.ts': 'import { d } from "../../db/x";\nexport const r = d;\n' },
      'api-calls-services',
    ],
    [
      'activity → db',
      { 'db/x.ts': 'export const d = 1;\n', 'activities/x.ts': 'import { d } from "../db/x";\nexport const a = d;\n' },
      'activities-are-adapters',
    ],
    [
      'http auth → db',
      { 'db/x.ts': 'export const d = 1;\n', 'api/auth/x.ts': 'import { d } from "../../db/x";\nexport const v = d;\n' },
      'api-calls-services',
    ],
    [
      'middleware → db error codes',
      {
        'db/pg-errors.ts': 'export const PG = {};\n',
        'api/middleware/x.ts': 'import { PG } from "../../db/pg-errors";\nexport const m = PG;\n',
      },
      'api-calls-services',
    ],
    [
      'api → the composition root',
      { 'server/deps.ts': 'export const d = 1;\n', 'api/x.ts': 'import { d } from "../server/deps";\nexport const a = d;\n' },
      'server-is-the-root',
    ],
    [
      'worker → a development server',
      { 'dev-servers/s3.ts': 'export const s = 1;\n', 'worker/x.ts': 'import { s } from "../dev-servers/s3";\nexport const w = s;\n' },
      'dev-servers-stay-out-of-the-service',
    ],
    [
      'platform core → an adapter',
      {
        'platform/adapters/mail/x.ts': 'export const m = 1;\n',
        'platform/core/x.ts': 'import { m } from "../adapters/mail/x";\nexport const c = m;\n',
      },
      'platform-core-imports-no-adapter',
    ],
    [
      'service → workflow code',
      {
        'workflows/x.ts': 'export async function w() {}\n',
        'services/x.ts': 'import { w } from "../workflows/x";\nexport const s = w;\n',
      },
      'services-start-workflows-by-reference',
    ],
    [
      'platform → services',
      { 'services/x.ts': 'export const s = 1;\n', 'platform/x.ts': 'import { s } from "../services/x";\nexport const p = s;\n' },
      'platform-is-the-bottom',
    ],
    [
      'a circle',
      {
        'services/a.ts': 'import { b } from "./b";\nexport const a = () => b;\n',
        'services/b.ts': 'import { a } from "./a";\nexport const b = () => a;\n',
      },
      'no-circular',
    ],
  ] as const)('reports %s', async (_name, files, rule) => {
    expect(await violations(files)).toContain(rule);
  });
});
