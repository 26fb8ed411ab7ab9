import type { Db } from '../../db/client';
import * as kb from '../../db/knowledge-base';
import type { DatasetRow, SourceRow } from '../../db/knowledge-base';
import type { ChunkingMethod } from '../../domain/knowledge-base';
import { notFound } from '../../domain/errors';
import { iso } from '../views';

// The knowledge base's datasets and sources as the API shows them, and their not-found answers.

export type Strategy = { method?: ChunkingMethod | null; chunk_size?: number | null };

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

export const datasetNotFound = () => notFound('Dataset not found');
export const sourceNotFound = () => notFound('Source not found');

export async function datasetOf(db: Db, orgId: string, id: string): Promise<DatasetRow> {
  const row = await kb.getDataset(db, orgId, id);
  if (!row) throw datasetNotFound();
  return row;
}
