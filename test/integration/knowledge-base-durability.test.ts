import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { startChildWorker, startInProcessWorker, stopInProcessWorker, type InProcessWorker } from '../support/durability-workers';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeEmbeddingsServer, type FakeEmbeddingsServer } from '../support/fake-embeddings-server';
import { newTenant } from '../support/identity';

// Kill -9 the worker in the middle of a source's embedding: another worker finishes it, and no batch
// that was stored is embedded again (at most the batch in flight when the worker died). A slow
// deterministic embeddings server counts every text it embeds; the source has 60 chunks, 4 per batch
// (a large source behaves the same, with more batches: each batch is one activity).

const CHUNKS = 60;
const BATCH = 4;
let ctx: TestContext;
let embeddings: FakeEmbeddingsServer;
let child: ChildProcess | undefined;
let second: InProcessWorker | undefined;
/** The settings of the context, and of the worker process it kills. */
let env: Record<string, string>;

beforeAll(async () => {
  embeddings = await startFakeEmbeddingsServer();
  env = {
    EMBEDDINGS_BASE_URL: embeddings.baseUrl,
    EMBEDDINGS_MODEL: 'fake-concepts',
    EMBEDDINGS_API_KEY: embeddings.apiKey,
    EMBEDDINGS_BATCH_SIZE: String(BATCH),
    EMBEDDINGS_INPUT_TYPE: 'true',
  };
  ctx = await createTestContext({ env });
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await stopInProcessWorker(second);
  await ctx?.close();
  await embeddings?.close();
});

it('a worker killed mid-embedding is replaced; progress shows on the source and no stored batch is embedded twice', {
  timeout: 180_000,
}, async () => {
  const t = await newTenant(ctx);
  const paragraphs = Array.from(
    { length: CHUNKS },
    (_, i) => `Paragraph ${i}: the lighthouse keeper number ${i} winds the clock of tower ${i * 7}.`,
  );
  const init = await ctx.request('POST', '/files/initiate-upload', {
    token: t.session,
    body: { name: 'keepers.txt', content_type: 'text/plain' },
  });
  await fetch(init.body.upload_url, { method: 'PUT', headers: init.body.upload_headers, body: paragraphs.join('\n\n') });
  expect((await ctx.request('POST', `/files/${init.body.id}/confirm-upload`, { token: t.session })).status).toBe(200);

  embeddings.setDelay(400); // about 6 s of embedding in all
  child = await startChildWorker(ctx, env);
  const created = await ctx.request('POST', '/knowledge-base/sources', {
    token: t.session,
    body: { type: 'FILE', file_id: init.body.id, chunking_strategy: { method: 'structure', chunk_size: 100 } },
  });
  expect(created.status, created.text).toBe(202);
  const source = () => ctx.request('GET', `/knowledge-base/sources/${created.body.id}`, { token: t.session }).then((r) => r.body);

  // Mid-way: some batches stored and counted on the source, most not.
  const midway = await waitFor(
    async () => {
      const s = await source();
      return s.chunks_embedded >= 3 * BATCH ? s : undefined;
    },
    60_000,
    'three batches embedded',
  );
  expect(midway).toMatchObject({ file_upload_status: 'processing', chunks_total: CHUNKS });
  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  child = undefined;
  const atKill = await source();
  expect(atKill.chunks_embedded).toBeLessThan(CHUNKS);
  const storedAtKill = await ctx.deps.sql<
    { content: string }[]
  >`SELECT content FROM kb_chunks WHERE source_id = ${created.body.id} AND embedding IS NOT NULL`;
  expect(storedAtKill).toHaveLength(atKill.chunks_embedded);

  second = await startInProcessWorker(ctx);

  const done = await waitFor(
    async () => {
      const s = await source();
      return ['ready', 'failed'].includes(s.file_upload_status) ? s : undefined;
    },
    120_000,
    'the source to be ready',
  );
  expect(done).toMatchObject({
    file_upload_status: 'ready',
    chunk_count: CHUNKS,
    chunks_total: CHUNKS,
    chunks_embedded: CHUNKS,
    embedding_model: 'fake-concepts',
  });

  // Every text the model was asked for: each chunk once, except at most the one batch in flight at the kill.
  const asked = embeddings.requests.filter((r) => r.input_type === 'passage').flatMap((r) => r.input);
  const times = new Map<string, number>();
  for (const text of asked) times.set(text, (times.get(text) ?? 0) + 1);
  expect(new Set(asked).size).toBe(CHUNKS);
  expect(asked.length).toBeLessThanOrEqual(CHUNKS + BATCH);
  for (const { content } of storedAtKill) expect(times.get(content), content).toBe(1);
});
