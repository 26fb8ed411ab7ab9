import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Db } from '../db/client';
import * as files from '../db/files';
import * as kb from '../db/knowledge-base';
import type { DatasetRow, SourceRow } from '../db/knowledge-base';
import { conflict, notFound, upstream } from '../domain/errors';
import {
  CANDIDATES_PER_RANKING,
  DEFAULT_CHUNKING,
  FULL_TEXT_BOUNDS,
  chunkText,
  effectiveChunking,
  LEXICAL_EMBEDDER_VECTOR_WEIGHT,
  VECTOR_WEIGHT,
  fusedScores,
  type ChunkingMethod,
  type SourceType,
} from '../domain/knowledge-base';
import { EmbedderError, createEmbedder, embedderFor, type Embedder } from '../platform/embedder';
import { ExtractionError, extractText, htmlMainText, processorFor, type FileProcessor } from '../platform/extract';
import { newId } from '../platform/ids';
import { organizationAttribute } from '../platform/temporal';
import { WebFetchError, fetchPage } from '../platform/web-fetch';
import type { knowledgeSourceIngestion } from '../workflows/knowledge-base';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications';
import { iso } from './views';

export const sourceWorkflowId = (sourceId: string) => `kb-source:${sourceId}`;

export const datasetView = (row: DatasetRow) => ({
  id: row.id,
  organization_id: row.org_id,
  name: row.name,
  description: row.description,
  chunking_strategy: { method: row.chunking_method, chunk_size: row.chunk_size },
  embedding_model: row.embedding_model,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  created_by: row.created_by,
  modified_by: row.modified_by,
});

export const sourceView = (row: SourceRow) => ({
  id: row.id,
  organization_id: row.org_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  created_by: row.created_by,
  modified_by: row.modified_by,
  type: row.type,
  name: row.name,
  description: row.description,
  url: row.url,
  domain: row.domain,
  file_id: row.file_id,
  file_upload_status: row.file_upload_status,
  failure_reason: row.failure_reason,
  chunking_strategy: { method: row.chunking_method, chunk_size: row.chunk_size },
  file_processor: row.file_processor,
  file_size: row.file_size === null ? null : Number(row.file_size),
  chunk_count: row.chunk_count,
  chunks_total: row.chunks_total,
  chunks_embedded: row.chunks_embedded,
  embedding_model: row.embedding_model,
  ingested_at: iso(row.ingested_at),
});

const datasetNotFound = () => notFound('Dataset not found');
const sourceNotFound = () => notFound('Source not found');

async function datasetOf(db: Db, orgId: string, id: string): Promise<DatasetRow> {
  const row = await kb.getDataset(db, orgId, id);
  if (!row) throw datasetNotFound();
  return row;
}

// ---- datasets ----

type Strategy = { method?: ChunkingMethod | null; chunk_size?: number | null };

export async function createDataset(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  actor: string,
  input: { name: string; description?: string; chunking_strategy?: Strategy },
) {
  const row = await kb.insertDataset(deps.sql, orgId, {
    id: newId(),
    name: input.name,
    description: input.description ?? '',
    chunking_method: input.chunking_strategy?.method ?? DEFAULT_CHUNKING.method,
    chunk_size: input.chunking_strategy?.chunk_size ?? DEFAULT_CHUNKING.chunk_size,
    embedding_model: createEmbedder(deps.config).model,
    created_by: actor,
  });
  return datasetView(row);
}

export async function listDatasets(deps: Pick<ServiceDeps, 'sql'>, orgId: string, page: { limit: number; offset: number }) {
  const { rows, count } = await kb.listDatasets(deps.sql, orgId, page);
  return { data: rows.map(datasetView), count };
}

export async function getDataset(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  const row = await datasetOf(deps.sql, orgId, id);
  const sources = await kb.listDatasetSources(deps.sql, orgId, id);
  return { ...datasetView(row), source_ids: sources.map((s) => s.id) };
}

export async function updateDataset(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  id: string,
  input: { name?: string; description?: string; chunking_strategy?: Strategy },
) {
  const row = await kb.updateDataset(deps.sql, orgId, id, {
    name: input.name,
    description: input.description,
    chunking_method: input.chunking_strategy?.method ?? undefined,
    chunk_size: input.chunking_strategy?.chunk_size ?? undefined,
    modified_by: actor,
  });
  if (!row) throw datasetNotFound();
  return datasetView(row);
}

export async function deleteDataset(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await kb.deleteDataset(deps.sql, orgId, id))) throw datasetNotFound();
}

export async function listDatasetSources(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  await datasetOf(deps.sql, orgId, id);
  const rows = await kb.listDatasetSources(deps.sql, orgId, id);
  return { data: rows.map(sourceView), count: rows.length };
}

export async function attachSource(deps: Pick<ServiceDeps, 'sql'>, orgId: string, datasetId: string, sourceId: string) {
  return deps.sql.begin(async (tx) => {
    await datasetOf(tx, orgId, datasetId);
    const source = await kb.getSource(tx, orgId, sourceId);
    if (!source) throw sourceNotFound();
    const attached = await kb.attachSources(tx, orgId, datasetId, [sourceId]);
    return { attached: attached.length > 0, source: sourceView(source) };
  });
}

export async function detachSource(deps: Pick<ServiceDeps, 'sql'>, orgId: string, datasetId: string, sourceId: string): Promise<void> {
  await datasetOf(deps.sql, orgId, datasetId);
  if (!(await kb.detachSource(deps.sql, orgId, datasetId, sourceId))) throw notFound('Source not attached to this dataset');
}

export async function attachByPattern(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  datasetId: string,
  input: { pattern: string; type: SourceType },
) {
  return deps.sql.begin(async (tx) => {
    await datasetOf(tx, orgId, datasetId);
    const matching = await kb.matchingSourceIds(tx, orgId, input.pattern, input.type);
    const fresh = new Set(
      await kb.attachSources(
        tx,
        orgId,
        datasetId,
        matching.map((m) => m.id),
      ),
    );
    return {
      matched_count: matching.length,
      attached_count: fresh.size,
      attached_source_ids: matching.filter((m) => fresh.has(m.id)).map((m) => m.id),
      already_attached_source_ids: matching.filter((m) => !fresh.has(m.id)).map((m) => m.id),
    };
  });
}

// ---- sources ----

type NewSource =
  | { type: 'URL'; url: string; name?: string; description?: string; chunking_strategy?: Strategy }
  | { type: 'FILE'; file_id: string; name?: string; description?: string; chunking_strategy?: Strategy };

async function startIngestion(deps: Pick<ServiceDeps, 'temporal' | 'config'>, orgId: string, sourceId: string): Promise<void> {
  try {
    await deps.temporal.workflow.start<typeof knowledgeSourceIngestion>('knowledgeSourceIngestion', {
      workflowId: sourceWorkflowId(sourceId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ orgId, sourceId }],
      typedSearchAttributes: organizationAttribute(orgId),
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw conflict('The source is being ingested; retry when it is ready or failed');
    throw error;
  }
}

/**
 * The row and its ingestion workflow together: the start runs inside the transaction that inserts the
 * row, so a failed start leaves nothing; the workflow's first activity waits on the source's lock,
 * i.e. for this transaction to end, and ends quietly if the row never committed.
 */
export async function createSource(deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>, orgId: string, actor: string, input: NewSource) {
  const id = newId();
  const row = await deps.sql.begin(async (tx) => {
    await kb.lockSourceId(tx, orgId, id);
    let values: Pick<SourceRow, 'name' | 'url' | 'domain' | 'file_id' | 'file_size'>;
    if (input.type === 'URL') {
      const url = new URL(input.url);
      values = { name: input.name ?? input.url, url: url.toString(), domain: url.hostname, file_id: null, file_size: null };
    } else {
      const file = await files.getFile(tx, orgId, input.file_id);
      if (!file || file.status === 'archived') throw notFound('File not found');
      if (file.status !== 'uploaded') throw conflict('The file is not uploaded yet: confirm its upload first');
      values = { name: input.name ?? file.name, url: null, domain: null, file_id: file.id, file_size: file.size_bytes };
    }
    const inserted = await kb.insertSource(tx, orgId, {
      id,
      type: input.type,
      description: input.description ?? '',
      chunking_method: input.chunking_strategy?.method ?? null,
      chunk_size: input.chunking_strategy?.chunk_size ?? null,
      created_by: actor,
      ...values,
    });
    await startIngestion(deps, orgId, id);
    return inserted;
  });
  return sourceView(row);
}

export async function getSource(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  const row = await kb.getSource(deps.sql, orgId, id);
  if (!row) throw sourceNotFound();
  return sourceView(row);
}

export async function searchSources(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { name_pattern?: string; type?: SourceType; limit: number; offset: number },
) {
  const { rows, count } = await kb.searchSources(deps.sql, orgId, { pattern: query.name_pattern, type: query.type }, query);
  return { data: rows.map(sourceView), count };
}

/** Starts a fresh ingestion of the source; its current chunks keep answering until the new ones replace them. */
export async function reingestSource(deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>, orgId: string, actor: string, id: string) {
  const row = await deps.sql.begin(async (tx) => {
    await kb.lockSourceId(tx, orgId, id);
    const source = await kb.getSource(tx, orgId, id, true);
    if (!source) throw sourceNotFound();
    if (source.file_upload_status === 'pending' || source.file_upload_status === 'processing') {
      throw conflict('The source is being ingested; retry when it is ready or failed');
    }
    const updated = await kb.setSourceStatus(tx, orgId, id, { status: 'pending', modified_by: actor });
    await startIngestion(deps, orgId, id);
    return updated!;
  });
  return sourceView(row);
}

export async function deleteSource(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await kb.deleteSource(deps.sql, orgId, id))) throw sourceNotFound();
}

// ---- ingestion steps (called by the workflow's activities) ----

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
  if (!file || file.status !== 'uploaded') throw new PermanentIngestionError('the file is missing, archived or not uploaded');
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

/** Without EMBEDDINGS_BASE_URL the embedder is the built-in one (platform/embedder.ts): local, deterministic, no network. */
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

/**
 * Embeds up to one batch of the generation's chunks and stores the vectors with the progress count in
 * one transaction; answers how many were embedded (0: all done). A retry (after a worker died) finds
 * only the chunks still without a vector, so no finished batch is embedded twice.
 */
export async function embedBatch(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  sourceId: string,
  generation: number,
  embedder: Embedder = createEmbedder(deps.config),
): Promise<number> {
  const batch = await kb.chunksWithoutEmbedding(deps.sql, orgId, sourceId, generation, deps.config.EMBEDDINGS_BATCH_SIZE);
  if (batch.length === 0) return 0;
  let vectors: number[][];
  try {
    vectors = await embedder.embed(
      batch.map((c) => c.content),
      'passage',
    );
  } catch (error) {
    if (error instanceof EmbedderError && !error.retryable) throw new PermanentIngestionError(error.message);
    throw error;
  }
  await deps.sql.begin(async (tx) => {
    await kb.storeEmbeddings(
      tx,
      orgId,
      embedder.model,
      batch.map((c, i) => ({ id: c.id, embedding: vectors[i]! })),
    );
    await kb.addEmbedded(tx, orgId, sourceId, batch.length);
  });
  return batch.length;
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
    await kb.publishGeneration(tx, orgId, sourceId, generation, createEmbedder(deps.config).model);
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

// ---- bulk import ----

/**
 * Imports texts that are already extracted (a bulk load, the benchmark) as ready sources of the
 * dataset, chunked by the dataset's strategy. Embeddings are computed first, outside any transaction
 * (EMBEDDINGS_BATCH_SIZE texts per embeddings call); then one transaction writes the sources in one
 * INSERT, their chunks with their vectors in multi-row INSERTs, publishes every source in one statement
 * and attaches them: all or nothing. The sources have no file behind them, so a re-ingest of one fails
 * with that reason (and, failed, the source leaves the query results).
 */
export async function importTexts(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  actor: string,
  datasetId: string,
  docs: { name: string; text: string }[],
): Promise<{ source_ids: string[]; chunk_count: number }> {
  const dataset = await datasetOf(deps.sql, orgId, datasetId);
  const embedder = embedderFor(deps.config, dataset.embedding_model);
  if (!embedder) throw conflict(`The dataset's embedding model (${dataset.embedding_model}) is not available`);
  const strategy = { method: dataset.chunking_method, chunk_size: dataset.chunk_size };
  const sources = docs.map((d) => ({ id: newId(), name: d.name, chunks: chunkText(d.text, strategy) }));
  const rows: kb.NewChunk[] = sources.flatMap((s) =>
    s.chunks.map((content, ordinal) => ({ source_id: s.id, generation: 1, ordinal, content, embedding: null })),
  );
  for (let i = 0; i < rows.length; i += deps.config.EMBEDDINGS_BATCH_SIZE) {
    const slice = rows.slice(i, i + deps.config.EMBEDDINGS_BATCH_SIZE);
    let vectors: number[][];
    try {
      vectors = await embedder.embed(
        slice.map((r) => r.content),
        'passage',
      );
    } catch (error) {
      if (error instanceof EmbedderError) throw upstream('Embeddings service unavailable');
      throw error;
    }
    slice.forEach((r, j) => (r.embedding = vectors[j]!));
  }
  const ids = sources.map((s) => s.id);
  await deps.sql.begin(async (tx) => {
    await datasetOf(tx, orgId, datasetId);
    await kb.insertSources(
      tx,
      orgId,
      sources.map((s) => ({
        id: s.id,
        type: 'FILE' as const,
        name: s.name,
        description: '',
        url: null,
        domain: null,
        file_id: null,
        file_size: null,
        chunking_method: null,
        chunk_size: null,
        created_by: actor,
      })),
    );
    await kb.insertChunkRows(tx, orgId, rows, embedder.model);
    await kb.publishGenerations(tx, orgId, ids, 1, embedder.model);
    await kb.attachSources(tx, orgId, datasetId, ids);
  });
  return { source_ids: ids, chunk_count: rows.length };
}

// ---- retrieval ----

/**
 * Hybrid retrieval over the dataset's ready sources: the full-text ranking (bounded, IDF-weighted) and
 * vector similarity in the dataset's embedding space, fused by score (domain `fusedScores`). Scores are
 * in [0, 1] (1: the nearest vector match holding every query word); ties by source, then position in
 * the source. The same function answers agents that use the dataset.
 */
export async function queryDataset(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  datasetId: string,
  input: { query: string; results_count: number },
) {
  const dataset = await datasetOf(deps.sql, orgId, datasetId);
  // The dataset's own model embeds the query; without it at hand the query ranks by full text only.
  const embedder = embedderFor(deps.config, dataset.embedding_model);
  let embedding: number[] | null = null;
  if (embedder) {
    try {
      [embedding] = (await embedder.embed([input.query], 'query')) as [number[]];
    } catch (error) {
      if (error instanceof EmbedderError) throw upstream('Embeddings service unavailable');
      throw error;
    }
  }
  const candidates = Math.max(CANDIDATES_PER_RANKING, input.results_count);
  const ranked = await deps.sql.begin((tx) =>
    kb.rankChunks(tx, orgId, datasetId, { text: input.query, embedding, model: dataset.embedding_model, candidates, ...FULL_TEXT_BOUNDS }),
  );
  const scores = fusedScores(ranked, embedding === null ? 0 : embedder?.lexical ? LEXICAL_EMBEDDER_VECTOR_WEIGHT : VECTOR_WEIGHT);
  const results = ranked
    .map((r, i) => ({ ...r, score: scores[i]! }))
    .sort(
      (a, b) =>
        b.score - a.score || a.source_id.localeCompare(b.source_id) || a.ordinal - b.ordinal || a.chunk_id.localeCompare(b.chunk_id),
    )
    .slice(0, input.results_count)
    .map((r) => ({ content: r.content, score: Number(r.score.toFixed(6)), source_id: r.source_id, dataset_id: datasetId }));
  return { results };
}
