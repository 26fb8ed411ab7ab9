import { z } from 'zod';
import { generateInstructions } from '../../services/agent-instructions';
import * as versions from '../../services/agent-versions';
import { actingUser, actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import {
  AgentVersion,
  CompareBody,
  GenerationStarted,
  PublishBody,
  PublishResult,
  VersionCreateBody,
  VersionList,
  VersionListQuery,
  VersionParams,
  VersionUpdateBody,
} from '../schemas/agents';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';

const READ = { scope: 'agentsRead' } as const;
const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;

export function registerAgentVersionRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/versions',
    tag: TAG,
    summary: "List an agent's versions, highest number first",
    auth: READ,
    params: IdParams,
    query: VersionListQuery,
    responses: {
      200: { description: 'One page of versions', schema: VersionList },
      400: { description: 'Unknown filter or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => versions.listVersions(deps, orgOf(auth), params.id, query),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/versions',
    tag: TAG,
    summary: 'Create a draft version from a config, or as a copy of base_version',
    auth: MANAGE,
    params: IdParams,
    body: VersionCreateBody,
    responses: { 200: { description: 'The new draft', schema: AgentVersion }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, body, auth }) => reply(200, await versions.createVersion(deps, orgOf(auth), actor(auth), params.id, body)),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/versions/compare',
    tag: TAG,
    summary: 'Stream a written summary of how to_version differs from from_version (text/plain)',
    auth: READ,
    params: IdParams,
    body: CompareBody,
    responses: {
      200: { description: 'The summary, streamed as it is written', schema: z.string(), contentType: 'text/plain' },
      502: { description: 'The LLM provider failed before writing anything', schema: ErrorBody },
      503: {
        description:
          'The local language model (LLM_LOCAL_FEATURES with compare) is busy, not installed, or did not start within LLM_CALL_TIMEOUT_MS',
        schema: ErrorBody,
      },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth, ctx }) =>
      reply(
        200,
        await versions.compareVersions(deps, orgOf(auth), params.id, body, ctx.state.log),
        { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
        'text/plain; charset=utf-8',
      ),
  });

  routes.add({
    method: 'get',
    path: '/core/agents/{id}/versions/{version}',
    tag: TAG,
    summary: 'One version; `latest` is the newest draft, created when there is none',
    auth: READ,
    params: VersionParams,
    responses: { 200: { description: 'The version', schema: AgentVersion }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => versions.getVersion(deps, orgOf(auth), actor(auth), params.id, params.version),
  });

  routes.add({
    method: 'put',
    path: '/core/agents/{id}/versions/{version}',
    tag: TAG,
    summary: 'Update a draft: config (replaced whole) and/or instruction_builder_inputs',
    auth: MANAGE,
    params: VersionParams,
    body: VersionUpdateBody,
    responses: {
      200: { description: 'The updated draft', schema: AgentVersion },
      400: { description: 'Published version (immutable), or empty body', schema: ErrorBody },
      409: { description: 'Instructions are being generated', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => versions.updateVersion(deps, orgOf(auth), actor(auth), params.id, params.version, body),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/versions/{version}/generate-instructions',
    tag: TAG,
    summary: "Write the draft's instructions from its instruction_builder_inputs, in the background",
    auth: MANAGE,
    params: VersionParams,
    responses: {
      202: { description: 'Started', schema: GenerationStarted },
      400: { description: 'The version has no instruction_builder_inputs', schema: ErrorBody },
      409: { description: 'Published version, or generation already running', schema: ErrorBody },
      503: { description: 'Workflow engine unavailable; nothing changed', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => reply(202, await generateInstructions(deps, orgOf(auth), actor(auth), params.id, params.version)),
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/versions/{version}/publish',
    tag: TAG,
    summary: 'Publish a version and assign or unassign phone numbers for a direction',
    description:
      "A number given an inbound agent is pointed at the service at its provider (Twilio's VoiceUrl and StatusCallback, Vapi's " +
      'server URL), so its calls reach the agent; one no agent answers any more gets back what it pointed at before. Numbers ' +
      'registered by hand have nothing to point.',
    auth: MANAGE,
    params: VersionParams,
    body: PublishBody,
    responses: {
      200: { description: 'Published; every number named, with what happened to it', schema: PublishResult },
      404: { description: 'Agent, version or phone number not in the organization', schema: ErrorBody },
      409: { description: 'Instructions are generating or stale', schema: ErrorBody },
      502: {
        description:
          'The provider failed (or did not answer) to point an inbound number at the service or to put one back; nothing was published or moved',
        schema: ErrorBody,
      },
      503: {
        description: "An inbound number's provider is not the organization's usable telephony account; nothing was published or moved",
        schema: ErrorBody,
      },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) =>
      versions.publishVersion(deps, orgOf(auth), actor(auth), params.id, params.version, body, actingUser(auth)),
  });
}
