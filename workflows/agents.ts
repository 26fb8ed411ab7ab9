import { ActivityFailure, ApplicationFailure, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AgentActivities } from '../activities/agents';
import {
  scaffoldProgressQuery,
  type CompanyProfile,
  type ScaffoldDraft,
  type ScaffoldInput,
  type ScaffoldProgress,
  type ScaffoldStepName,
  type ScaffoldStepStatus,
  type VersionRef,
} from './agent-messages';

const db = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '10 seconds' },
});
// Outside calls (the website, the LLM) are slower and fewer attempts are worth making.
const outside = proxyActivities<AgentActivities>({
  startToCloseTimeout: '3 minutes',
  retry: { maximumAttempts: 3, initialInterval: '2 seconds', maximumInterval: '30 seconds' },
});

const reason = (error: unknown): string =>
  error instanceof ActivityFailure && error.cause ? error.cause.message : error instanceof Error ? error.message : String(error);

/**
 * Writes a draft's instructions from its instruction_builder_inputs. Started by the API inside the
 * transaction that sets `instructions_generating`; ends quietly when that transaction never committed.
 */
export async function generateAgentInstructions(ref: VersionRef): Promise<{ status: 'written' | 'skipped' }> {
  const inputs = await db.beginAgentInstructionGeneration(ref);
  if (!inputs) return { status: 'skipped' };
  try {
    const instructions = await outside.writeAgentInstructions(inputs);
    await db.saveAgentInstructions({ ...ref, instructions });
    return { status: 'written' };
  } catch (error) {
    await db.abortAgentInstructionGeneration({ ...ref, error: reason(error) });
    throw ApplicationFailure.nonRetryable(`Instruction generation failed: ${reason(error)}`, 'InstructionGenerationFailed');
  }
}

const STEPS: ScaffoldStepName[] = ['fetch_website', 'prepare_agent', 'generate_instructions', 'publish', 'assign_phone_number'];

/**
 * Builds an agent from a company's website: read the site, create (or reuse) the agent with a draft,
 * write its instructions, publish it unless asked not to, and give it a free phone number when asked.
 * Its progress is readable at any time through scaffoldProgressQuery.
 */
export async function scaffoldAgent(input: ScaffoldInput): Promise<ScaffoldProgress> {
  const progress: ScaffoldProgress = {
    kind: input.kind,
    agent_id: input.agentId,
    steps: STEPS.map((name) => ({ name, status: 'pending', detail: null })),
    result: null,
  };
  setHandler(scaffoldProgressQuery, () => progress);
  const mark = (name: ScaffoldStepName, status: ScaffoldStepStatus, detail: string | null = null) => {
    const step = progress.steps.find((s) => s.name === name)!;
    step.status = status;
    step.detail = detail;
  };
  const fail = (name: ScaffoldStepName, error: unknown): never => {
    mark(name, 'failed', reason(error));
    throw ApplicationFailure.nonRetryable(`${name} failed: ${reason(error)}`, 'ScaffoldFailed');
  };

  mark('fetch_website', 'running');
  let profile: CompanyProfile | null = null;
  try {
    profile = await outside.fetchCompanyProfile({ url: input.companyWebsite });
    mark('fetch_website', 'completed', profile.title ?? profile.url);
  } catch (error) {
    // Without the site, the caller's own overview or instructions are enough to go on.
    if (!input.companyOverview && !input.instructions) fail('fetch_website', error);
    mark('fetch_website', 'failed', `${reason(error)}; continuing with the given ${input.companyOverview ? 'overview' : 'instructions'}`);
  }

  mark('prepare_agent', 'running');
  let draft: ScaffoldDraft;
  try {
    draft = await db.prepareScaffoldDraft({ ...input, profile, runId: workflowInfo().runId });
    mark('prepare_agent', 'completed', `${input.existingAgent ? 'reused' : 'created'} agent, draft version ${draft.version}`);
  } catch (error) {
    return fail('prepare_agent', error);
  }
  const ref: VersionRef = { orgId: input.orgId, agentId: input.agentId, version: draft.version };
  progress.result = { agent_id: input.agentId, version: draft.version, published: false, phone_number: null };

  if (draft.needsInstructions) {
    mark('generate_instructions', 'running');
    try {
      const instructions = await outside.writeAgentInstructions(draft.inputs);
      await db.saveAgentInstructions({ ...ref, instructions });
      mark('generate_instructions', 'completed');
    } catch (error) {
      await db.abortAgentInstructionGeneration({ ...ref, error: reason(error) });
      fail('generate_instructions', error);
    }
  } else {
    mark('generate_instructions', 'skipped', 'instructions were given');
  }

  if (input.skipDeployment) {
    mark('publish', 'skipped', 'skip_deployment');
  } else {
    mark('publish', 'running');
    try {
      await db.publishScaffoldVersion({ ...ref, actor: input.actor });
      progress.result.published = true;
      mark('publish', 'completed', `version ${draft.version} published`);
    } catch (error) {
      fail('publish', error);
    }
  }

  if (!input.includePhoneNumber) {
    mark('assign_phone_number', 'skipped', 'not requested');
  } else {
    mark('assign_phone_number', 'running');
    const number = await db.assignFreePhoneNumber({ orgId: input.orgId, agentId: input.agentId });
    progress.result.phone_number = number;
    if (number) mark('assign_phone_number', 'completed', number);
    else mark('assign_phone_number', 'skipped', "no free number in the organization's inventory");
  }
  return progress;
}
