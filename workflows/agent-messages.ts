import { defineQuery } from '@temporalio/workflow';
import type { InstructionBuilderInputs } from '../domain/agent-config';
import type { generateAgentInstructions, scaffoldAgent } from './agents';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the agent workflows (scaffolding, instruction generation), their
// activities and the services that start and read them.

/** One generation per draft version at a time (`agent-instructions:<agent_id>:<version>`). */
export const instructionsWorkflowId = (agentId: string, version: number) => `agent-instructions:${agentId}:${version}`;
export const generateAgentInstructionsWorkflow = workflowRef<typeof generateAgentInstructions>('generateAgentInstructions');

export const scaffoldWorkflowId = (kind: ScaffoldInput['kind'], agentId: string) =>
  `${kind === 'create-demo' ? 'agent-demo' : 'agent-website'}:${agentId}`;
export const scaffoldAgentWorkflow = workflowRef<typeof scaffoldAgent>('scaffoldAgent');

export interface VersionRef {
  orgId: string;
  agentId: string;
  version: number;
}

/**
 * What the company's page shows (platform/adapters/llm/llm's PageProfile: workflow code may not import platform/,
 * even as a type) and what the company does.
 */
export interface CompanyProfile {
  url: string;
  title: string | null;
  description: string | null;
  headings: string[];
  text: string;
  /** What the company does, in a few sentences (the LLM's, or the built-in writer's excerpt). */
  overview: string;
}

/** What a scaffolding run was asked to do (see POST /core/agents/create-from-website and create-demo). */
export interface ScaffoldInput {
  kind: 'create-from-website' | 'create-demo';
  orgId: string;
  agentId: string;
  /** The agent exists already (existing_agent_id); otherwise the run creates it with agentId. */
  existingAgent: boolean;
  actor: string;
  companyWebsite: string;
  companyName?: string;
  companyOverview?: string;
  isDemo: boolean;
  skipDeployment: boolean;
  voiceId?: string;
  avatarUrl?: string;
  collectionId?: string;
  demoType?: string;
  instructions?: string;
  includePhoneNumber: boolean;
}

export interface ScaffoldDraft {
  version: number;
  inputs: InstructionBuilderInputs;
  /** Instructions still to be written by the instruction writer. */
  needsInstructions: boolean;
}

export type ScaffoldStepName = 'fetch_website' | 'prepare_agent' | 'generate_instructions' | 'publish' | 'assign_phone_number';
export type ScaffoldStepStatus = 'pending' | 'running' | 'completed' | 'skipped' | 'failed';

export interface ScaffoldProgress {
  kind: ScaffoldInput['kind'];
  agent_id: string;
  steps: { name: ScaffoldStepName; status: ScaffoldStepStatus; detail: string | null }[];
  result: { agent_id: string; version: number | null; published: boolean; phone_number: string | null } | null;
}

export const scaffoldProgressQuery = defineQuery<ScaffoldProgress>('scaffoldProgress');

// Inputs of the agent activities (activities/agents.ts).
export type InstructionsSave = VersionRef & { instructions: string };
export type InstructionsAbort = VersionRef & { error: string };
export interface CompanyPageRef {
  url: string;
}
export type ScaffoldDraftInput = ScaffoldInput & { profile: CompanyProfile | null; runId: string };
export type ScaffoldPublish = VersionRef & { actor: string };
export interface PhoneNumberClaim {
  orgId: string;
  agentId: string;
}
