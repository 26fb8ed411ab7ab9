import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { KnowledgeBaseActivities } from '../activities/knowledge-base';
import type { KnowledgeSourceIngestionInput } from './knowledge-base-messages';

const steps = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});
/** One embedding batch: a worker that dies mid-batch is seen within the heartbeat timeout, and the batch runs again elsewhere. */
const embedding = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});
const bookkeeping = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/** The reason shown on a failed source: the activity's own message, not Temporal's wrapping. */
function reasonOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) return error.cause.message;
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * One ingestion of a source (`kb-source:<source_id>`): extract, chunk, embed in batches, then publish
 * the new generation of chunks in one transaction. Each step is retried by its policy; a step that
 * still fails (or fails for good) marks the source failed, with the reason, and notifies.
 */
export async function knowledgeSourceIngestion(input: KnowledgeSourceIngestionInput): Promise<'ready' | 'failed' | 'missing'> {
  const generation = await bookkeeping.kbBeginIngestion(input);
  if (generation === null) return 'missing';
  try {
    const chunks = await steps.kbExtractAndChunk({ ...input, generation });
    if (chunks === null) return 'missing';
    while ((await embedding.kbEmbedBatch({ ...input, generation })) > 0) {
      // one batch per activity, stored with its progress count: a restart redoes at most the batch in flight
    }
    await bookkeeping.kbPublishIngestion({ ...input, generation });
    return 'ready';
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await bookkeeping.kbFailIngestion({ ...input, reason: reasonOf(error) });
    return 'failed';
  }
}
