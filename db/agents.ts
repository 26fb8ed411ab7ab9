import type postgres from 'postgres';
import { newId } from '../platform/core/ids';
import { containsPattern, type Db } from './client';
import { keysetPage } from './kit/keyset';

export type { Db };
type Json = postgres.JSONValue;

export interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  active: boolean;
  is_demo: boolean;
  metadata: Record<string, unknown>;
  published_version: number | null;
  created_by: string | null;
  modified_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AgentFields {
  name: string;
  description?: string | null;
  active?: boolean;
  is_demo?: boolean;
  metadata?: Record<string, unknown>;
}

export interface AgentFilters {
  name?: string;
  active?: boolean;
  is_demo?: boolean;
  metadata?: Record<string, unknown>;
  created_before?: string;
  created_after?: string;
  updated_before?: string;
  updated_after?: string;
}

/** Inserts an agent; an id given by a scaffolding run makes a retried insert a no-op. */
export async function insertAgent(db: Db, orgId: string, fields: AgentFields, actor: string, id = newId()): Promise<AgentRow> {
  const [row] = await db<AgentRow[]>`
    INSERT INTO agents (id, org_id, name, description, active, is_demo, metadata, created_by, modified_by)
    VALUES (${id}, ${orgId}, ${fields.name}, ${fields.description ?? null}, ${fields.active ?? true}, ${fields.is_demo ?? false},
            ${db.json((fields.metadata ?? {}) as Json)}, ${actor}, ${actor})
    ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
    RETURNING *`;
  return row!;
}

export async function getAgent(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<AgentRow | undefined> {
  const [row]: [AgentRow?] = opts.forUpdate
    ? await db`SELECT * FROM agents WHERE org_id = ${orgId} AND id = ${id} FOR UPDATE`
    : await db`SELECT * FROM agents WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

/** Changes only the fields present; undefined when the agent is not in the organization. */
export async function updateAgent(
  db: Db,
  orgId: string,
  id: string,
  patch: Partial<AgentFields>,
  actor: string,
): Promise<AgentRow | undefined> {
  const set = (key: keyof AgentFields, value: unknown) => (value === undefined ? db`` : db`${db(key)} = ${value as string},`);
  const [row]: [AgentRow?] = await db`
    UPDATE agents SET
      ${set('name', patch.name)}
      ${set('description', patch.description)}
      ${set('active', patch.active)}
      ${set('is_demo', patch.is_demo)}
      ${patch.metadata === undefined ? db`` : db`metadata = ${db.json(patch.metadata as Json)},`}
      modified_by = ${actor}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}
    RETURNING *`;
  return row;
}

export async function deleteAgent(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM agents WHERE org_id = ${orgId} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

export async function setPublishedVersion(db: Db, orgId: string, id: string, version: number, actor: string): Promise<void> {
  await db`UPDATE agents SET published_version = ${version}, modified_by = ${actor}, updated_at = now() WHERE org_id = ${orgId} AND id = ${id}`;
}

/** One page of agents, newest first, after the (created_at, id) of the cursor; and the total matching. */
export async function listAgents(
  db: Db,
  orgId: string,
  filters: AgentFilters,
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (AgentRow & { cursor_t: string })[]; total: number }> {
  const where = [db`org_id = ${orgId}`];
  if (filters.name !== undefined) where.push(db`name ILIKE ${containsPattern(filters.name)}`);
  if (filters.active !== undefined) where.push(db`active = ${filters.active}`);
  if (filters.is_demo !== undefined) where.push(db`is_demo = ${filters.is_demo}`);
  if (filters.metadata !== undefined) where.push(db`metadata @> ${db.json(filters.metadata as Json)}`);
  if (filters.created_before) where.push(db`created_at < ${filters.created_before}::timestamptz`);
  if (filters.created_after) where.push(db`created_at > ${filters.created_after}::timestamptz`);
  if (filters.updated_before) where.push(db`updated_at < ${filters.updated_before}::timestamptz`);
  if (filters.updated_after) where.push(db`updated_at > ${filters.updated_after}::timestamptz`);
  const matching = where.reduce((acc, cond) => db`${acc} AND ${cond}`);
  return keysetPage<AgentRow>(db, { select: db`*`, from: db`agents`, where: matching, ...page });
}

export interface AgentStatistics {
  conversations_total: number;
  conversations_last_30_days: number;
  average_duration_seconds: number | null;
  last_conversation_at: Date | null;
}

/** Conversation figures of one agent, from the conversations campaigns and calls write. */
export async function agentStatistics(db: Db, orgId: string, agentId: string): Promise<AgentStatistics> {
  const [row] = await db<AgentStatistics[]>`
    SELECT count(*)::int AS conversations_total,
           count(*) FILTER (WHERE coalesce(started_at, created_at) >= now() - interval '30 days')::int AS conversations_last_30_days,
           round(avg(duration_seconds)::numeric, 1)::float8 AS average_duration_seconds,
           max(coalesce(started_at, created_at)) AS last_conversation_at
    FROM conversations WHERE org_id = ${orgId} AND agent_id = ${agentId}`;
  return row!;
}
