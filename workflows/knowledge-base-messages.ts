import type { knowledgeSourceIngestion } from './knowledge-base';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the source ingestion workflow, its activities and the services that start it.

/** One ingestion per source at a time (`kb-source:<source_id>`): a start while one runs is refused. */
export const sourceWorkflowId = (sourceId: string) => `kb-source:${sourceId}`;
export const knowledgeSourceIngestionWorkflow = workflowRef<typeof knowledgeSourceIngestion>('knowledgeSourceIngestion');

export interface KnowledgeSourceIngestionInput {
  orgId: string;
  sourceId: string;
}

/** A step that writes the chunks of one generation of the source. */
export interface GenerationStep extends KnowledgeSourceIngestionInput {
  generation: number;
}

/** Input of the activity that records a failed ingestion. */
export type IngestionFailure = KnowledgeSourceIngestionInput & { reason: string };
