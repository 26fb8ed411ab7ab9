import * as versions from '../db/agent-versions';
import type { InstructionBuilderInputs } from '../domain/agent-config';
import { conflict, invalid } from '../domain/errors';
import { createLlmWriter } from '../platform/adapters/llm/llm';
import { generateAgentInstructionsWorkflow, instructionsWorkflowId, type VersionRef } from '../workflows/agent-messages';
import { lockVersion } from './agent-versions';
import type { ServiceDeps } from './deps';
import { describeWorkflow, startAfterPreviousRun } from './workflow-client';

// A draft's instructions written from its builder inputs: started on request, written by the
// generateAgentInstructions workflow (and by the scaffolding run) through the steps below.

/** Whether a workflow with this id is running now. */
async function isRunning(deps: Pick<ServiceDeps, 'temporal'>, workflowId: string): Promise<boolean> {
  return (await describeWorkflow(deps, workflowId))?.status.name === 'RUNNING';
}

/** Starts writing a draft's instructions from its builder inputs; the generating flag and the start commit together. */
export async function generateInstructions(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  agentId: string,
  version: string,
) {
  const workflowId = await deps.sql.begin(async (tx) => {
    const v = await lockVersion(tx, orgId, agentId, version);
    if (v.published) throw conflict('Published versions are immutable: their instructions cannot be generated again');
    if (!v.instruction_builder_inputs) throw invalid('instruction_builder_inputs are required to generate instructions');
    const id = instructionsWorkflowId(agentId, v.version);
    // A flag whose run is gone (terminated by an operator, say) must not block the version for good.
    if (v.instructions_generating && (await isRunning(deps, id))) throw conflict('Instructions are already being generated');
    await versions.markGenerating(tx, orgId, agentId, v.version, actor);
    // Started before the flag commits; a failed start rolls the flag back (the error handler answers 503).
    // The previous run of this version may still be closing after its last step cleared the flag.
    await startAfterPreviousRun(deps, generateAgentInstructionsWorkflow, orgId, {
      workflowId: id,
      args: [{ orgId, agentId, version: v.version }],
    });
    return id;
  });
  return { workflow_id: workflowId };
}

/**
 * The builder inputs of a version whose generation was started, or null when there is nothing to do.
 * The row lock waits for the API transaction that set `instructions_generating` to commit or roll
 * back, so a start whose transaction rolled back ends here quietly.
 */
export async function beginInstructionGeneration(
  deps: Pick<ServiceDeps, 'sql'>,
  ref: VersionRef,
): Promise<InstructionBuilderInputs | null> {
  return deps.sql.begin(async (tx) => {
    const v = await versions.getVersion(tx, ref.orgId, ref.agentId, ref.version, { forUpdate: true });
    if (!v || v.published || !v.instructions_generating || !v.instruction_builder_inputs) return null;
    return v.instruction_builder_inputs as unknown as InstructionBuilderInputs;
  });
}

export async function writeInstructions(deps: Pick<ServiceDeps, 'config'>, inputs: InstructionBuilderInputs): Promise<string> {
  return createLlmWriter(deps.config, 'instructions').writeInstructions(inputs);
}

export async function saveInstructions(deps: Pick<ServiceDeps, 'sql'>, input: VersionRef & { instructions: string }): Promise<boolean> {
  return versions.saveGeneratedInstructions(deps.sql, input.orgId, input.agentId, input.version, input.instructions);
}

export async function abortInstructionGeneration(deps: Pick<ServiceDeps, 'sql'>, input: VersionRef & { error: string }): Promise<void> {
  await versions.abortGeneration(deps.sql, input.orgId, input.agentId, input.version, input.error);
}
