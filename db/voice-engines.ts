import type { Db } from './client';
import type { ConversationRow } from './conversations';

// The voice engines' heartbeats, and the calls of an engine that stopped beating.

export async function beat(db: Db, engineId: string): Promise<void> {
  await db`INSERT INTO voice_engines (id, seen_at) VALUES (${engineId}, now()) ON CONFLICT (id) DO UPDATE SET seen_at = now()`;
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
