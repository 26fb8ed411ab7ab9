import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import * as kbService from '../services/knowledge-base';
import type { ActivityDeps } from './deps';

export interface SourceStep {
  orgId: string;
  sourceId: string;
}

/** A failure no retry can fix ends the activity at once; anything else is retried by its policy. */
async function permanentAsNonRetryable<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof kbService.PermanentIngestionError) throw ApplicationFailure.nonRetryable(error.message, 'IngestionFailed');
    throw error;
  }
}

export function createKnowledgeBaseActivities(deps: ActivityDeps) {
  return {
    /** Marks the source processing; the generation to write, or null when the source is gone. */
    async kbBeginIngestion({ orgId, sourceId }: SourceStep): Promise<number | null> {
      return (await kbService.beginIngestion(deps, orgId, sourceId)) ?? null;
    },
    /** Extract and chunk; the number of chunks written, or null when the source is gone. */
    async kbExtractAndChunk({ orgId, sourceId, generation }: SourceStep & { generation: number }): Promise<number | null> {
      return permanentAsNonRetryable(async () => (await kbService.extractAndChunk(deps, orgId, sourceId, generation)) ?? null);
    },
    /**
     * Embeds one batch; how many chunks it embedded (0 when none is left). Heartbeats while the model
     * works, so a worker that dies mid-batch is noticed within the step's heartbeat timeout, not its
     * whole start-to-close timeout.
     */
    async kbEmbedBatch({ orgId, sourceId, generation }: SourceStep & { generation: number }): Promise<number> {
      const context = Context.current();
      context.heartbeat();
      const beat = setInterval(() => context.heartbeat(), 2000);
      try {
        return await permanentAsNonRetryable(() => kbService.embedBatch(deps, orgId, sourceId, generation));
      } finally {
        clearInterval(beat);
      }
    },
    async kbPublishIngestion({ orgId, sourceId, generation }: SourceStep & { generation: number }): Promise<void> {
      await kbService.publishIngestion(deps, orgId, sourceId, generation);
    },
    async kbFailIngestion({ orgId, sourceId, reason }: SourceStep & { reason: string }): Promise<void> {
      await kbService.failIngestion(deps, orgId, sourceId, reason);
    },
  };
}
