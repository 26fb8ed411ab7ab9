import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import * as files from '../../db/files';
import * as kb from '../../db/knowledge-base';
import type { SourceRow } from '../../db/knowledge-base';
import { conflict, notFound } from '../../domain/errors';
import type { SourceType } from '../../domain/knowledge-base';
import { newId } from '../../platform/core/ids';
import { knowledgeSourceIngestionWorkflow, sourceWorkflowId } from '../../workflows/knowledge-base-messages';
import type { ServiceDeps } from '../deps';
import { startWorkflow } from '../workflow-client';
import { sourceNotFound, sourceView, type Strategy } from './views';

// Sources (a URL or an uploaded file): created and re-ingested with their ingestion workflow
// (`kb-source:<source_id>`, steps in ./ingestion.ts), read, searched and deleted.

type NewSource =
  | { type: 'URL'; url: string; name?: string; description?: string; chunking_strategy?: Strategy }
  | { type: 'FILE'; file_id: string; name?: string; description?: string; chunking_strategy?: Strategy };

async function startIngestion(deps: Pick<ServiceDeps, 'temporal' | 'config'>, orgId: string, sourceId: string): Promise<void> {
  try {
    await startWorkflow(deps, knowledgeSourceIngestionWorkflow, orgId, {
      workflowId: sourceWorkflowId(sourceId),
      args: [{ orgId, sourceId }],
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
