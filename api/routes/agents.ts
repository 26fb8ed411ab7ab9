import { z } from 'zod';
import { agentConfigJsonSchema } from '../../domain/agent-config';
import * as scaffold from '../../services/agent-scaffold';
import * as agents from '../../services/agents';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
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
  WorkflowParams,
} from '../schemas/agents';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';
import { registerAgentSipRoutes } from './agent-sip';
import { registerAgentWidgetRoutes } from './agent-widgets';
import { registerAgentVersionRoutes } from './agent-versions';
import { registerPhoneNumberRoutes } from './phone-numbers';
import { registerWidgetRoutes } from './widgets';

const READ = { scope: 'agentsRead' } as const;
const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;

/** The Agents area: agents, their versions and publishing, phone numbers, SIP, widgets, and scaffolding runs. */
export function registerAgentsRoutes(routes: Routes, deps: AppDeps): void {
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
    handler: async ({ query, auth }) => agents.listAgents(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/core/agents',
    tag: TAG,
    summary: 'Create an agent',
    auth: MANAGE,
    body: AgentCreateBody,
    responses: { 200: { description: 'Created', schema: Agent }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => reply(200, await agents.createAgent(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/core/agents/{id}',
    tag: TAG,
    summary: 'One agent with its versions, phone numbers, widgets, SIP state and conversation statistics',
    auth: READ,
    params: IdParams,
    responses: { 200: { description: 'The agent', schema: AgentDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => agents.getAgentDetail(deps, orgOf(auth), params.id),
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
    handler: async ({ params, body, auth }) => agents.updateAgent(deps, orgOf(auth), actor(auth), params.id, body),
  });

  routes.add({
    method: 'delete',
    path: '/core/agents/{id}',
    tag: TAG,
    summary:
      'Delete an agent with its versions; its phone numbers stay in the inventory, unassigned (and put back as they were at their provider); its SIP endpoint is removed at the provider first',
    auth: MANAGE,
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      502: {
        description:
          "The provider failed to remove the agent's SIP endpoint or to put its numbers back, or did not answer; the agent stays",
        schema: ErrorBody,
      },
      503: {
        description:
          "The agent's SIP endpoint was made at another provider than the organization's telephony account now, or the account needs new keys; the agent stays",
        schema: ErrorBody,
      },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await agents.deleteAgent(deps, orgOf(auth), params.id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/core/agents/create-from-website',
    tag: TAG,
    summary: "Build (or rebuild) an agent from a company's website, as a background workflow",
    auth: MANAGE,
    body: CreateFromWebsiteBody,
    responses: {
      202: { description: 'Started; follow it at GET /core/agent-workflows/{workflow_id}', schema: ScaffoldStarted },
      409: { description: 'A run for this agent is already going', schema: ErrorBody },
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(202, await scaffold.createFromWebsite(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/create-demo',
    tag: TAG,
    summary: "Build and publish a demo agent from a company's website, as a background workflow",
    auth: MANAGE,
    body: CreateDemoBody,
    responses: {
      202: { description: 'Started; follow it at GET /core/agent-workflows/{workflow_id}', schema: ScaffoldStarted },
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(202, await scaffold.createDemo(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/core/agent-workflows/{workflow_id}',
    tag: TAG,
    summary: 'Steps and result of a create-from-website or create-demo run',
    auth: READ,
    params: WorkflowParams,
    responses: { 200: { description: 'The run', schema: ScaffoldStatus }, ...authErrors, ...notFoundError },
    handler: async ({ params, auth }) => scaffold.scaffoldRun(deps, orgOf(auth), params.workflow_id),
  });

  registerAgentVersionRoutes(routes, deps);
  registerAgentSipRoutes(routes, deps);
  registerAgentWidgetRoutes(routes, deps);
  registerWidgetRoutes(routes, deps);
  registerPhoneNumberRoutes(routes, deps);
}
