import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/campaigns';
import { startFakeEmbeddingsServer, type FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { keepHistory } from '../support/histories';
import { newTenant, type Tenant } from '../support/identity';

// Knowledge bases end to end on the real stack: Postgres with pgvector, the Temporal dev server and a
// worker, S3 for files, an OpenAI-compatible embeddings server on 127.0.0.1 (for the semantic case).

let ctx: TestContext;
let site: FakeWebsite;
let embeddings: FakeEmbeddingsServer;
let t: Tenant;
let other: Tenant;

const ARTICLE = `<!doctype html><html><head><title>Returns</title><script>var x = "tracking pixel";</script></head><body>
<nav>Home | Shop | Cart</nav>
<main><h1>Returns policy</h1><p>You may send back any automobile part within thirty days for a full reimbursement.</p>
<h2>Shipping</h2><p>Parcels leave our Springfield warehouse every weekday before noon.</p></main>
<footer>Copyright Acme</footer></body></html>`;

const MARKDOWN = `# Clinic hours

Our physician sees patients on Mondays and Thursdays.

# Parking

Visitors park in the zebra-striped garage behind the building.`;

async function create(path: string, body: unknown, tenant = t) {
  return ctx.request('POST', path, { token: tenant.session, body });
}

async function uploadFile(tenant: Tenant, name: string, contentType: string, content: string | Buffer): Promise<string> {
  const init = await ctx.request('POST', '/files/initiate-upload', { token: tenant.session, body: { name, content_type: contentType } });
  expect(init.status, init.text).toBe(200);
  const put = await fetch(init.body.upload_url, { method: 'PUT', headers: init.body.upload_headers, body: content });
  expect(put.status).toBeLessThan(300);
  const confirm = await ctx.request('POST', `/files/${init.body.id}/confirm-upload`, { token: tenant.session });
  expect(confirm.status, confirm.text).toBe(200);
  return init.body.id;
}

async function settled(sourceId: string, tenant = t) {
  return waitFor(
    async () => {
      const res = await ctx.request('GET', `/knowledge-base/sources/${sourceId}`, { token: tenant.session });
      return ['ready', 'failed'].includes(res.body.file_upload_status) ? res.body : undefined;
    },
    60_000,
    `source ${sourceId} to settle`,
  );
}

beforeAll(async () => {
  site = await startFakeWebsite({ '/returns': { body: ARTICLE }, '/gone': { status: 404, body: 'no' } });
  embeddings = await startFakeEmbeddingsServer();
  ctx = await createTestContext({
    worker: true,
    s3: true,
    env: {
      WEB_FETCH_ALLOW_PRIVATE: 'true',
      EMBEDDINGS_BASE_URL: embeddings.baseUrl,
      EMBEDDINGS_MODEL: 'fake-concepts',
      EMBEDDINGS_API_KEY: embeddings.apiKey,
      EMBEDDINGS_BATCH_SIZE: '2',
      EMBEDDINGS_INPUT_TYPE: 'true',
    },
  });
  t = await newTenant(ctx);
  other = await newTenant(ctx);
});
afterAll(async () => {
  await ctx?.close();
  await site?.close();
  await embeddings?.close();
});

describe('knowledge bases', () => {
  let dataset: Record<string, any>;
  let urlSource: Record<string, any>;
  let fileSource: Record<string, any>;

  it('creates, reads, lists and updates datasets with a default chunking strategy', async () => {
    const res = await create('/knowledge-base/datasets', { name: 'Support', description: 'help center' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Support',
      chunking_strategy: { method: 'structure', chunk_size: 1000 },
      embedding_model: 'fake-concepts',
    });
    dataset = res.body;
    const patched = await ctx.request('PATCH', `/knowledge-base/datasets/${dataset.id}`, {
      token: t.session,
      body: { chunking_strategy: { chunk_size: 400 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.chunking_strategy).toEqual({ method: 'structure', chunk_size: 400 });
    expect((await ctx.request('PATCH', `/knowledge-base/datasets/${dataset.id}`, { token: t.session, body: {} })).status).toBe(422);
    const list = await ctx.request('GET', '/knowledge-base/datasets', { token: t.session });
    expect(list.body.count).toBe(1);
    expect(list.body.data[0].id).toBe(dataset.id);
  });

  it('ingests a URL source through its workflow: main text only, status ready, domain and processor set', async () => {
    const res = await create('/knowledge-base/sources', { type: 'URL', url: site.url('/returns'), name: 'Returns page' });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({
      type: 'URL',
      name: 'Returns page',
      domain: '127.0.0.1',
      chunking_strategy: { method: null, chunk_size: null },
    });
    urlSource = await settled(res.body.id);
    expect(urlSource).toMatchObject({ file_upload_status: 'ready', file_processor: 'html', failure_reason: null });
    expect(urlSource.chunk_count).toBeGreaterThan(0);
    keepHistory(inject('temporalAddress'), `kb-source:${urlSource.id}`, 'kb-source-url');
  });

  it('ingests a Markdown FILE source from object storage (S3)', async () => {
    const fileId = await uploadFile(t, 'clinic.md', 'text/markdown', MARKDOWN);
    const res = await create('/knowledge-base/sources', {
      type: 'FILE',
      file_id: fileId,
      chunking_strategy: { method: 'structure', chunk_size: 200 },
    });
    expect(res.status, res.text).toBe(202);
    fileSource = await settled(res.body.id);
    expect(fileSource).toMatchObject({
      name: 'clinic.md',
      file_upload_status: 'ready',
      file_processor: 'markdown',
      file_size: Buffer.byteLength(MARKDOWN),
    });
    expect(fileSource.chunk_count).toBe(2);
    expect(fileSource).toMatchObject({ chunks_total: 2, chunks_embedded: 2, embedding_model: 'fake-concepts' });
    expect(embeddings.requests.length).toBeGreaterThan(0);
    // Ingestion embeds passages (e5-style models prefix them as such).
    expect(embeddings.requests.every((r) => r.input_type === 'passage')).toBe(true);
  });

  it('attaches by pattern (% wildcard, case-insensitive), reporting attached and already attached', async () => {
    const first = await create(`/knowledge-base/datasets/${dataset.id}/sources/pattern`, { pattern: 'returns%', type: 'URL' });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      matched_count: 1,
      attached_count: 1,
      attached_source_ids: [urlSource.id],
      already_attached_source_ids: [],
    });
    const again = await create(`/knowledge-base/datasets/${dataset.id}/sources/pattern`, { pattern: '%PAGE', type: 'URL' });
    expect(again.body).toEqual({
      matched_count: 1,
      attached_count: 0,
      attached_source_ids: [],
      already_attached_source_ids: [urlSource.id],
    });
    const none = await create(`/knowledge-base/datasets/${dataset.id}/sources/pattern`, { pattern: 'Returns_page', type: 'URL' });
    expect(none.body.matched_count).toBe(0); // `_` is no wildcard
    const put = await ctx.request('PUT', `/knowledge-base/datasets/${dataset.id}/sources/${fileSource.id}`, { token: t.session });
    expect(put.body.attached).toBe(true);
  });

  it('pattern-search filters by name_pattern and type and counts', async () => {
    const res = await ctx.request('GET', '/knowledge-base/sources/pattern-search?name_pattern=%25clinic%25&type=FILE', {
      token: t.session,
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(res.body.data[0].id).toBe(fileSource.id);
    expect((await ctx.request('GET', '/knowledge-base/sources/pattern-search?type=URL', { token: t.session })).body.count).toBe(1);
    expect((await ctx.request('GET', '/knowledge-base/sources/pattern-search?type=PDF', { token: t.session })).status).toBe(400);
  });

  it('answers a lexical-only question from full text and a semantic-only one from vectors', async () => {
    const lexical = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'zebra-striped garage', results_count: 3 });
    expect(lexical.status, lexical.text).toBe(200);
    expect(lexical.body.results[0].content).toContain('zebra-striped garage');
    expect(lexical.body.results[0]).toMatchObject({ source_id: fileSource.id, dataset_id: dataset.id });
    // No word in common with the answer: "car" ~ "automobile", "money back" ~ "reimbursement".
    const semantic = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'car refund', results_count: 3 });
    expect(semantic.body.results[0].content).toContain('automobile part');
    expect(embeddings.requests.at(-1)).toMatchObject({ input: ['car refund'], input_type: 'query' });
    const doctor = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'when does the doctor work' });
    expect(doctor.body.results[0].content).toContain('physician');
    for (const r of [...lexical.body.results, ...semantic.body.results]) {
      expect(r.score).toBeGreaterThanOrEqual(0);
      expect(r.score).toBeLessThanOrEqual(1);
    }
    const scores = semantic.body.results.map((r: any) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect((await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'x', results_count: 51 })).status).toBe(422);
  });

  it('re-ingests atomically and refuses a second ingestion while one runs', async () => {
    const res = await create(`/knowledge-base/sources/${urlSource.id}/reingest`, {});
    expect(res.status, res.text).toBe(202);
    const busy = await create(`/knowledge-base/sources/${urlSource.id}/reingest`, {});
    expect(busy.status).toBe(409);
    // Queries keep answering from the old chunks until the new generation is published.
    const during = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'Springfield warehouse' });
    expect(during.body.results.length).toBeGreaterThan(0);
    const done = await settled(urlSource.id);
    expect(done.file_upload_status).toBe('ready');
    const after = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'Springfield warehouse', results_count: 50 });
    expect(after.body.results.filter((r: any) => r.content.includes('Springfield warehouse'))).toHaveLength(1);
  });

  it('retries a failing embeddings call, then completes', async () => {
    embeddings.failNext(2, 503);
    const res = await create('/knowledge-base/sources', { type: 'URL', url: site.url('/returns'), name: 'Returns again' });
    const done = await settled(res.body.id);
    expect(done.file_upload_status).toBe('ready');
  });

  it('marks a source failed with the reason when its URL cannot be fetched, and notifies', async () => {
    const res = await create('/knowledge-base/sources', { type: 'URL', url: site.url('/gone') });
    const failed = await settled(res.body.id);
    expect(failed.file_upload_status).toBe('failed');
    expect(failed.failure_reason).toMatch(/404/);
    keepHistory(inject('temporalAddress'), `kb-source:${res.body.id}`, 'kb-source-failed');
    const events = await ctx.deps.sql`SELECT event_type, entity_type, payload FROM notification_outbox WHERE entity_id = ${res.body.id}`;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event_type: 'knowledge_source.ingestion_failed', entity_type: 'knowledge_source' });
    expect(events[0]!.payload.reason).toMatch(/404/);
  });

  it('never shows another organization its datasets, sources or chunks', async () => {
    expect((await ctx.request('GET', `/knowledge-base/datasets/${dataset.id}`, { token: other.session })).status).toBe(404);
    expect((await ctx.request('GET', `/knowledge-base/sources/${urlSource.id}`, { token: other.session })).status).toBe(404);
    expect((await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'garage' }, other)).status).toBe(404);
    const theirs = await create('/knowledge-base/datasets', { name: 'Theirs' }, other);
    expect(
      (await ctx.request('PUT', `/knowledge-base/datasets/${theirs.body.id}/sources/${urlSource.id}`, { token: other.session })).status,
    ).toBe(404);
    const pattern = await create(`/knowledge-base/datasets/${theirs.body.id}/sources/pattern`, { pattern: '%', type: 'URL' }, other);
    expect(pattern.body.matched_count).toBe(0);
    const query = await create(`/knowledge-base/datasets/${theirs.body.id}/query`, { query: 'zebra garage automobile' }, other);
    expect(query.body.results).toEqual([]);
  });

  it('refuses writes to a read-only token (403) and serves it reads', async () => {
    const reader = await newTenant(ctx, ['api:read']);
    expect((await create('/knowledge-base/datasets', { name: 'no' }, reader)).status).toBe(403);
    expect((await ctx.request('GET', '/knowledge-base/datasets', { token: reader.session })).status).toBe(200);
  });

  it('detaches and deletes: a detached source leaves the results, a deleted dataset is 404', async () => {
    expect(
      (await ctx.request('DELETE', `/knowledge-base/datasets/${dataset.id}/sources/${fileSource.id}`, { token: t.session })).status,
    ).toBe(204);
    const res = await create(`/knowledge-base/datasets/${dataset.id}/query`, { query: 'zebra-striped garage' });
    expect(res.body.results.every((r: any) => r.source_id !== fileSource.id)).toBe(true);
    expect((await ctx.request('DELETE', `/knowledge-base/sources/${fileSource.id}`, { token: t.session })).status).toBe(204);
    expect((await ctx.request('GET', `/knowledge-base/sources/${fileSource.id}`, { token: t.session })).status).toBe(404);
    expect((await ctx.request('DELETE', `/knowledge-base/datasets/${dataset.id}`, { token: t.session })).status).toBe(204);
    expect((await ctx.request('GET', `/knowledge-base/datasets/${dataset.id}`, { token: t.session })).status).toBe(404);
  });
});
