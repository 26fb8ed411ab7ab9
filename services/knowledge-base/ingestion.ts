import * as files from '../../db/files';
import * as kb from '../../db/knowledge-base';
import type { SourceRow } from '../../db/knowledge-base';
import { DEFAULT_CHUNKING, chunkText, effectiveChunking } from '../../domain/knowledge-base';
import { EmbedderError, createEmbedder, type Embedder } from '../../platform/adapters/embedders/embedder';
import { ExtractionError, extractText, htmlMainText, processorFor, type FileProcessor } from '../../platform/adapters/web/extract';
import { WebFetchError, fetchPage } from '../../platform/adapters/web/fetch';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';
import { emitSourceIngested } from '../webhooks/area-events';

// The steps of a source's ingestion, called by the knowledgeSourceIngestion workflow's activities:
// extract, chunk, embed by batches, publish the new generation, or mark the source failed.

/** Waits for the creating transaction; the next generation to write, or undefined when the source is gone. */
export async function beginIngestion(deps: Pick<ServiceDeps, 'sql'>, orgId: string, sourceId: string): Promise<number | undefined> {
  return deps.sql.begin(async (tx) => {
    await kb.lockSourceId(tx, orgId, sourceId);
    const source = await kb.getSource(tx, orgId, sourceId, true);
    if (!source) return undefined;
    await kb.setSourceStatus(tx, orgId, sourceId, { status: 'processing' });
    return kb.prepareGeneration(tx, orgId, sourceId);
  });
}

/** A failure that another attempt cannot fix: the source is marked failed at once. */
export class PermanentIngestionError extends Error {
  override name = 'PermanentIngestionError';
}

async function readSource(
  deps: Pick<ServiceDeps, 'sql' | 'storage' | 'config'>,
  source: SourceRow,
): Promise<{ text: string; processor: FileProcessor; size: number }> {
  if (source.type === 'URL') {
    try {
      const page = await fetchPage(source.url!, { allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE, maxBytes: 5 * 1024 * 1024 });
      const html = /html|xml/i.test(page.contentType);
      return { text: html ? htmlMainText(page.body) : page.body, processor: html ? 'html' : 'text', size: Buffer.byteLength(page.body) };
    } catch (error) {
      if (error instanceof WebFetchError && !error.retryable)
        throw new PermanentIngestionError(`fetching ${source.url} failed: ${error.message}`);
      throw error;
    }
  }
  const file = source.file_id ? await files.getFile(deps.sql, source.org_id, source.file_id) : undefined;
  if (file?.status !== 'uploaded') throw new PermanentIngestionError('the file is missing, archived or not uploaded');
  const processor = processorFor(file.content_type, file.name);
  if (!processor) throw new PermanentIngestionError(`unsupported file type: ${file.content_type}`);
  const object = await deps.storage.get(file.storage_key);
  if (!object) throw new PermanentIngestionError('the file is not in object storage');
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(Buffer.from(chunk as Buffer));
  const bytes = Buffer.concat(chunks);
  try {
    const extracted = await extractText(bytes, processor);
    return { text: extracted.text, processor, size: bytes.length };
  } catch (error) {
    if (error instanceof ExtractionError) throw new PermanentIngestionError(error.message);
    throw error;
  }
}

/** Extracts the source's text and writes its chunks (without embeddings) under the given generation. */
export async function extractAndChunk(
  deps: Pick<ServiceDeps, 'sql' | 'storage' | 'config'>,
  orgId: string,
  sourceId: string,
  generation: number,
): Promise<number | undefined> {
  const source = await kb.getSource(deps.sql, orgId, sourceId);
  if (!source) return undefined;
  const { text, processor, size } = await readSource(deps, source);
  // The source's own strategy, else that of the first dataset it serves, else the service default.
  const [dataset] = await kb.datasetsOfSource(deps.sql, orgId, sourceId);
  const strategy = effectiveChunking(
    { method: source.chunking_method, chunk_size: source.chunk_size },
    dataset ? { method: dataset.chunking_method, chunk_size: dataset.chunk_size } : DEFAULT_CHUNKING,
  );
  const chunks = chunkText(text, strategy);
  if (chunks.length === 0) throw new PermanentIngestionError(`no text could be extracted (${processor})`);
  // The built-in embedder runs in this process and cannot fail: its vectors go into the same rows now,
  // and the embedding steps that follow find nothing left. A remote embedder keeps one step per batch,
  // and so does a source too large for one step (every vector also costs an HNSW insert).
  const embedded =
    embedsInProcess(deps.config) && chunks.length <= INLINE_EMBEDDING_MAX_CHUNKS ? await embedInProcess(deps.config, chunks) : undefined;
  await deps.sql.begin(async (tx) => {
    await kb.recordExtraction(tx, orgId, sourceId, {
      file_processor: processor,
      file_size: size,
      chunks_total: chunks.length,
      chunks_embedded: embedded ? chunks.length : 0,
    });
    await kb.insertChunks(tx, orgId, sourceId, generation, chunks, 0, embedded);
  });
  return chunks.length;
}

/** Without EMBEDDINGS_BASE_URL the embedder is the built-in one (platform/adapters/embedders/embedder.ts): local, deterministic, no network. */
const embedsInProcess = (config: Pick<ServiceDeps['config'], 'EMBEDDINGS_BASE_URL'>) => !config.EMBEDDINGS_BASE_URL;

/** Up to this many chunks (about 10 s of HNSW inserts on a loaded core) are embedded within the extraction step. */
const INLINE_EMBEDDING_MAX_CHUNKS = 2000;

/** The built-in embedder by batches, yielding to the event loop between them (it is CPU work in the worker's thread). */
async function embedInProcess(config: ServiceDeps['config'], texts: string[]): Promise<{ model: string; vectors: number[][] }> {
  const embedder = createEmbedder(config);
  const vectors: number[][] = [];
  for (let i = 0; i < texts.length; i += config.EMBEDDINGS_BATCH_SIZE) {
    vectors.push(...(await embedder.embed(texts.slice(i, i + config.EMBEDDINGS_BATCH_SIZE), 'passage')));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { model: embedder.model, vectors };
}

/** Batches one embedding step takes at most, and the time after which it starts no further batch. */
const BATCHES_PER_STEP = 8;
const STEP_BUDGET_MS = 60_000;

/**
 * Embeds the generation's chunks still without a vector, batch by batch (EMBEDDINGS_BATCH_SIZE), up to
 * BATCHES_PER_STEP batches or STEP_BUDGET_MS; answers how many were embedded (0: all done). Each batch's
 * vectors are stored with the progress count in a transaction of their own, while the embedder already
 * works on the next batch, so the embedder is not idle during the writes and their HNSW inserts. A retry
 * (after a worker died) finds only the chunks still without a vector: no stored batch is embedded twice.
 */
export async function embedBatch(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  sourceId: string,
  generation: number,
  embedder: Embedder = createEmbedder(deps.config),
): Promise<number> {
  const size = deps.config.EMBEDDINGS_BATCH_SIZE;
  const pending = await kb.chunksWithoutEmbedding(deps.sql, orgId, sourceId, generation, size * BATCHES_PER_STEP);
  if (pending.length === 0) return 0;
  const started = Date.now();
  let storing: Promise<void> = Promise.resolve();
  let embedded = 0;
  try {
    for (let i = 0; i < pending.length && (i === 0 || Date.now() - started < STEP_BUDGET_MS); i += size) {
      const batch = pending.slice(i, i + size);
      const vectors = await embedPassages(embedder, batch);
      await storing; // the previous batch's write, which ran while this batch was embedded
      storing = storeBatch(deps, orgId, sourceId, embedder.model, batch, vectors);
      // Handled now, thrown at the next await: a write failing while the next batch embeds is not an unhandled rejection.
      storing.catch(() => {});
      embedded += batch.length;
    }
    await storing;
  } catch (error) {
    await storing.catch(() => {}); // what was already being written finishes (or fails) before the step does
    throw error;
  }
  return embedded;
}

async function embedPassages(embedder: Embedder, batch: { content: string }[]): Promise<number[][]> {
  try {
    return await embedder.embed(
      batch.map((c) => c.content),
      'passage',
    );
  } catch (error) {
    if (error instanceof EmbedderError && !error.retryable) throw new PermanentIngestionError(error.message);
    throw error;
  }
}

function storeBatch(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  sourceId: string,
  model: string,
  batch: { id: string }[],
  vectors: number[][],
): Promise<void> {
  return deps.sql.begin(async (tx) => {
    await kb.storeEmbeddings(
      tx,
      orgId,
      model,
      batch.map((c, i) => ({ id: c.id, embedding: vectors[i]! })),
    );
    await kb.addEmbedded(tx, orgId, sourceId, batch.length);
  });
}

/** The new generation becomes the visible one in one transaction: queries see the old chunks or the new, never half. */
export async function publishIngestion(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  sourceId: string,
  generation: number,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    await kb.lockSourceId(tx, orgId, sourceId);
    const source = await kb.publishGeneration(tx, orgId, sourceId, generation, createEmbedder(deps.config).model);
    // Integrators hear of it in the same transaction (services/webhooks).
    if (source) await emitSourceIngested(tx, orgId, source);
  });
}

/** Marks the source failed with the reason, and notifies, in one transaction. */
export async function failIngestion(deps: Pick<ServiceDeps, 'sql'>, orgId: string, sourceId: string, reason: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const row = await kb.setSourceStatus(tx, orgId, sourceId, { status: 'failed', failure_reason: reason.slice(0, 1000) });
    if (!row) return;
    await emitEvent(tx, orgId, {
      event_type: 'knowledge_source.ingestion_failed',
      entity_type: 'knowledge_source',
      entity_id: sourceId,
      payload: { source_id: sourceId, source_name: row.name, source_type: row.type, reason: row.failure_reason },
    });
  });
}
