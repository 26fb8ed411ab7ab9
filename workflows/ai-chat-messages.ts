import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { aiChatTurnWorkflow } from './ai-chat';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the AI chat turn workflow, its activities and the services that wake it.

/** One workflow per chat at a time: a turn (`ai-chat:<chat_id>`); the next turn reuses the id. */
export const aiChatWorkflowId = (chatId: string) => `ai-chat:${chatId}`;
export const aiChatTurnWorkflowRef = workflowRef<typeof aiChatTurnWorkflow>('aiChatTurnWorkflow');

export interface AiChatTurnInput {
  orgId: string;
  chatId: string;
  turnId: string;
  /** Model calls in one turn at most; then the turn ends with what it has. */
  maxSteps: number;
  /** How long a proposed change waits for its answer before it expires. */
  approvalTtlMs: number;
}

export type TurnPhase = 'model' | 'tools' | 'awaiting_approval' | 'applying' | 'ending';

export interface TurnState {
  step: number;
  phase: TurnPhase;
  pendingApprovalId: string | null;
  stopRequested: boolean;
}

/** POST /ai/chats/{chat_id}/stop: end the turn (a model call in flight is canceled). */
export const stopTurnSignal = defineSignal('aiChatStop');
/** An approval of this turn was answered (the answer is in Postgres; the signal only wakes the turn). */
export const approvalAnsweredSignal = defineSignal<[string]>('aiChatApprovalAnswered');
export const turnStateQuery = defineQuery<TurnState>('aiChatTurnState');
