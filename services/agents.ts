import { WorkflowFailedError, type WorkflowExecutionStatusName } from '@temporalio/client';
import type { ScaffoldInput } from '../activities/agents';
import * as agents from '../db/agents';
import { countVersions, recentVersions } from '../db/agent-versions';
import { numbersOfAgent } from '../db/phone-numbers';
import { SIP_PROVISIONING, SIP_PROVISIONING_NOTE, sipUri } from '../domain/agents';
import { conflict, invalid, notFound } from '../domain/errors';
import { newId } from '../platform/ids';
import { ORGANIZATION_ID, organizationAttribute } from '../platform/temporal';
import { scaffoldAgent, scaffoldProgressQuery, scaffoldWorkflowId, type ScaffoldProgress } from '../workflows/agents';
import { agentView, instructionsState, jsonObjectFilter, toBool } from './agent-views';
import type { ServiceDeps } from './deps';
import { CreatedCursor, cursorPage, decodeCursor } from './pagination';
import { iso } from './views';

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

const agentNotFound = () => notFound('Agent not found');

export interface AgentListQuery {
  name?: string;
  active?: 'true' | 'false';
  is_demo?: 'true' | 'false';
  metadata?: string;
  created_before?: string;
  created_after?: string;
  updated_before?: string;
  updated_after?: string;
  limit: number;
  cursor?: string;
}

export async function listAgents(deps: Pick<ServiceDeps, 'sql'>, orgId: string, query: AgentListQuery) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await agents.listAgents(
    deps.sql,
    orgId,
    {
      name: query.name,
      active: toBool(query.active),
      is_demo: toBool(query.is_demo),
      metadata: jsonObjectFilter('metadata', query.metadata),
      created_before: query.created_before,
      created_after: query.created_after,
      updated_before: query.updated_before,
      updated_after: query.updated_after,
    },
    { limit: query.limit, after },
  );
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(agentView), pagination: page.pagination };
}

export async function createAgent(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: Parameters<typeof agents.insertAgent>[2],
) {
  return agentView(await agents.insertAgent(deps.sql, orgId, input, actor));
}

/** The agent with its newest 100 versions, numbers, widgets, SIP state and conversation statistics. */
export async function getAgentDetail(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string) {
  const { sql } = deps;
  const agent = await agents.getAgent(sql, orgId, agentId);
  if (!agent) throw agentNotFound();
  const [versions, versionsTotal, numbers, widgets, sip, stats] = await Promise.all([
    recentVersions(sql, orgId, agent.id, 100),
    countVersions(sql, orgId, agent.id),
    numbersOfAgent(sql, orgId, agent.id),
    agents.listWidgets(sql, orgId, agent.id),
    agents.getSipEndpoint(sql, orgId, agent.id),
    agents.agentStatistics(sql, orgId, agent.id),
  ]);
  return {
    ...agentView(agent),
    versions: versions.map((v) => ({
      version: v.version,
      published: v.published,
      published_at: iso(v.published_at),
      instructions: instructionsState(v),
      created_at: v.created_at.toISOString(),
      updated_at: v.updated_at.toISOString(),
    })),
    versions_total: versionsTotal,
    phone_numbers: numbers.map((n) => ({
      id: n.id,
      number: n.number,
      label: n.label,
      directions: [
        ...(n.inbound_agent_id === agent.id ? (['inbound'] as const) : []),
        ...(n.outbound_agent_id === agent.id ? (['outbound'] as const) : []),
      ],
    })),
    widgets: widgets.map((w) => ({
      id: w.id,
      name: w.name,
      config: w.config,
      allowed_origins: w.allowed_origins,
      created_at: w.created_at.toISOString(),
      updated_at: w.updated_at.toISOString(),
    })),
    sip: { deployed: Boolean(sip), sip_uri: sip?.sip_uri ?? null, deployed_at: iso(sip?.created_at ?? null) },
    statistics: { ...stats, last_conversation_at: iso(stats.last_conversation_at) },
  };
}

export async function updateAgent(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  agentId: string,
  patch: Parameters<typeof agents.updateAgent>[3],
) {
  if (Object.keys(patch).length === 0) throw invalid('Nothing to update');
  const row = await agents.updateAgent(deps.sql, orgId, agentId, patch, actor);
  if (!row) throw agentNotFound();
  return agentView(row);
}

export async function deleteAgent(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string): Promise<void> {
  if (!(await agents.deleteAgent(deps.sql, orgId, agentId))) throw agentNotFound();
}

/** Deploys the agent's published version over SIP (idempotent); 409 without a published version. */
export async function deploySip(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, actor: string, agentId: string) {
  const agent = await agents.getAgent(deps.sql, orgId, agentId);
  if (!agent) throw agentNotFound();
  if (agent.published_version === null) throw conflict('Publish a version before deploying the agent over SIP');
  const sip = await agents.upsertSipEndpoint(deps.sql, orgId, agent.id, sipUri(agent.id, deps.config.SIP_HOST), actor);
  return {
    agent_id: agent.id,
    sip_uri: sip.sip_uri,
    version: agent.published_version,
    deployed_at: sip.created_at.toISOString(),
    provisioning: SIP_PROVISIONING,
    note: SIP_PROVISIONING_NOTE,
  };
}

export async function removeSip(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string): Promise<void> {
  if (!(await agents.getAgent(deps.sql, orgId, agentId))) throw agentNotFound();
  await agents.deleteSipEndpoint(deps.sql, orgId, agentId);
}

/** Starts a scaffolding run; nothing is written before the workflow exists (it writes the rows). */
async function startScaffold(deps: Pick<ServiceDeps, 'temporal' | 'config'>, input: ScaffoldInput) {
  const workflowId = scaffoldWorkflowId(input.kind, input.agentId);
  await deps.temporal.workflow.start(scaffoldAgent, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId,
    args: [input],
    typedSearchAttributes: organizationAttribute(input.orgId),
  });
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
  if (body.existing_agent_id && !(await agents.getAgent(deps.sql, orgId, body.existing_agent_id))) throw agentNotFound();
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
  const { temporal } = deps;
  const handle = temporal.workflow.getHandle(workflowId);
  const info = await handle.describe();
  // Another organization's run, or a workflow of another kind, does not exist here.
  if (info.type !== 'scaffoldAgent' || info.typedSearchAttributes.get(ORGANIZATION_ID) !== orgId) throw notFound('Workflow not found');
  const status = STATUS_NAMES[info.status.name] ?? ('unknown' as const);
  let progress: ScaffoldProgress | null = null;
  let error: string | null = null;
  if (status === 'completed') progress = await handle.result();
  else {
    progress = await temporal.connection.withDeadline(Date.now() + 5000, () => handle.query(scaffoldProgressQuery)).catch(() => null);
    if (status === 'failed') {
      error = await handle.result().then(
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
