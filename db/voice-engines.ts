import type { Db } from './client';
import type { ConversationRow } from './conversations';

// The voice engines' heartbeats, and the calls of an engine that stopped beating.

/** Run on the engine's own reserved connection: its backend's pid says the process is there (see engineLive). */
export async function beat(db: Db, engineId: string): Promise<void> {
  await db`
    INSERT INTO voice_engines (id, seen_at, backend_pid) VALUES (${engineId}, now(), pg_backend_pid())
    ON CONFLICT (id) DO UPDATE SET seen_at = now(), backend_pid = pg_backend_pid()`;
}

export async function forget(db: Db, engineId: string): Promise<void> {
  await db`DELETE FROM voice_engines WHERE id = ${engineId}`;
}

/**
 * Takes, once, the live provider calls of engines silent for `staleMs` (or never seen): each is marked as
 * moving (`moving:<engine>`), so exactly one watcher moves it and the engine that takes it knows it resumes.
 */
export async function takeStrandedCalls(db: Db, watcher: string, staleMs: number, limit = 50): Promise<ConversationRow[]> {
  return db<ConversationRow[]>`
    UPDATE conversations c SET engine_id = 'moving:' || c.engine_id, updated_at = now()
    WHERE c.id IN (
      SELECT c2.id FROM conversations c2 LEFT JOIN voice_engines e ON e.id = c2.engine_id
      WHERE c2.ended_at IS NULL AND c2.end_reason IS NULL AND c2.status = 'in_progress'
        AND c2.channel IN ('twilio', 'sip') AND c2.call_id IS NOT NULL
        AND c2.engine_id IS NOT NULL AND c2.engine_id <> ${watcher} AND c2.engine_id NOT LIKE 'moving:%'
        AND (e.seen_at IS NULL OR e.seen_at < now() - make_interval(secs => ${staleMs / 1000}))
        AND c2.updated_at < now() - make_interval(secs => ${staleMs / 1000})
      ORDER BY c2.updated_at LIMIT ${limit}
      FOR UPDATE OF c2 SKIP LOCKED)
    RETURNING c.*`;
}

/**
 * Marks the conversations an engine lets go while it drains (`moving:<engine>`), before their streams close:
 * no peer's watch takes them again (its beat row goes when it stops), and the engine that takes one resumes it.
 * Only those it still holds; answers the ids marked.
 */
export async function markMoving(db: Db, engineId: string, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db<{ id: string }[]>`
    UPDATE conversations SET engine_id = 'moving:' || engine_id, updated_at = now()
    WHERE id = ANY(${ids as string[]}::uuid[]) AND engine_id = ${engineId} AND ended_at IS NULL AND end_reason IS NULL
    RETURNING id`;
  return rows.map((r) => r.id);
}

export type TakeOver = { taken: ConversationRow } | { refused: 'not_found' | 'ended' | 'held' };

/**
 * A widget's page comes back after its socket dropped: the engine takes its conversation if it has not ended and
 * no live engine holds it. An engine is live while its beat is fresh and the backend of its beating connection
 * exists (a killed process's connection closes at once; a frozen one's beat goes stale), unless it let the
 * conversation go (`moving:`). One statement, so of two pages' or engines' attempts one wins.
 */
export async function takeOverConversation(
  db: Db,
  orgId: string,
  id: string,
  engineId: string,
  staleMs: number,
  claim: { channel: string; agent_id: string },
): Promise<TakeOver> {
  const [row] = await db<ConversationRow[]>`
    UPDATE conversations c SET engine_id = ${engineId}, updated_at = now()
    WHERE c.org_id = ${orgId} AND c.id = ${id} AND c.channel = ${claim.channel} AND c.agent_id = ${claim.agent_id}
      AND c.ended_at IS NULL AND c.end_reason IS NULL
      AND (c.engine_id IS NULL OR c.engine_id LIKE 'moving:%' OR NOT EXISTS (
        SELECT 1 FROM voice_engines e
        WHERE e.id = c.engine_id AND e.seen_at >= now() - make_interval(secs => ${staleMs / 1000})
          AND (e.backend_pid IS NULL OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = e.backend_pid))))
    RETURNING c.*`;
  if (row) return { taken: row };
  const [held] = await db<{ ended: boolean }[]>`
    SELECT (ended_at IS NOT NULL OR end_reason IS NOT NULL) AS ended FROM conversations
    WHERE org_id = ${orgId} AND id = ${id} AND channel = ${claim.channel} AND agent_id = ${claim.agent_id}`;
  return { refused: !held ? 'not_found' : held.ended ? 'ended' : 'held' };
}
