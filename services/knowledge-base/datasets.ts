import * as kb from '../../db/knowledge-base';
import { conflict, notFound, upstream } from '../../domain/errors';
import { DEFAULT_CHUNKING, chunkText, type SourceType } from '../../domain/knowledge-base';
import { EmbedderError, createEmbedder, embedderFor } from '../../platform/adapters/embedders/embedder';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { datasetNotFound, datasetOf, datasetView, sourceNotFound, sourceView, type Strategy } from './views';

// Datasets: their CRUD, the sources attached to them, and the bulk import of texts already extracted.

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
    for (const [j, r] of slice.entries()) r.embedding = vectors[j]!;
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
