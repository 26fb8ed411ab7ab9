import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/core/tools';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant } from '../support/identity';

// Clients generated from the served /openapi.json with default settings, a Python one (openapi-python-client, from
// scripts/install-tools.sh clients) and a TypeScript one (openapi-typescript types, openapi-fetch), each running a
// user's first calls against the real server: create a contact, read it, page the list, a 404 and a 422
// (test/contract/clients/flow.py and flow.ts). Generation is cached under .tools/clients by the document's hash.
// Under CI=true a missing generator fails the test; elsewhere it is installed, or the Python half skips.
const SOURCES = path.join(PROJECT_ROOT, 'test', 'contract', 'clients');
const CACHE = path.join(PROJECT_ROOT, '.tools', 'clients');
const VENV = path.join(PROJECT_ROOT, '.tools', 'clients-venv', 'bin');
const GENERATOR = path.join(VENV, 'openapi-python-client');
const FLOW_TIMEOUT_MS = 90_000;

let ctx: TestContext;
let document: Record<string, unknown>;
let cacheDir: string;
beforeAll(async () => {
  ctx = await createTestContext();
  const served = (await ctx.request('GET', '/openapi.json')).body as Record<string, unknown>;
  // The contact link names this server's port: left out, so one document has one hash from run to run.
  const info = served.info as { contact?: Record<string, unknown> };
  document = { ...served, info: { ...info, contact: { ...info.contact, url: undefined } } };
  const tools = [readVersion('openapi-typescript'), readVersion('openapi-fetch'), readVersion('typescript'), generatorVersion()];
  const hash = crypto.createHash('sha256').update(JSON.stringify(document)).update(tools.join()).digest('hex').slice(0, 16);
  cacheDir = path.join(CACHE, hash);
  // Earlier documents' clients go: the folder holds the current one only.
  if (fs.existsSync(CACHE))
    for (const old of fs.readdirSync(CACHE)) if (old !== hash) fs.rmSync(path.join(CACHE, old), { recursive: true, force: true });
}, 120_000);
afterAll(() => ctx?.close());

function readVersion(pkg: string): string {
  return JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

function generatorVersion(): string {
  if (!fs.existsSync(GENERATOR)) return 'none';
  return spawnSync(GENERATOR, ['--version'], { encoding: 'utf8', timeout: 30_000 }).stdout.trim();
}

/** The generator, installed when missing (bounded); undefined when it cannot be had. */
function ensureGenerator(): string | undefined {
  if (!fs.existsSync(GENERATOR))
    spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'clients'], { stdio: 'inherit', timeout: 300_000 });
  return fs.existsSync(GENERATOR) ? GENERATOR : undefined;
}

/** Makes `dir` by `build` into a scratch folder renamed into place, so a cut run leaves no half-made folder. */
function cached(dir: string, build: (scratch: string) => void): string {
  if (fs.existsSync(dir)) return dir;
  const scratch = `${dir}.partial-${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { recursive: true });
  build(scratch);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(scratch, dir);
  return dir;
}

/** Runs a flow against the server in this process (so asynchronously), bounded in time. */
function runFlow(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), FLOW_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

async function flowEnv(): Promise<Record<string, string>> {
  const tenant = await newTenant(ctx, ['api:read', 'api:manage']);
  return { BASE_URL: ctx.baseUrl, TOKEN: tenant.session };
}

describe('clients generated from /openapi.json', () => {
  it('Python (openapi-python-client): ContactCreate(first_name=...) is one model, and the flow runs green', async (test) => {
    const generator = ensureGenerator();
    if (!generator) {
      if (process.env.CI === 'true') throw new Error('openapi-python-client is missing (scripts/install-tools.sh clients)');
      test.skip();
      return;
    }
    const python = cached(path.join(cacheDir, 'python'), (scratch) => {
      const spec = path.join(scratch, 'openapi.json');
      fs.writeFileSync(spec, JSON.stringify(document));
      const made = spawnSync(
        generator,
        ['generate', '--path', spec, '--meta', 'none', '--output-path', path.join(scratch, 'service_client')],
        {
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(made.status, made.stdout + made.stderr).toBe(0);
    });
    const models = fs.readdirSync(path.join(python, 'service_client', 'models'));
    expect(models).toContain('contact_create.py');
    expect(models.filter((file) => /^contact_create_type_\d/.test(file))).toEqual([]);

    const run = await runFlow(path.join(VENV, 'python'), [path.join(SOURCES, 'flow.py')], { ...(await flowEnv()), PYTHONPATH: python });
    expect(run.out).toContain('flow complete');
    expect(run.code, run.out).toBe(0);
  }, 240_000);

  it('TypeScript (openapi-typescript, openapi-fetch): compiles under tsc --strict and the flow runs green', async () => {
    const flow = fs.readFileSync(path.join(SOURCES, 'flow.ts'), 'utf8');
    const dir = path.join(cacheDir, 'typescript');
    fs.mkdirSync(dir, { recursive: true });
    const declarations = path.join(dir, 'openapi.d.ts');
    if (!fs.existsSync(declarations)) {
      fs.writeFileSync(`${declarations}.partial`, astToString(await openapiTS(document as never)));
      fs.renameSync(`${declarations}.partial`, declarations);
    }
    // Compiled once per document and flow: the mark names the flow's hash.
    const mark = path.join(dir, `compiled-${crypto.createHash('sha256').update(flow).digest('hex').slice(0, 16)}`);
    fs.writeFileSync(path.join(dir, 'flow.ts'), flow);
    if (!fs.existsSync(mark)) {
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'Bundler',
            lib: ['ES2023', 'DOM'],
            types: ['node'],
            strict: true,
            noUncheckedIndexedAccess: true,
            noEmit: true,
          },
          files: ['flow.ts', 'openapi.d.ts'],
        }),
      );
      const tsc = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(tsc.stdout + tsc.stderr, 'tsc --strict').toBe('');
      expect(tsc.status).toBe(0);
      fs.writeFileSync(mark, '');
    }

    const run = await runFlow(process.execPath, ['--import', 'tsx', path.join(dir, 'flow.ts')], await flowEnv());
    expect(run.out).toContain('flow complete');
    expect(run.code, run.out).toBe(0);
  }, 240_000);
});
