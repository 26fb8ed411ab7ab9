import fs from 'node:fs';
import path from 'node:path';
import { createApp } from '../api/app';
import type { AppDeps } from '../api/deps';
import { loadConfig } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';

// `npm run --silent openapi [-- FILE]`: the OpenAPI document the API serves at /openapi.json, written
// without starting anything (routes are declared from schemas; no handler runs), for linters and generators.
const config = loadConfig({ ...process.env, NODE_ENV: 'development', DATA_DIR: process.env.DATA_DIR ?? '.data' });
// Local storage, as `npm start` runs it, so the document lists its upload and download routes.
const deps = { config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps;
const { document } = createApp(deps);
const text = `${JSON.stringify(document, null, 2)}\n`;
const file = process.argv[2];
if (file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
} else process.stdout.write(text);
process.exit(0);
