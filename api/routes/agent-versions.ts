import { WorkflowNotFoundError } from '@temporalio/client';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { getAgent, type Db } from '../../db/agents';
import * as versions from '../../db/agent-versions';
import type { VersionRow } from '../../db/agent-versions';
import type { Direction } from '../../domain/agents';
import { diffJson } from '../../platform/json-diff';
import { createLlmWriter } from '../../platform/llm';
import { organizationAttribute } from '../../platform/temporal';
import { generateAgentInstructions, instructionsWorkflowId } from '../../workflows/agents';
import { actor, orgOf, type RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { badGateway, badRequest, conflict, notFound } from '../errors';
import { cursorPage, decodeCursor } from '../../services/pagination';
import { reply, type Routes } from '../route';
import { defaultAgentConfig } from '../../domain/agent-config';
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
import { toBool, versionView } from '../../services/agent-views';

const READ = { scope: 'agentsRead' } as const;
const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;
const VersionCursor = z.object({ v: z.number().int().min(1).max(2_147_483_647) });

const sameJson = (a: unknown, b: unknown) => diffJson(a ?? null, b ?? null).length === 0;

async function requireAgent(db: Db, orgId: string, agentId: string, forUpdate = false) {
  const agent = await getAgent(db, orgId, agentId, { forUpdate });
  if (!agent) throw notFound('Agent not found');
  return agent;
}

/**
 * A version named in a path, on a route that changes it: a number, or `latest` for the newest version
 * when it is a draft (404 otherwise; only GET creates one). Locked for the rest of the transaction.
 */
async function lockVersion(db: Db, orgId: string, agentId: string, param: string): Promise<VersionRow> {
  await requireAgent(db, orgId, agentId);
  const number = param === 'latest' ? (await versions.newestDraft(db, orgId, agentId))?.version : Number(param);
  const row = number === undefined ? undefined : await versions.getVersion(db, orgId, agentId, number, { forUpdate: true });
  if (!row) throw notFound(param === 'latest' ? 'No draft version: GET the latest version to create one' : 'Version not found');
  return row;
}

export function registerAgentVersionRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, temporal, config, logger } = deps;

  /** Whether a workflow with this id is running now. */
  async function isRunning(workflowId: string): Promise<boolean> {
    try {
      return (await temporal.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }
  const writer = createLlmWriter(config);

  /** The newest version when it is a draft; otherwise a new draft from the newest version's config (or the default). */
  async function latestDraft(auth: RequestAuth, agentId: string): Promise<VersionRow> {
    const orgId = orgOf(auth);
    const existing = await versions.newestDraft(sql, orgId, agentId);
    if (existing) return existing;
    return sql.begin(async (tx) => {
      await requireAgent(tx, orgId, agentId, true);
      const draft = await versions.newestDraft(tx, orgId, agentId);
      if (draft) return draft;
      const newest = await versions.newestVersion(tx, orgId, agentId);
      return versions.insertNextVersion(
        tx,
        orgId,
        agentId,
        {
          config: newest?.config ?? defaultAgentConfig(),
          instruction_builder_inputs: newest?.instruction_builder_inputs ?? null,
          instructions_dirty: newest?.instructions_dirty,
          instructions_manually_edited: newest?.instructions_manually_edited,
        },
        actor(auth),
      );
    });
  }

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
    handler: async ({ params, query, auth, ctx }) => {
      const orgId = orgOf(auth);
      await requireAgent(sql, orgId, params.id);
      const after = decodeCursor(query.cursor, VersionCursor);
      const { rows, total } = await versions.listVersions(
        sql,
        orgId,
        params.id,
        {
          version: query.version,
          published: toBool(query.published),
          created_before: query.created_before,
          created_after: query.created_after,
          updated_before: query.updated_before,
          updated_after: query.updated_after,
        },
        { limit: query.limit, afterVersion: after?.v },
      );
      const page = cursorPage(rows, query.limit, total, (last) => ({ v: last.version }));
      return { data: page.data.map(versionView), pagination: page.pagination };
    },
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
    handler: async ({ params, body, auth }) => {
      const orgId = orgOf(auth);
      const row = await sql.begin(async (tx) => {
        await requireAgent(tx, orgId, params.id, true);
        if (body.base_version !== undefined) {
          const base = await versions.getVersion(tx, orgId, params.id, body.base_version);
          if (!base) throw notFound(`Version ${body.base_version} not found`);
          const inputs = body.instruction_builder_inputs ?? base.instruction_builder_inputs;
          return versions.insertNextVersion(
            tx,
            orgId,
            params.id,
            {
              config: base.config,
              instruction_builder_inputs: inputs,
              instructions_dirty: base.instructions_dirty || !sameJson(inputs, base.instruction_builder_inputs),
              instructions_manually_edited: base.instructions_manually_edited,
            },
            actor(auth),
          );
        }
        const config = body.config!;
        return versions.insertNextVersion(
          tx,
          orgId,
          params.id,
          {
            config,
            instruction_builder_inputs: body.instruction_builder_inputs ?? null,
            // Inputs given: instructions are to be written from them; written instructions count as the caller's own.
            instructions_dirty: body.instruction_builder_inputs !== undefined,
            instructions_manually_edited: config.instructions !== '',
          },
          actor(auth),
        );
      });
      return reply(200, versionView(row));
    },
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
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth, ctx }) => {
      const orgId = orgOf(auth);
      const agent = await requireAgent(sql, orgId, params.id);
      const [from, to] = await Promise.all([
        versions.getVersion(sql, orgId, agent.id, body.from_version),
        versions.getVersion(sql, orgId, agent.id, body.to_version),
      ]);
      if (!from) throw notFound(`Version ${body.from_version} not found`);
      if (!to) throw notFound(`Version ${body.to_version} not found`);
      const snapshot = (v: VersionRow) => ({ version: v.version, published: v.published, config: v.config, instruction_builder_inputs: v.instruction_builder_inputs });
      const pieces = writer.compareVersions({ agentName: agent.name, from: snapshot(from), to: snapshot(to) })[Symbol.asyncIterator]();
      // The first piece decides the status: a provider that fails at once is a clean 502.
      let first: IteratorResult<string>;
      try {
        first = await pieces.next();
      } catch (error) {
        ctx.state.log.error({ err: error }, 'LLM provider failed');
        throw badGateway('The LLM provider failed');
      }
      async function* rest() {
        if (!first.done) yield first.value;
        try {
          for (let next = await pieces.next(); !next.done; next = await pieces.next()) yield next.value;
        } catch (error) {
          logger.error({ err: error }, 'LLM provider failed mid-stream');
          yield '\n[interrupted: the LLM provider failed]\n';
        } finally {
          await pieces.return?.(); // a client that hung up stops the provider's stream too
        }
      }
      return reply(200, Readable.from(rest()), { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' }, 'text/plain; charset=utf-8');
    },
  });

  routes.add({
    method: 'get',
    path: '/core/agents/{id}/versions/{version}',
    tag: TAG,
    summary: 'One version; `latest` is the newest draft, created when there is none',
    auth: READ,
    params: VersionParams,
    responses: { 200: { description: 'The version', schema: AgentVersion }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (params.version === 'latest') return versionView(await latestDraft(auth, params.id));
      const orgId = orgOf(auth);
      await requireAgent(sql, orgId, params.id);
      const row = await versions.getVersion(sql, orgId, params.id, Number(params.version));
      if (!row) throw notFound('Version not found');
      return versionView(row);
    },
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
    handler: async ({ params, body, auth }) => {
      if (body.config === undefined && body.instruction_builder_inputs === undefined)
        throw badRequest('Nothing to update: send config or instruction_builder_inputs');
      const orgId = orgOf(auth);
      const row = await sql.begin(async (tx) => {
        const current = await lockVersion(tx, orgId, params.id, params.version);
        if (current.published) throw badRequest('Published versions are immutable: create a new version from it (base_version)');
        if (current.instructions_generating) throw conflict('Instructions are being generated: try again when generation finishes');
        const inputsChanged = body.instruction_builder_inputs !== undefined && !sameJson(body.instruction_builder_inputs, current.instruction_builder_inputs);
        const instructionsChanged = body.config !== undefined && body.config.instructions !== current.config.instructions;
        const updated = await versions.updateDraft(
          tx,
          orgId,
          params.id,
          current.version,
          {
            config: body.config,
            instruction_builder_inputs: body.instruction_builder_inputs,
            instructions_dirty: current.instructions_dirty || inputsChanged,
            instructions_manually_edited: current.instructions_manually_edited || instructionsChanged,
          },
          actor(auth),
        );
        if (!updated) throw badRequest('Published versions are immutable: create a new version from it (base_version)');
        return updated;
      });
      return versionView(row);
    },
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
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      const workflowId = await sql.begin(async (tx) => {
        const v = await lockVersion(tx, orgId, params.id, params.version);
        if (v.published) throw conflict('Published versions are immutable: their instructions cannot be generated again');
        if (!v.instruction_builder_inputs) throw badRequest('instruction_builder_inputs are required to generate instructions');
        const id = instructionsWorkflowId(params.id, v.version);
        // A flag whose run is gone (terminated by an operator, say) must not block the version for good.
        if (v.instructions_generating && (await isRunning(id))) throw conflict('Instructions are already being generated');
        await versions.markGenerating(tx, orgId, params.id, v.version, actor(auth));
        // Started before the flag commits; a failed start rolls the flag back (the error handler answers 503).
        await temporal.workflow.start(generateAgentInstructions, {
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          workflowId: id,
          args: [{ orgId, agentId: params.id, version: v.version }],
          typedSearchAttributes: organizationAttribute(orgId),
        });
        return id;
      });
      return reply(202, { workflow_id: workflowId });
    },
  });

  routes.add({
    method: 'post',
    path: '/core/agents/{id}/versions/{version}/publish',
    tag: TAG,
    summary: 'Publish a version and assign or unassign phone numbers for a direction',
    auth: MANAGE,
    params: VersionParams,
    body: PublishBody,
    responses: {
      200: { description: 'Published; every number named, with what happened to it', schema: PublishResult },
      404: { description: 'Agent, version or phone number not in the organization', schema: ErrorBody },
      409: { description: 'Instructions are generating or stale', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      const orgId = orgOf(auth);
      await requireAgent(sql, orgId, params.id);
      const number = params.version === 'latest' ? (await versions.newestDraft(sql, orgId, params.id))?.version : Number(params.version);
      if (number === undefined) throw notFound('No draft version to publish');
      const directions: Direction[] = body.direction === 'both' ? ['inbound', 'outbound'] : [body.direction];
      const outcome = await versions.publishVersion(sql, {
        orgId,
        agentId: params.id,
        version: number,
        assign: [...new Set(body.phone_numbers ?? [])],
        unassign: [...new Set(body.unassign_phone_numbers ?? [])],
        directions,
        actor: actor(auth),
      });
      if (!outcome.ok) {
        switch (outcome.reason) {
          case 'agent_not_found':
            throw notFound('Agent not found');
          case 'version_not_found':
            throw notFound('Version not found');
          case 'generating':
            throw conflict('Instructions are being generated: publish when generation finishes');
          case 'stale':
            throw conflict('Instructions are stale (their builder inputs changed): generate them again or edit them by hand before publishing');
          case 'unknown_numbers':
            throw notFound(`Phone number not in the organization's inventory: ${outcome.numbers.join(', ')}`);
        }
      }
      return {
        agent_id: params.id,
        version: outcome.version.version,
        published: true as const,
        published_at: outcome.version.published_at!.toISOString(),
        direction: body.direction,
        phone_numbers: outcome.affected,
      };
    },
  });
}
