import type postgres from 'postgres';
import type { ReplayedTurn } from '../domain/voice-replay';
import type { Db } from './client';

// Replays of recorded conversations through another version of their agent, and their batches.

type Json = postgres.JSONValue;

export interface ReplayRow {
  id: string;
  org_id: string;
  agent_id: string;
  conversation_id: string;
  batch_id: string | null;
  version: number;
  call_tools: boolean;
  status: 'queued' | 'running' | 'completed' | 'failed';
  error: string | null;
  turns: ReplayedTurn[];
  turn_count: number | null;
  changed_count: number | null;
  timings: Record<string, unknown>;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface BatchRow {
  id: string;
  org_id: string;
  agent_id: string;
  version: number;
  call_tools: boolean;
  created_at: Date;
}

export interface NewReplay {
  id: string;
  org_id: string;
  agent_id: string;
  conversation_id: string;
  batch_id: string | null;
  version: number;
  call_tools: boolean;
}

export async function insertReplays(db: Db, replays: NewReplay[]): Promise<ReplayRow[]> {
  if (!replays.length) return [];
  const rows: ReplayRow[] = await db`INSERT INTO conversation_replays ${db(replays)} RETURNING *`;
  return rows;
}

export async function insertBatch(db: Db, b: Omit<BatchRow, 'created_at'>): Promise<BatchRow> {
  const [row] = await db<BatchRow[]>`
    INSERT INTO conversation_replay_batches (id, org_id, agent_id, version, call_tools)
    VALUES (${b.id}, ${b.org_id}, ${b.agent_id}, ${b.version}, ${b.call_tools}) RETURNING *`;
  return row!;
}

export async function getReplay(db: Db, orgId: string, id: string): Promise<ReplayRow | undefined> {
  const [row]: [ReplayRow?] = await db`SELECT * FROM conversation_replays WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

export async function getBatch(db: Db, orgId: string, id: string): Promise<BatchRow | undefined> {
  const [row]: [BatchRow?] = await db`SELECT * FROM conversation_replay_batches WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

export async function batchReplays(db: Db, orgId: string, batchId: string): Promise<ReplayRow[]> {
  return db<ReplayRow[]>`
    SELECT * FROM conversation_replays WHERE org_id = ${orgId} AND batch_id = ${batchId} ORDER BY created_at, id`;
}

/** Queued → running, once; answers false when the row is not (yet) there or already past queued. */
export async function markRunning(db: Db, orgId: string, id: string): Promise<ReplayRow | undefined> {
  const [row]: [ReplayRow?] = await db`
    UPDATE conversation_replays SET status = 'running', started_at = coalesce(started_at, now())
    WHERE org_id = ${orgId} AND id = ${id} AND status IN ('queued', 'running') RETURNING *`;
  return row;
}

export async function completeReplay(
  db: Db,
  orgId: string,
  id: string,
  r: { turns: ReplayedTurn[]; turn_count: number; changed_count: number; timings: Record<string, unknown> },
): Promise<void> {
  await db`
    UPDATE conversation_replays SET status = 'completed', error = NULL, turns = ${db.json(r.turns as unknown as Json)},
           turn_count = ${r.turn_count}, changed_count = ${r.changed_count}, timings = ${db.json(r.timings as Json)}, finished_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND status = 'running'`;
}

export async function failReplay(db: Db, orgId: string, id: string, error: string): Promise<void> {
  await db`
    UPDATE conversation_replays SET status = 'failed', error = ${error}, finished_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND status IN ('queued', 'running')`;
}

/** The agent's last ended conversations, newest first. */
export async function lastEndedConversations(db: Db, orgId: string, agentId: string, limit: number): Promise<{ id: string }[]> {
  return db<{ id: string }[]>`
    SELECT id FROM conversations WHERE org_id = ${orgId} AND agent_id = ${agentId} AND ended_at IS NOT NULL
    ORDER BY ended_at DESC, id DESC LIMIT ${limit}`;
}
