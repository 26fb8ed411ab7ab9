import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant } from '../support/identity';

// Types generated from the live document (default settings), a flow written against openapi-fetch
// compiled with tsc --strict, then run against the real server (which checks every answer against
// the schemas the document is generated from).
const FLOW_DIR = path.join(PROJECT_ROOT, 'test', 'contract', 'flow');
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx?.close());

describe('a typed client generated from /openapi.json', () => {
  it('compiles the flow under tsc --strict and runs it green', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    const ast = await openapiTS(document);
    fs.writeFileSync(path.join(FLOW_DIR, 'openapi.d.ts'), astToString(ast));
    const tsc = spawnSync(
      process.execPath,
      [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(FLOW_DIR, 'tsconfig.json')],
      {
        encoding: 'utf8',
      },
    );
    expect(tsc.stdout + tsc.stderr, 'tsc --strict').toBe('');
    expect(tsc.status).toBe(0);

    const tenant = await newTenant(ctx, ['api:read', 'api:manage', 'agents:manage', 'organizations:manage']);
    // Asynchronously: the server under test runs in this process and must keep answering.
    const run = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(FLOW_DIR, 'client-flow.ts')], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, BASE_URL: ctx.baseUrl, TOKEN: tenant.session },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.once('exit', () => resolve({ stdout, stderr }));
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('flow complete');
  }, 180_000);
});
