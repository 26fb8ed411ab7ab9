import type postgres from 'postgres';
import { publishRefusal, type Direction } from '../domain/agents';
import { newId } from '../platform/core/ids';
import { getAgent, setPublishedVersion, type Db } from './agents';
import { lockNumbers, setHolder } from './phone-numbers';

type Json = postgres.JSONValue;

export interface VersionRow {
  id: string;
  org_id: string;
  agent_id: string;
  version: number;
  config: Record<string, unknown>;
  instruction_builder_inputs: Record<string, unknown> | null;
  published: boolean;
  published_at: Date | null;
  instructions_generating: boolean;
  instructions_dirty: boolean;
  instructions_manually_edited: boolean;
  instructions_generated_at: Date | null;
  instructions_error: string | null;
  scaffold_run_id: string | null;
  created_by: string | null;
  modified_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface VersionFilters {
  version?: number;
  published?: boolean;
  created_before?: string;
  created_after?: string;
  updated_before?: string;
  updated_after?: string;
}

export interface NewVersion {
  config: Record<string, unknown>;
  instruction_builder_inputs: Record<string, unknown> | null;
  instructions_dirty?: boolean;
  instructions_manually_edited?: boolean;
  instructions_generating?: boolean;
  scaffold_run_id?: string | null;
}

/**
 * Inserts the agent's next version number. The caller holds the agent's row lock (getAgent with
 * forUpdate inside a transaction), so two creations never pick the same number.
 */
export async function insertNextVersion(db: Db, orgId: string, agentId: string, v: NewVersion, actor: string): Promise<VersionRow> {
  const [row] = await db<VersionRow[]>`
    INSERT INTO agent_versions (id, org_id, agent_id, version, config, instruction_builder_inputs,
                                instructions_dirty, instructions_manually_edited, instructions_generating, scaffold_run_id, created_by, modified_by)
    SELECT ${newId()}, ${orgId}, ${agentId}, coalesce(max(version), 0) + 1, ${db.json(v.config as Json)},
           ${v.instruction_builder_inputs === null ? null : db.json(v.instruction_builder_inputs as Json)},
           ${v.instructions_dirty ?? false}, ${v.instructions_manually_edited ?? false}, ${v.instructions_generating ?? false},
           ${v.scaffold_run_id ?? null}, ${actor}, ${actor}
    FROM agent_versions WHERE agent_id = ${agentId}
    RETURNING *`;
  return row!;
}

export async function getVersion(
  db: Db,
  orgId: string,
  agentId: string,
  version: number,
  opts: { forUpdate?: boolean } = {},
): Promise<VersionRow | undefined> {
  const lock = opts.forUpdate ? db`FOR UPDATE` : db``;
  const [row]: [VersionRow?] = await db`
    SELECT * FROM agent_versions WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version} ${lock}`;
  return row;
}

/** The newest unpublished version, if any. */
/**
 * The version `latest` names: the newest version when it is a draft. An older draft below a newer
 * published version is not it (its config is behind what is served).
 */
export async function newestDraft(db: Db, orgId: string, agentId: string): Promise<VersionRow | undefined> {
  const newest = await newestVersion(db, orgId, agentId);
  return newest && !newest.published ? newest : undefined;
}

export async function newestVersion(db: Db, orgId: string, agentId: string): Promise<VersionRow | undefined> {
  const [row]: [VersionRow?] = await db`
    SELECT * FROM agent_versions WHERE org_id = ${orgId} AND agent_id = ${agentId} ORDER BY version DESC LIMIT 1`;
  return row;
}

export async function findScaffoldDraft(db: Db, orgId: string, agentId: string, runId: string): Promise<VersionRow | undefined> {
  const [row]: [VersionRow?] = await db`
    SELECT * FROM agent_versions WHERE org_id = ${orgId} AND agent_id = ${agentId} AND scaffold_run_id = ${runId}`;
  return row;
}

/** One page of an agent's versions, highest number first, after the cursor's version; and the total matching. */
export async function listVersions(
  db: Db,
  orgId: string,
  agentId: string,
  filters: VersionFilters,
  page: { limit: number; afterVersion?: number },
): Promise<{ rows: VersionRow[]; total: number }> {
  const where = [db`org_id = ${orgId}`, db`agent_id = ${agentId}`];
  if (filters.version !== undefined) where.push(db`version = ${filters.version}`);
  if (filters.published !== undefined) where.push(db`published = ${filters.published}`);
  if (filters.created_before) where.push(db`created_at < ${filters.created_before}::timestamptz`);
  if (filters.created_after) where.push(db`created_at > ${filters.created_after}::timestamptz`);
  if (filters.updated_before) where.push(db`updated_at < ${filters.updated_before}::timestamptz`);
  if (filters.updated_after) where.push(db`updated_at > ${filters.updated_after}::timestamptz`);
  const matching = where.reduce((acc, cond) => db`${acc} AND ${cond}`);
  const after = page.afterVersion !== undefined ? db`AND version < ${page.afterVersion}` : db``;
  const rows = await db<VersionRow[]>`
    SELECT * FROM agent_versions WHERE ${matching} ${after} ORDER BY version DESC LIMIT ${page.limit + 1}`;
  const [count] = await db<{ total: number }[]>`SELECT count(*)::int AS total FROM agent_versions WHERE ${matching}`;
  return { rows, total: count!.total };
}

/** Summaries of an agent's newest versions, for the single-agent read. */
export async function recentVersions(db: Db, orgId: string, agentId: string, limit: number): Promise<VersionRow[]> {
  return db<VersionRow[]>`
    SELECT * FROM agent_versions WHERE org_id = ${orgId} AND agent_id = ${agentId} ORDER BY version DESC LIMIT ${limit}`;
}

export interface DraftUpdate {
  config?: Record<string, unknown>;
  instruction_builder_inputs?: Record<string, unknown>;
  instructions_dirty: boolean;
  instructions_manually_edited: boolean;
}

/**
 * Updates a draft. `published = false` and `NOT instructions_generating` are part of the statement, so
 * a version published (or set generating) since it was read is never changed.
 */
export async function updateDraft(
  db: Db,
  orgId: string,
  agentId: string,
  version: number,
  u: DraftUpdate,
  actor: string,
): Promise<VersionRow | undefined> {
  const [row]: [VersionRow?] = await db`
    UPDATE agent_versions SET
      ${u.config === undefined ? db`` : db`config = ${db.json(u.config as Json)},`}
      ${u.instruction_builder_inputs === undefined ? db`` : db`instruction_builder_inputs = ${db.json(u.instruction_builder_inputs as Json)},`}
      instructions_dirty = ${u.instructions_dirty},
      instructions_manually_edited = ${u.instructions_manually_edited},
      modified_by = ${actor}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version}
      AND published = false AND instructions_generating = false
    RETURNING *`;
  return row;
}

/** Marks a draft's instructions as being generated; undefined when it is published, already generating or gone. */
export async function markGenerating(
  db: Db,
  orgId: string,
  agentId: string,
  version: number,
  actor: string,
): Promise<VersionRow | undefined> {
  const [row]: [VersionRow?] = await db`
    UPDATE agent_versions SET instructions_generating = true, instructions_error = NULL, modified_by = ${actor}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version}
      AND published = false AND instructions_generating = false
    RETURNING *`;
  return row;
}

/** Writes generated instructions into a draft: no longer generating, dirty or manually edited. */
export async function saveGeneratedInstructions(
  db: Db,
  orgId: string,
  agentId: string,
  version: number,
  instructions: string,
): Promise<boolean> {
  const rows = await db`
    UPDATE agent_versions SET
      config = jsonb_set(config, '{instructions}', to_jsonb(${instructions}::text)),
      instructions_generating = false, instructions_dirty = false, instructions_manually_edited = false,
      instructions_generated_at = now(), instructions_error = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version} AND published = false
    RETURNING id`;
  return rows.length > 0;
}

/** Ends a failed generation: the flags stay as they were before it started, the error is kept. */
export async function abortGeneration(db: Db, orgId: string, agentId: string, version: number, error: string): Promise<void> {
  await db`
    UPDATE agent_versions SET instructions_generating = false, instructions_error = ${error.slice(0, 2000)}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version}`;
}

/** Publishes a draft (a published version stays as it is); the caller holds the row lock. */
export async function markPublished(db: Db, orgId: string, agentId: string, version: number, actor: string): Promise<VersionRow> {
  const [row] = await db<VersionRow[]>`
    UPDATE agent_versions SET
      published = true, published_at = coalesce(published_at, now()),
      modified_by = CASE WHEN published THEN modified_by ELSE ${actor} END,
      updated_at = CASE WHEN published THEN updated_at ELSE now() END
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND version = ${version}
    RETURNING *`;
  return row!;
}

export interface AffectedNumber {
  id: string;
  number: string;
  direction: Direction;
  action: 'assigned' | 'unassigned' | 'unchanged';
  /** Who serves the number in this direction now. */
  agent_id: string | null;
  /** Who served it before this publish; another agent's id here means the number was moved. */
  previous_agent_id: string | null;
}

export type PublishOutcome =
  | { ok: true; version: VersionRow; affected: AffectedNumber[] }
  | { ok: false; reason: 'agent_not_found' | 'version_not_found' | 'generating' | 'stale' }
  | { ok: false; reason: 'unknown_numbers'; numbers: string[] };

export interface PublishRequest {
  orgId: string;
  agentId: string;
  version: number;
  assign: string[];
  unassign: string[];
  directions: Direction[];
  actor: string;
}

/**
 * Publishes a version and moves phone numbers, inside the caller's transaction: the agent, the version
 * and the numbers are locked in that order, every rule is checked, and nothing is written unless all
 * pass. Publishing an already published version writes nothing to it and makes it the agent's served
 * version again (a rollback), moving the numbers as asked.
 */
export async function publishVersion(db: Db, p: PublishRequest): Promise<PublishOutcome> {
  const agent = await getAgent(db, p.orgId, p.agentId, { forUpdate: true });
  if (!agent) return { ok: false, reason: 'agent_not_found' };
  const version = await getVersion(db, p.orgId, p.agentId, p.version, { forUpdate: true });
  if (!version) return { ok: false, reason: 'version_not_found' };
  const refusal = publishRefusal(version);
  if (refusal) return { ok: false, reason: refusal };
  const rows = await lockNumbers(db, p.orgId, [...p.assign, ...p.unassign]);
  const byNumber = new Map(rows.map((r) => [r.number, r]));
  const missing = [...p.assign, ...p.unassign].filter((n) => !byNumber.has(n));
  if (missing.length) return { ok: false, reason: 'unknown_numbers', numbers: [...new Set(missing)] };

  const published = await markPublished(db, p.orgId, p.agentId, p.version, p.actor);
  await setPublishedVersion(db, p.orgId, p.agentId, p.version, p.actor);
  const affected: AffectedNumber[] = [];
  for (const [numbers, assign] of [
    [p.assign, true],
    [p.unassign, false],
  ] as const) {
    for (const number of numbers) {
      const row = byNumber.get(number)!;
      for (const direction of p.directions) {
        const holder = direction === 'inbound' ? row.inbound_agent_id : row.outbound_agent_id;
        const base = { id: row.id, number, direction, previous_agent_id: holder };
        if (assign && holder !== p.agentId) {
          await setHolder(db, row.id, direction, p.agentId);
          affected.push({ ...base, action: 'assigned', agent_id: p.agentId });
        } else if (!assign && holder === p.agentId) {
          await setHolder(db, row.id, direction, null);
          affected.push({ ...base, action: 'unassigned', agent_id: null });
        } else {
          affected.push({ ...base, action: 'unchanged', agent_id: holder });
        }
      }
    }
  }
  return { ok: true, version: published, affected };
}

export async function countVersions(db: Db, orgId: string, agentId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM agent_versions WHERE org_id = ${orgId} AND agent_id = ${agentId}`;
  return row!.n;
}
