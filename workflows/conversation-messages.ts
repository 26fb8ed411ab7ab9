import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { conversationWorkflow, recordingRetentionWorkflow } from './conversations';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by a voice conversation's workflow, its activities and the engine.

/** One workflow per conversation, named after it. */
export const conversationWorkflowId = (conversationId: string) => `conversation:${conversationId}`;
export const conversationWorkflowRef = workflowRef<typeof conversationWorkflow>('conversationWorkflow');
export const recordingRetentionScheduleId = 'conversation-recordings-retention';
export const recordingRetentionWorkflowRef = workflowRef<typeof recordingRetentionWorkflow>('recordingRetentionWorkflow');

export interface ConversationInput {
  orgId: string;
  conversationId: string;
  maxDurationSeconds: number;
}

export interface ConversationEnded {
  /** Why: `caller_hung_up`, `agent_ended`, `silence`, `max_duration`, `voicemail`, `transferred`, `engine_lost`, `error`. */
  reason: string;
  status: 'completed' | 'failed' | 'transferred' | 'voicemail' | 'no_input';
  transferredTo?: string | null;
}

export const conversationEndedSignal = defineSignal<[ConversationEnded]>('conversationEnded');

/** A tool call of the conversation: run once whatever the retries or the engine (the update's id is its key). */
export interface ToolCallRequest {
  turn: number;
  callId: string;
  /** domain/voice-tools.ts toolCallKey: the same for the same call on any engine. */
  key: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ToolCallResult {
  ok: boolean;
  /** What the model reads back (JSON text or a sentence). */
  content: string;
  /** A transfer that went through: the destination. */
  transferredTo?: string;
  ms: number;
}

export const runToolUpdate = defineUpdate<ToolCallResult, [ToolCallRequest]>('runTool');

export interface RunToolInput extends ToolCallRequest {
  orgId: string;
  conversationId: string;
}

export interface FinishInput {
  orgId: string;
  conversationId: string;
  ended: ConversationEnded;
}
