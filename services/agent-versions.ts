import { Readable } from 'node:stream';
import { getAgent } from '../db/agents';
import * as versions from '../db/agent-versions';
import type { DraftUpdate, NewVersion, PublishRequest, VersionRow } from '../db/agent-versions';
import type { Db } from '../db/client';
import { defaultAgentConfig } from '../domain/agent-config';
import { publishDirections, type PublishDirection } from '../domain/agents';
import { syncInboundRouting } from './inbound-routing';
import { conflict, invalid, notFound, unavailable, upstream } from '../domain/errors';
import { diffJson } from '../platform/core/json-diff';
import { createLlmWriter } from '../platform/adapters/llm/llm';
import { LocalModelError } from '../platform/adapters/llm/llm-local';
import type { Logger } from '../platform/core/logger';
import { toBool, versionView } from './agent-views';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications/emit';
import { VersionCursor, cursorPage, decodeCursor } from './pagination';

// The Agents area's versions: drafts, comparison and publishing (instruction generation: agent-instructions.ts).

const sameJson = (a: unknown, b: unknown) => diffJson(a ?? null, b ?? null).length === 0;

const PUBLISHED_IMMUTABLE = 'Published versions are immutable: create a new version from it (base_version)';

async function requireAgent(db: Db, orgId: string, agentId: string, forUpdate = false) {
  const agent = await getAgent(db, orgId, agentId, { forUpdate });
  if (!agent) throw notFound('Agent not found');
  return agent;
}

/**
 * A version named in a path, on a route that changes it: a number, or `latest` for the newest version
 * when it is a draft (404 otherwise; only GET creates one). Locked for the rest of the transaction.
 */
export async function lockVersion(db: Db, orgId: string, agentId: string, param: string): Promise<VersionRow> {
  await requireAgent(db, orgId, agentId);
  const number = param === 'latest' ? (await versions.newestDraft(db, orgId, agentId))?.version : Number(param);
  const row = number === undefined ? undefined : await versions.getVersion(db, orgId, agentId, number, { forUpdate: true });
  if (!row) throw notFound(param === 'latest' ? 'No draft version: GET the latest version to create one' : 'Version not found');
  return row;
}

export interface VersionListQuery {
  limit: number;
  cursor?: string;
  version?: number;
  published?: 'true' | 'false';
  created_before?: string;
  created_after?: string;
  updated_before?: string;
  updated_after?: string;
}

export async function listVersions(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, query: VersionListQuery) {
  await requireAgent(deps.sql, orgId, agentId);
  const after = decodeCursor(query.cursor, VersionCursor);
  const { rows, total } = await versions.listVersions(
    deps.sql,
    orgId,
    agentId,
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
  return cursorPage(rows, query.limit, total, (last) => ({ v: last.version }), versionView);
}

export interface VersionCreateInput {
  config?: NewVersion['config'];
  base_version?: number;
  instruction_builder_inputs?: DraftUpdate['instruction_builder_inputs'];
}

/** A new draft from a config, or as a copy of base_version (the schema lets exactly one through). */
export async function createVersion(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  agentId: string,
  body: VersionCreateInput,
) {
  const row = await deps.sql.begin(async (tx) => {
    await requireAgent(tx, orgId, agentId, true);
    if (body.base_version !== undefined) {
      const base = await versions.getVersion(tx, orgId, agentId, body.base_version);
      if (!base) throw notFound(`Version ${body.base_version} not found`);
      const inputs = body.instruction_builder_inputs ?? base.instruction_builder_inputs;
      return versions.insertNextVersion(
        tx,
        orgId,
        agentId,
        {
          config: base.config,
          instruction_builder_inputs: inputs,
          instructions_dirty: base.instructions_dirty || !sameJson(inputs, base.instruction_builder_inputs),
          instructions_manually_edited: base.instructions_manually_edited,
        },
        actor,
      );
    }
    const config = body.config!;
    return versions.insertNextVersion(
      tx,
      orgId,
      agentId,
      {
        config,
        instruction_builder_inputs: body.instruction_builder_inputs ?? null,
        // Inputs given: instructions are to be written from them; written instructions count as the caller's own.
        instructions_dirty: body.instruction_builder_inputs !== undefined,
        instructions_manually_edited: config.instructions !== '',
      },
      actor,
    );
  });
  return versionView(row);
}

/** The newest version when it is a draft; otherwise a new draft from the newest version's config (or the default). */
async function latestDraft(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, agentId: string): Promise<VersionRow> {
  const existing = await versions.newestDraft(deps.sql, orgId, agentId);
  if (existing) return existing;
  return deps.sql.begin(async (tx) => {
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
      actor,
    );
  });
}

/** One version by number; `latest` is the newest draft, created when there is none. */
export async function getVersion(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, agentId: string, version: string) {
  if (version === 'latest') return versionView(await latestDraft(deps, orgId, actor, agentId));
  await requireAgent(deps.sql, orgId, agentId);
  const row = await versions.getVersion(deps.sql, orgId, agentId, Number(version));
  if (!row) throw notFound('Version not found');
  return versionView(row);
}

export interface VersionUpdateInput {
  config?: DraftUpdate['config'];
  instruction_builder_inputs?: DraftUpdate['instruction_builder_inputs'];
}

export async function updateVersion(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  agentId: string,
  version: string,
  body: VersionUpdateInput,
) {
  if (body.config === undefined && body.instruction_builder_inputs === undefined)
    throw invalid('Nothing to update: send config or instruction_builder_inputs');
  const row = await deps.sql.begin(async (tx) => {
    const current = await lockVersion(tx, orgId, agentId, version);
    if (current.published) throw invalid(PUBLISHED_IMMUTABLE);
    if (current.instructions_generating) throw conflict('Instructions are being generated: try again when generation finishes');
    const inputsChanged =
      body.instruction_builder_inputs !== undefined && !sameJson(body.instruction_builder_inputs, current.instruction_builder_inputs);
    const instructionsChanged = body.config !== undefined && body.config.instructions !== current.config.instructions;
    const updated = await versions.updateDraft(
      tx,
      orgId,
      agentId,
      current.version,
      {
        config: body.config,
        instruction_builder_inputs: body.instruction_builder_inputs,
        instructions_dirty: current.instructions_dirty || inputsChanged,
        instructions_manually_edited: current.instructions_manually_edited || instructionsChanged,
      },
      actor,
    );
    if (!updated) throw invalid(PUBLISHED_IMMUTABLE);
    return updated;
  });
  return versionView(row);
}

/**
 * A written summary of how to_version differs from from_version, as a stream. The first piece decides
 * the outcome: a provider that fails at once is a clean 502; a failure later ends the text with a note.
 */
export async function compareVersions(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  orgId: string,
  agentId: string,
  body: { from_version: number; to_version: number },
  log: Logger = deps.logger,
): Promise<Readable> {
  const agent = await requireAgent(deps.sql, orgId, agentId);
  const [from, to] = await Promise.all([
    versions.getVersion(deps.sql, orgId, agent.id, body.from_version),
    versions.getVersion(deps.sql, orgId, agent.id, body.to_version),
  ]);
  if (!from) throw notFound(`Version ${body.from_version} not found`);
  if (!to) throw notFound(`Version ${body.to_version} not found`);
  const snapshot = (v: VersionRow) => ({
    version: v.version,
    published: v.published,
    config: v.config,
    instruction_builder_inputs: v.instruction_builder_inputs,
  });
  const writer = createLlmWriter(deps.config, 'compare');
  const pieces = writer.compareVersions({ agentName: agent.name, from: snapshot(from), to: snapshot(to) })[Symbol.asyncIterator]();
  let first: IteratorResult<string>;
  try {
    first = await pieces.next();
  } catch (error) {
    if (error instanceof LocalModelError) throw unavailable(error.message); // busy, not installed or too slow: 503
    log.error({ err: error }, 'LLM provider failed');
    throw upstream('The LLM provider failed');
  }
  const logger = deps.logger;
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
  return Readable.from(rest());
}

/** Publishes in the caller's transaction, with its `agent_version.published` event (the API's publish and the scaffolding run's). */
export async function publishWithEvent(tx: Db, request: PublishRequest, direction: PublishDirection, actorUserId: string | null = null) {
  const result = await versions.publishVersion(tx, request);
  if (result.ok) {
    const agent = await getAgent(tx, request.orgId, request.agentId);
    await emitEvent(tx, request.orgId, {
      event_type: 'agent_version.published',
      entity_type: 'agent_version',
      entity_id: result.version.id,
      payload: { agent_id: request.agentId, name: agent?.name ?? null, version: result.version.version, direction },
      actor_user_id: actorUserId,
    });
  }
  return result;
}

export interface PublishInput {
  phone_numbers: string[] | null;
  unassign_phone_numbers: string[] | null;
  direction: PublishDirection;
}

/**
 * Publishes a version and moves phone numbers in one transaction; `agent_version.published` goes into
 * the notification outbox in the same transaction, so the event exists exactly when the publish does.
 */
export async function publishVersion(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  agentId: string,
  version: string,
  body: PublishInput,
  actorUserId: string | null = null,
) {
  const { sql } = deps;
  await requireAgent(sql, orgId, agentId);
  const number = version === 'latest' ? (await versions.newestDraft(sql, orgId, agentId))?.version : Number(version);
  if (number === undefined) throw notFound('No draft version to publish');
  const outcome = await sql.begin(async (tx) => {
    const published = await publishWithEvent(
      tx,
      {
        orgId,
        agentId,
        version: number,
        assign: [...new Set(body.phone_numbers ?? [])],
        unassign: [...new Set(body.unassign_phone_numbers ?? [])],
        directions: publishDirections(body.direction),
        actor,
      },
      body.direction,
      actorUserId,
    );
    // The numbers moved inbound are pointed at the service at their provider, or put back (502 undoes the publish).
    if (published.ok)
      await syncInboundRouting(
        deps,
        tx,
        orgId,
        published.affected.filter((n) => n.direction === 'inbound' && n.action !== 'unchanged').map((n) => n.id),
      );
    return published;
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
    agent_id: agentId,
    version: outcome.version.version,
    published: true as const,
    published_at: outcome.version.published_at!.toISOString(),
    direction: body.direction,
    phone_numbers: outcome.affected,
  };
}
