import { WorkflowFailedError, type WorkflowExecutionStatusName } from '@temporalio/client';
import { getAgent, insertAgent } from '../db/agents';
import { findScaffoldDraft, getVersion, insertNextVersion, newestVersion } from '../db/agent-versions';
import { claimFreeNumber } from '../db/phone-numbers';
import { syncInboundRouting } from './inbound-routing';
import { AgentConfig, InstructionBuilderInputs } from '../domain/agent-config';
import { notFound } from '../domain/errors';
import { newId } from '../platform/core/ids';
import { createLlmWriter } from '../platform/adapters/llm/llm';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { extractPageProfile, fetchPage } from '../platform/adapters/web/fetch';
import {
  scaffoldAgentWorkflow,
  scaffoldProgressQuery,
  scaffoldWorkflowId,
  type CompanyProfile,
  type ScaffoldDraft,
  type ScaffoldInput,
  type ScaffoldProgress,
  type VersionRef,
} from '../workflows/agent-messages';
import { agentNotFound } from './agents';
import { publishWithEvent } from './agent-versions';
import type { ServiceDeps } from './deps';
import { iso } from './views';
import { describeWorkflow, queryWorkflow, startWorkflow, workflowResult } from './workflow-client';

// Agents built from a company's website (create-from-website, create-demo): started on request, run by
// the scaffoldAgent workflow through the steps below, and read back as a run with its steps.

const STATUS_NAMES: Partial<
  Record<WorkflowExecutionStatusName, 'running' | 'completed' | 'failed' | 'canceled' | 'terminated' | 'timed_out' | 'continued_as_new'>
> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'canceled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  CONTINUED_AS_NEW: 'continued_as_new',
};

const hostOf = (url: string) => new URL(url).hostname.replace(/^www\./, '');

/** Starts a scaffolding run; nothing is written before the workflow exists (it writes the rows). */
async function startScaffold(deps: Pick<ServiceDeps, 'temporal' | 'config'>, input: ScaffoldInput) {
  const workflowId = scaffoldWorkflowId(input.kind, input.agentId);
  await startWorkflow(deps, scaffoldAgentWorkflow, input.orgId, { workflowId, args: [input] });
  return { workflow_id: workflowId, agent_id: input.agentId };
}

export interface FromWebsiteInput {
  company_website: string;
  company_name?: string;
  company_overview?: string;
  existing_agent_id?: string;
  is_demo?: boolean;
  skip_deployment?: boolean;
  voice_id?: string;
  avatar_url?: string;
  existing_collection_id?: string;
  demo_type?: string;
}

export async function createFromWebsite(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  body: FromWebsiteInput,
) {
  if (body.existing_agent_id && !(await getAgent(deps.sql, orgId, body.existing_agent_id))) throw agentNotFound();
  return startScaffold(deps, {
    kind: 'create-from-website',
    orgId,
    agentId: body.existing_agent_id ?? newId(),
    existingAgent: Boolean(body.existing_agent_id),
    actor,
    companyWebsite: body.company_website,
    companyName: body.company_name,
    companyOverview: body.company_overview,
    isDemo: body.is_demo,
    skipDeployment: body.skip_deployment,
    voiceId: body.voice_id,
    avatarUrl: body.avatar_url,
    collectionId: body.existing_collection_id,
    demoType: body.demo_type,
    includePhoneNumber: false,
  } as ScaffoldInput);
}

export async function createDemo(
  deps: Pick<ServiceDeps, 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  body: { company_website: string; instructions?: string; include_phone_number?: boolean },
) {
  return startScaffold(deps, {
    kind: 'create-demo',
    orgId,
    agentId: newId(),
    existingAgent: false,
    actor,
    companyWebsite: body.company_website,
    instructions: body.instructions,
    isDemo: true,
    skipDeployment: false,
    includePhoneNumber: body.include_phone_number,
  } as ScaffoldInput);
}

/** A scaffolding run of the organization, read from Temporal: its state, steps, result or error. */
export async function scaffoldRun(deps: Pick<ServiceDeps, 'temporal'>, orgId: string, workflowId: string) {
  const info = await describeWorkflow(deps, workflowId);
  if (!info) throw notFound('Not Found');
  // Another organization's run, or a workflow of another kind, does not exist here.
  if (info.type !== scaffoldAgentWorkflow.name || info.typedSearchAttributes.get(ORGANIZATION_ID) !== orgId)
    throw notFound('Workflow not found');
  const status = STATUS_NAMES[info.status.name] ?? ('unknown' as const);
  let progress: ScaffoldProgress | null = null;
  let error: string | null = null;
  if (status === 'completed') progress = await workflowResult<ScaffoldProgress>(deps, workflowId);
  else {
    progress = await queryWorkflow(deps, workflowId, scaffoldProgressQuery, 5000);
    if (status === 'failed') {
      error = await workflowResult(deps, workflowId).then(
        () => null,
        (e: unknown) => (e instanceof WorkflowFailedError ? (e.cause?.message ?? e.message) : String(e)),
      );
    }
  }
  const kind = workflowId.startsWith('agent-demo:') ? 'create-demo' : 'create-from-website';
  return {
    workflow_id: info.workflowId,
    kind: progress?.kind ?? kind,
    status,
    agent_id: progress?.agent_id ?? workflowId.slice(workflowId.indexOf(':') + 1),
    steps: progress?.steps ?? [],
    result: status === 'completed' ? (progress?.result ?? null) : null,
    error,
    started_at: info.startTime.toISOString(),
    closed_at: iso(info.closeTime ?? null),
  };
}

// --- the scaffoldAgent workflow's steps ---

/** Fetches the company's page and says what it shows (a WebFetchError says whether a retry can help). */
export async function fetchCompanyProfile(deps: Pick<ServiceDeps, 'config'>, input: { url: string }): Promise<CompanyProfile> {
  const page = await fetchPage(input.url, { allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE });
  const profile = extractPageProfile(page.body, page.url, 4000);
  const overview = await createLlmWriter(deps.config, 'summary').summariseCompany(profile);
  return { ...profile, overview: overview.slice(0, 20_000) };
}

/** Creates (or finds again, on a retry) the run's agent and its draft version; not found when a reused agent is gone. */
export async function prepareScaffoldDraft(
  deps: Pick<ServiceDeps, 'sql'>,
  input: ScaffoldInput & { profile: CompanyProfile | null; runId: string },
): Promise<ScaffoldDraft> {
  return deps.sql.begin(async (tx) => {
    const { orgId, agentId, profile } = input;
    if (input.existingAgent) {
      if (!(await getAgent(tx, orgId, agentId, { forUpdate: true }))) throw notFound('The agent no longer exists');
    } else {
      const site = profile?.title?.slice(0, 150) || hostOf(input.companyWebsite);
      const name = input.companyName ?? `${site} (demo)`;
      const metadata: Record<string, unknown> = { source: input.kind, company_website: input.companyWebsite };
      if (input.avatarUrl) metadata.avatar_url = input.avatarUrl;
      if (input.demoType) metadata.demo_type = input.demoType;
      await insertAgent(
        tx,
        orgId,
        { name, description: profile?.description?.slice(0, 5000) ?? null, is_demo: input.isDemo, metadata },
        input.actor,
        agentId,
      );
      await getAgent(tx, orgId, agentId, { forUpdate: true });
    }

    const inputs = InstructionBuilderInputs.parse({
      company_name: (input.companyName ?? profile?.title ?? hostOf(input.companyWebsite)).slice(0, 200),
      company_website: input.companyWebsite,
      company_overview: (input.companyOverview ?? profile?.overview)?.slice(0, 20_000) || undefined,
      key_facts: profile?.headings.length ? profile.headings.slice(0, 10).map((h) => h.slice(0, 1000)) : undefined,
    });
    const needsInstructions = !input.instructions;
    const again = await findScaffoldDraft(tx, orgId, agentId, input.runId);
    if (again) return { version: again.version, inputs, needsInstructions };

    const base = await newestVersion(tx, orgId, agentId);
    const baseConfig = AgentConfig.safeParse(base?.config ?? {});
    const start = baseConfig.success ? baseConfig.data : AgentConfig.parse({});
    const config = AgentConfig.parse({
      ...start,
      instructions: input.instructions ?? start.instructions,
      first_message: start.first_message ?? `Hello, thanks for calling ${inputs.company_name}. How can I help you today?`,
      voice: { ...start.voice, ...(input.voiceId ? { voice_id: input.voiceId } : {}) },
      knowledge_base: {
        ...start.knowledge_base,
        dataset_ids: input.collectionId
          ? [...new Set([...start.knowledge_base.dataset_ids, input.collectionId])]
          : start.knowledge_base.dataset_ids,
      },
    });
    const draft = await insertNextVersion(
      tx,
      orgId,
      agentId,
      {
        config,
        instruction_builder_inputs: inputs as unknown as Record<string, unknown>,
        // Given instructions are the caller's own words: manually edited. Otherwise generating until written.
        instructions_generating: needsInstructions,
        instructions_manually_edited: !needsInstructions,
        scaffold_run_id: input.runId,
      },
      input.actor,
    );
    return { version: draft.version, inputs, needsInstructions };
  });
}

/**
 * Publishes the scaffolded version with its `agent_version.published` event in one transaction. A retry
 * after a commit finds the version published and writes nothing, so the event is emitted once.
 */
export async function publishScaffoldVersion(deps: Pick<ServiceDeps, 'sql'>, input: VersionRef & { actor: string }) {
  return deps.sql.begin(async (tx) => {
    const before = await getVersion(tx, input.orgId, input.agentId, input.version);
    if (before?.published) return { ok: true as const };
    return publishWithEvent(tx, { ...input, assign: [], unassign: [], directions: ['inbound'] }, 'inbound');
  });
}

/**
 * A free number of the organization's inventory, now serving the agent inbound (pointed at the service at its
 * provider in the same transaction: a provider failure claims nothing and the activity is retried); null when
 * none is free.
 */
export async function assignFreePhoneNumber(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  input: { orgId: string; agentId: string },
): Promise<string | null> {
  return deps.sql.begin(async (tx) => {
    const row = await claimFreeNumber(tx, input.orgId, input.agentId);
    if (row) await syncInboundRouting(deps, tx, input.orgId, [row.id]);
    return row?.number ?? null;
  });
}
