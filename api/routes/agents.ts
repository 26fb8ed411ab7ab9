import { WorkflowFailedError, type WorkflowExecutionStatusName } from '@temporalio/client';
import { z } from 'zod';
import type { ScaffoldInput } from '../../activities/agents';
import * as agents from '../../db/agents';
import { countVersions, recentVersions } from '../../db/agent-versions';
import { numbersOfAgent } from '../../db/phone-numbers';
import { newId } from '../../platform/ids';
import { ORGANIZATION_ID, organizationAttribute } from '../../platform/temporal';
import { scaffoldAgent, scaffoldProgressQuery, scaffoldWorkflowId, type ScaffoldProgress } from '../../workflows/agents';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest, conflict, notFound } from '../errors';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { reply, type Routes } from '../route';
import { agentConfigJsonSchema } from '../../domain/agent-config';
import {
  Agent,
  AgentCreateBody,
  AgentDetail,
  AgentList,
  AgentListQuery,
  AgentUpdateBody,
  CreateDemoBody,
  CreateFromWebsiteBody,
  ScaffoldStarted,
  ScaffoldStatus,
  SipDeployment,
  WorkflowParams,
} from '../schemas/agents';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';
import { agentView, instructionsState, jsonObjectFilter, toBool } from './agent-views';
import { registerAgentVersionRoutes } from './agent-versions';
import { registerPhoneNumberRoutes } from './phone-numbers';

const READ = { scope: 'agentsRead' } as const;
const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;

const STATUS_NAMES: Partial<Record<WorkflowExecutionStatusName, z.output<typeof ScaffoldStatus>['status']>> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'canceled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  CONTINUED_AS_NEW: 'continued_as_new',
};

/** The Agents area: agents, their versions and publishing, phone numbers, SIP, and scaffolding runs. */
export function registerAgentsRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, temporal, config } = deps;

  routes.add({
    method: 'get',
    path: '/core/agent-config-schema',
    tag: TAG,
    summary: 'The complete JSON Schema of AgentConfig',
    auth: READ,
    responses: { 200: { description: 'JSON Schema (draft 2020-12)', schema: z.record(z.string(), z.unknown()) }, ...authErrors },
    handler: async () => agentConfigJsonSchema(),
  });

  routes.add({
    method: 'get',
    path: '/core/agents',
    tag: TAG,
    summary: 'List agents, newest first',
    auth: READ,
    query: AgentListQuery,
    responses: {
      200: { description: 'One page of agents', schema: AgentList },
      400: { description: 'Unknown filter, invalid cursor or invalid metadata JSON', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth, ctx }) => {
      const after = decodeCursor(query.cursor, CreatedCursor);
      const { rows, total } = await agents.listAgents(
        sql,
        orgOf(auth),
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
    },
  });

  routes.add({
    method: 'post',
    path: '/core/agents',
    tag: TAG,
    summary: 'Create an agent',
    auth: MANAGE,
    body: AgentCreateBody,
    responses: { 200: { description: 'Created', schema: Agent }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => reply(200, agentView(await agents.insertAgent(sql, orgOf(auth), body, actor(auth)))),
  });

  routes.add({
    method: 'get',
    path: '/core/agents/{id}',
    tag: TAG,
    summary: 'One agent with its versions, phone numbers, widgets, SIP state and conversation statistics',
    auth: READ,
    params: IdParams,
    responses: { 200: { description: 'The agent', schema: AgentDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      const agent = await agents.getAgent(sql, orgId, params.id);
      if (!agent) throw notFound('Agent not found');
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
          published_at: v.published_at?.toISOString() ?? null,
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
        sip: { deployed: Boolean(sip), sip_uri: sip?.sip_uri ?? null, deployed_at: sip?.created_at.toISOString() ?? null },
        statistics: { ...stats, last_conversation_at: stats.last_conversation_at?.toISOString() ?? null },
      };
    },
  });

  routes.add({
    method: 'put',
    path: '/core/agents/{id}',
    tag: TAG,
    summary: 'Update name, description, active, is_demo or metadata (only the fields sent)',
    auth: MANAGE,
    params: IdParams,
    body: AgentUpdateBody,
    responses: {
      200: { description: 'The updated agent', schema: Agent },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Nothing to update');
      const row = await agents.updateAgent(sql, orgOf(auth), params.id, body, actor(auth));
      if (!row) throw notFound('Agent not found');
      return agentView(row);
    },
  });

  routes.add({
    method: 'delete',
    path: '/core/agents/{id}',
    tag: TAG,
    summary: 'Delete an agent with its versions; its phone numbers stay in the inventory, unassigned',
    auth: MANAGE,
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (!(await agents.deleteAgent(sql, orgOf(auth), params.id))) throw notFound('Agent not found');
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/deploy-as-sip',
    tag: TAG,
    summary: 'Expose the agent at sip:<agent_id>@<SIP_HOST>',
    auth: MANAGE,
    params: IdParams,
    responses: {
      200: { description: 'Deployed (deploying again returns the same endpoint)', schema: SipDeployment },
      409: { description: 'No version is published', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      const agent = await agents.getAgent(sql, orgId, params.id);
      if (!agent) throw notFound('Agent not found');
      if (agent.published_version === null) throw conflict('Publish a version before deploying the agent over SIP');
      const sip = await agents.upsertSipEndpoint(sql, orgId, agent.id, `sip:${agent.id}@${config.SIP_HOST}`, actor(auth));
      return { agent_id: agent.id, sip_uri: sip.sip_uri, version: agent.published_version, deployed_at: sip.created_at.toISOString() };
    },
  });

  routes.add({
    method: 'delete',
    path: '/core/agents/{id}/deploy-as-sip',
    tag: TAG,
    summary: 'Remove the SIP endpoint (204 also when none was deployed)',
    auth: MANAGE,
    params: IdParams,
    responses: { 204: { description: 'Removed' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      if (!(await agents.getAgent(sql, orgId, params.id))) throw notFound('Agent not found');
      await agents.deleteSipEndpoint(sql, orgId, params.id);
      return reply(204);
    },
  });

  /** Starts a scaffolding run; nothing is written before the workflow exists (it writes the rows). */
  async function startScaffold(input: ScaffoldInput) {
    const workflowId = scaffoldWorkflowId(input.kind, input.agentId);
    await temporal.workflow.start(scaffoldAgent, {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      workflowId,
      args: [input],
      typedSearchAttributes: organizationAttribute(input.orgId),
    });
    return reply(202, { workflow_id: workflowId, agent_id: input.agentId });
  }

  routes.add({
    method: 'post',
    path: '/core/agents/create-from-website',
    tag: TAG,
    summary: "Build (or rebuild) an agent from a company's website, as a background workflow",
    auth: MANAGE,
    body: CreateFromWebsiteBody,
    responses: {
      202: { description: 'Started; follow it at GET /core/agents/workflows/{workflow_id}', schema: ScaffoldStarted },
      409: { description: 'A run for this agent is already going', schema: ErrorBody },
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      if (body.existing_agent_id && !(await agents.getAgent(sql, orgId, body.existing_agent_id))) throw notFound('Agent not found');
      return startScaffold({
        kind: 'create-from-website',
        orgId,
        agentId: body.existing_agent_id ?? newId(),
        existingAgent: Boolean(body.existing_agent_id),
        actor: actor(auth),
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
      });
    },
  });

  routes.add({
    method: 'post',
    path: '/core/agents/create-demo',
    tag: TAG,
    summary: "Build and publish a demo agent from a company's website, as a background workflow",
    auth: MANAGE,
    body: CreateDemoBody,
    responses: {
      202: { description: 'Started; follow it at GET /core/agents/workflows/{workflow_id}', schema: ScaffoldStarted },
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) =>
      startScaffold({
        kind: 'create-demo',
        orgId: orgOf(auth),
        agentId: newId(),
        existingAgent: false,
        actor: actor(auth),
        companyWebsite: body.company_website,
        instructions: body.instructions,
        isDemo: true,
        skipDeployment: false,
        includePhoneNumber: body.include_phone_number,
      }),
  });

  routes.add({
    method: 'get',
    path: '/core/agents/workflows/{workflow_id}',
    tag: TAG,
    summary: 'Steps and result of a create-from-website or create-demo run',
    auth: READ,
    params: WorkflowParams,
    responses: { 200: { description: 'The run', schema: ScaffoldStatus }, ...authErrors, ...notFoundError },
    handler: async ({ params, auth }) => {
      const handle = temporal.workflow.getHandle(params.workflow_id);
      const info = await handle.describe();
      // Another organization's run, or a workflow of another kind, does not exist here.
      if (info.type !== 'scaffoldAgent' || info.typedSearchAttributes.get(ORGANIZATION_ID) !== orgOf(auth)) throw notFound('Workflow not found');
      const status = STATUS_NAMES[info.status.name] ?? 'unknown';
      let progress: ScaffoldProgress | null = null;
      let error: string | null = null;
      if (status === 'completed') progress = await handle.result();
      else {
        progress = await temporal.connection
          .withDeadline(Date.now() + 5000, () => handle.query(scaffoldProgressQuery))
          .catch(() => null);
        if (status === 'failed') {
          error = await handle.result().then(
            () => null,
            (e: unknown) => (e instanceof WorkflowFailedError ? (e.cause?.message ?? e.message) : String(e)),
          );
        }
      }
      const kind = params.workflow_id.startsWith('agent-demo:') ? 'create-demo' : 'create-from-website';
      return {
        workflow_id: info.workflowId,
        kind: progress?.kind ?? kind,
        status,
        agent_id: progress?.agent_id ?? params.workflow_id.slice(params.workflow_id.indexOf(':') + 1),
        steps: progress?.steps ?? [],
        result: status === 'completed' ? progress?.result ?? null : null,
        error,
        started_at: info.startTime.toISOString(),
        closed_at: info.closeTime?.toISOString() ?? null,
      };
    },
  });

  registerAgentVersionRoutes(routes, deps);
  registerPhoneNumberRoutes(routes, deps);
}
