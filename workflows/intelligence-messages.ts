import type { RunStatus } from '../domain/intelligence';
import type { icpFitRunWorkflow, researchRunWorkflow } from './intelligence';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the research and ICP-fit workflows, their activities and the services that start them.

/** Temporal ids of the runs (`research:<run_id>`, `icp-fit:<run_id>`); the API also shows and reads runs by them. */
export const researchWorkflowId = (runId: string) => `research:${runId}`;
export const icpFitWorkflowId = (runId: string) => `icp-fit:${runId}`;
export const researchRunWorkflowRef = workflowRef<typeof researchRunWorkflow>('researchRunWorkflow');
export const icpFitRunWorkflowRef = workflowRef<typeof icpFitRunWorkflow>('icpFitRunWorkflow');

export interface IntelligenceRunInput {
  orgId: string;
  runId: string;
}

export interface IcpFitRunInput extends IntelligenceRunInput {
  accounts: number;
}

/** What a finished research run says (kept small: it goes into the workflow's history). */
export interface ResearchFinish {
  status: RunStatus;
  facts: number;
}

// Inputs of the intelligence activities (activities/intelligence.ts).
export type ResearchPageStep = IntelligenceRunInput & { url: string };
export type ResearchClosing = IntelligenceRunInput & { status: 'cancelled' | 'failed'; error?: string };
export type IcpFitChunk = IntelligenceRunInput & { from: number };
export type IcpFitFinish = IntelligenceRunInput & { status: 'completed' | 'failed' | 'cancelled'; error?: string };
