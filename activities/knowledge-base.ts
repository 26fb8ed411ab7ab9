import { Context } from '@temporalio/activity';
import * as ingestion from '../services/knowledge-base/ingestion';
import type { GenerationStep, IngestionFailure, KnowledgeSourceIngestionInput } from '../workflows/knowledge-base-messages';
import type { ActivityDeps } from './deps';
import { classified, onError } from './failures';

/** A failure no retry can fix ends the activity at once; anything else is retried by its policy. */
const INGESTION_FAILURES = [onError(ingestion.PermanentIngestionError, 'IngestionFailed')];

export function createKnowledgeBaseActivities(deps: ActivityDeps) {
  return {
    /** Marks the source processing; the generation to write, or null when the source is gone. */
    async kbBeginIngestion({ orgId, sourceId }: KnowledgeSourceIngestionInput): Promise<number | null> {
      return (await ingestion.beginIngestion(deps, orgId, sourceId)) ?? null;
    },
    /** Extract and chunk; the number of chunks written, or null when the source is gone. */
    async kbExtractAndChunk({ orgId, sourceId, generation }: GenerationStep): Promise<number | null> {
      return classified(INGESTION_FAILURES, async () => (await ingestion.extractAndChunk(deps, orgId, sourceId, generation)) ?? null);
    },
    /**
     * Embeds one batch; how many chunks it embedded (0 when none is left). Heartbeats while the model
     * works, so a worker that dies mid-batch is noticed within the step's heartbeat timeout, not its
     * whole start-to-close timeout.
     */
    async kbEmbedBatch({ orgId, sourceId, generation }: GenerationStep): Promise<number> {
      const context = Context.current();
      context.heartbeat();
      const beat = setInterval(() => context.heartbeat(), 2000);
      try {
        return await classified(INGESTION_FAILURES, () => ingestion.embedBatch(deps, orgId, sourceId, generation));
      } finally {
        clearInterval(beat);
      }
    },
    kbPublishIngestion: ({ orgId, sourceId, generation }: GenerationStep) => ingestion.publishIngestion(deps, orgId, sourceId, generation),
    kbFailIngestion: ({ orgId, sourceId, reason }: IngestionFailure) => ingestion.failIngestion(deps, orgId, sourceId, reason),
  };
}

/** What the knowledge-base workflows may call: their `proxyActivities<KnowledgeBaseActivities>` type. */
export type KnowledgeBaseActivities = ReturnType<typeof createKnowledgeBaseActivities>;
