import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTexts } from '../../services/knowledge-base/datasets';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/campaigns';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// Bulk import (`importTexts`) and the single write of chunks with their vectors on the built-in embedder:
// chunks are stored once, embedded, published together, and a failed import leaves nothing behind.

let ctx: TestContext;
let t: Tenant;
let orgId: string;

const newDataset = async (name: string, chunk_size = 200) =>
  (
    await ctx.request('POST', '/knowledge-base/datasets', {
      token: t.session,
      body: { name, chunking_strategy: { method: 'structure', chunk_size } },
    })
  ).body.id as string;

const query = async (datasetId: string, q: string, results_count = 3) =>
  (await ctx.request('POST', `/knowledge-base/datasets/${datasetId}/query`, { token: t.session, body: { query: q, results_count } })).body
    .results as { source_id: string; content: string }[];

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  t = await newTenant(ctx);
  orgId = await orgUuid(ctx, t);
});
afterAll(async () => ctx?.close());

describe('bulk import of extracted texts', () => {
  it('writes ready sources with embedded chunks, attached and answering queries', async () => {
    const datasetId = await newDataset('Imported', 100);
    const docs = [
      {
        name: 'boilers',
        text: 'The boiler pressure must stay below three bar.\n\nBleed the radiators every autumn before the heating season starts.',
      },
      { name: 'gardens', text: 'Prune the apple trees in late winter while they are dormant.' },
      { name: 'empty', text: '   ' },
    ];
    const imported = await importTexts(ctx.deps, orgId, 'user:test', datasetId, docs);
    expect(imported.source_ids).toHaveLength(3);
    const [boilers, gardens, empty] = imported.source_ids;
    const rows = await ctx.deps.sql<{ source_id: string; n: number; embedded: number; dims: number[] }[]>`
      SELECT source_id, count(*)::int AS n, count(embedding)::int AS embedded, array_agg(DISTINCT dimension) AS dims
      FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ANY(${imported.source_ids}::uuid[]) GROUP BY source_id`;
    const bySource = new Map(rows.map((r) => [r.source_id, r]));
    expect(bySource.get(boilers!)).toMatchObject({ n: 2, embedded: 2, dims: [384] });
    expect(bySource.get(gardens!)).toMatchObject({ n: 1, embedded: 1 });
    expect(bySource.has(empty!)).toBe(false);
    expect(imported.chunk_count).toBe(3);

    const source = await ctx.request('GET', `/knowledge-base/sources/${boilers}`, { token: t.session });
    expect(source.body).toMatchObject({ name: 'boilers', file_upload_status: 'ready', chunk_count: 2, failure_reason: null });
    expect(source.body.ingested_at).not.toBeNull();
    expect((await ctx.request('GET', `/knowledge-base/sources/${empty}`, { token: t.session })).body).toMatchObject({
      file_upload_status: 'ready',
      chunk_count: 0,
    });
    const dataset = await ctx.request('GET', `/knowledge-base/datasets/${datasetId}`, { token: t.session });
    expect(new Set(dataset.body.source_ids)).toEqual(new Set(imported.source_ids));

    expect((await query(datasetId, 'radiators heating season'))[0]).toMatchObject({
      source_id: boilers,
      content: expect.stringContaining('radiators'),
    });
    expect((await query(datasetId, 'apple trees'))[0]?.source_id).toBe(gardens);
  });

  it('is all or nothing: a failing row leaves no source and no chunk', async () => {
    const datasetId = await newDataset('Atomic');
    const before = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM kb_sources WHERE org_id = ${orgId}`;
    // A name past the column's 500 characters fails inside the transaction, after the chunks are computed.
    await expect(
      importTexts(ctx.deps, orgId, 'user:test', datasetId, [
        { name: 'fine', text: 'first text' },
        { name: 'x'.repeat(501), text: 'second text' },
      ]),
    ).rejects.toThrow();
    const after = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM kb_sources WHERE org_id = ${orgId}`;
    expect(after[0]!.n).toBe(before[0]!.n);
    expect((await ctx.request('GET', `/knowledge-base/datasets/${datasetId}`, { token: t.session })).body.source_ids).toEqual([]);
  });

  it("answers 404 for another organization's dataset and writes nothing", async () => {
    const other = await newTenant(ctx);
    const theirs = (await ctx.request('POST', '/knowledge-base/datasets', { token: other.session, body: { name: 'Theirs' } })).body
      .id as string;
    await expect(importTexts(ctx.deps, orgId, 'user:test', theirs, [{ name: 'a', text: 'text' }])).rejects.toMatchObject({
      kind: 'not_found',
    });
    const rows = await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM kb_dataset_sources WHERE dataset_id = ${theirs}`;
    expect(rows[0]!.n).toBe(0);
  });
});

describe('ingestion with the built-in embedder', () => {
  it('writes each chunk with its vector at extraction, leaving no embedding step to run', async () => {
    const datasetId = await newDataset('Workflow', 100);
    const init = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'notes.txt', content_type: 'text/plain' },
    });
    const text = Array.from(
      { length: 8 },
      (_, i) => `Paragraph ${i} talks about lighthouse keeper number ${i} and the foghorn schedule.`,
    ).join('\n\n');
    await fetch(init.body.upload_url, { method: 'PUT', headers: init.body.upload_headers, body: text });
    await ctx.request('POST', `/files/${init.body.id}/confirm-upload`, { token: t.session });
    const created = await ctx.request('POST', '/knowledge-base/sources', {
      token: t.session,
      body: { type: 'FILE', file_id: init.body.id, chunking_strategy: { method: 'structure', chunk_size: 100 } },
    });
    expect(created.status, created.text).toBe(202);
    const source = await waitFor(
      async () => {
        const res = await ctx.request('GET', `/knowledge-base/sources/${created.body.id}`, { token: t.session });
        return ['ready', 'failed'].includes(res.body.file_upload_status) ? res.body : undefined;
      },
      60_000,
      'the source to be ready',
    );
    expect(source).toMatchObject({ file_upload_status: 'ready', chunk_count: 8 });
    const rows = await ctx.deps.sql<{ embedded: number }[]>`
      SELECT count(embedding)::int AS embedded FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ${source.id}`;
    expect(rows[0]!.embedded).toBe(8);
    // The vectors came with the insert: the embedding loop ran once and found nothing left to embed.
    const history = await ctx.deps.temporal.workflow.getHandle(`kb-source:${source.id}`).fetchHistory();
    const embedSteps = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'kbEmbedBatch');
    expect(embedSteps).toHaveLength(1);
    await ctx.request('PUT', `/knowledge-base/datasets/${datasetId}/sources/${source.id}`, { token: t.session });
    expect((await query(datasetId, 'lighthouse keeper number 5', 1))[0]?.content).toContain('number 5');
  });
});
