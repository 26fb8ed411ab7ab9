import { defineUpdate } from '@temporalio/workflow';
import type { replayWorkflow } from './replays';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by a replay's workflow, the worker's activities and the engine's.

/** One workflow per replay, named after it. */
export const replayWorkflowId = (replayId: string) => `replay:${replayId}`;
export const replayWorkflowRef = workflowRef<typeof replayWorkflow>('replayWorkflow');

/** The engine's task queue beside the worker's: a replay's turns run where the speech models and the model are. */
export const voiceTaskQueue = (mainQueue: string) => `${mainQueue}-voice`;

export interface ReplayInput {
  orgId: string;
  replayId: string;
  /** The engines' task queue (voiceTaskQueue of the service's). */
  engineQueue: string;
}

export interface ReplayRef {
  orgId: string;
  replayId: string;
}

/** A tool call the replayed version made, run for real (`call_tools: true`): once each, its key the update's id. */
export interface ReplayToolRequest {
  key: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ReplayToolResult {
  ok: boolean;
  content: string;
  ms: number;
}

export const replayToolUpdate = defineUpdate<ReplayToolResult, [ReplayToolRequest]>('replayTool');

export interface ReplayCounts {
  turns: number;
  changed: number;
}

/** What the engine's activity does (voice/replay/activities.ts), typed here: workflow code never imports the engine. */
export interface ReplayEngineActivities {
  /** Runs the replay's turns in order and writes its result; answers its counts. */
  runReplay(input: ReplayRef): Promise<ReplayCounts>;
}
