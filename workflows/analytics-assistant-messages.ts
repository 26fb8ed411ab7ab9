import type { analyticsAssistantTurnWorkflow } from './analytics-assistant';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the Analytics Assistant's turn workflow, its activities and the service that starts it.

/** One workflow per conversation at a time: a turn (`analytics-assistant:<conversation_id>`); the next turn reuses the id. */
export const analyticsAssistantWorkflowId = (conversationId: string) => `analytics-assistant:${conversationId}`;
export const analyticsAssistantTurnWorkflowRef = workflowRef<typeof analyticsAssistantTurnWorkflow>('analyticsAssistantTurnWorkflow');

export interface AnalyticsTurnInput {
  orgId: string;
  conversationId: string;
  turnId: string;
  /** run_sql calls in one turn at most (refusals and errors included); then the model answers in text. */
  maxAttempts: number;
}
