import type { AssistantTranscript } from '../domain/analytics-assistant';
import type { UiPart } from '../domain/ui-message-stream';
import type { Db, Sql } from './client';
import { keysetPage } from './kit/keyset';

type Json = Parameters<Sql['json']>[0];

export interface ConversationRow {
  id: string;
  org_id: string;
  owner_user_id: string;
  title: string;
  active_turn_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface TurnRow {
  id: string;
  org_id: string;
  conversation_id: string;
  question: string;
  status: 'running' | 'completed' | 'failed';
  answer_message_id: string;
  answer_parts: UiPart[];
  answer_text: string | null;
  transcript: AssistantTranscript;
  model: string | null;
  error: string | null;
  first_frame_id: string;
  created_at: Date;
  ended_at: Date | null;
}

export async function insertConversation(
  db: Db,
  orgId: string,
  row: { id: string; owner_user_id: string; title: string },
): Promise<ConversationRow> {
  const [created]: [ConversationRow?] = await db`
    INSERT INTO analytics_conversations (id, org_id, owner_user_id, title) VALUES (${row.id}, ${orgId}, ${row.owner_user_id}, ${row.title}) RETURNING *`;
  return created!;
}

export async function getConversation(
  db: Db,
  orgId: string,
  ownerId: string,
  id: string,
  lock = false,
): Promise<ConversationRow | undefined> {
  const forUpdate = lock ? db`FOR UPDATE` : db``;
  const [row]: [ConversationRow?] = await db`
    SELECT * FROM analytics_conversations WHERE org_id = ${orgId} AND owner_user_id = ${ownerId} AND id = ${id} ${forUpdate}`;
  return row;
}

export async function listConversations(
  db: Db,
  orgId: string,
  ownerId: string,
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (ConversationRow & { cursor_t: string })[]; total: number }> {
  return keysetPage<ConversationRow>(db, {
    select: db`*`,
    from: db`analytics_conversations`,
    where: db`org_id = ${orgId} AND owner_user_id = ${ownerId}`,
    ...page,
  });
}

export async function setActiveTurn(db: Db, orgId: string, id: string, turnId: string): Promise<void> {
  await db`UPDATE analytics_conversations SET active_turn_id = ${turnId}, updated_at = now() WHERE org_id = ${orgId} AND id = ${id}`;
}

export async function clearActiveTurn(db: Db, orgId: string, id: string, turnId: string): Promise<void> {
  await db`UPDATE analytics_conversations SET active_turn_id = NULL, updated_at = now() WHERE org_id = ${orgId} AND id = ${id} AND active_turn_id = ${turnId}`;
}

export async function insertTurn(
  db: Db,
  orgId: string,
  turn: { id: string; conversation_id: string; question: string; answer_message_id: string; first_frame_id: number },
): Promise<void> {
  await db`
    INSERT INTO analytics_turns (id, org_id, conversation_id, question, status, answer_message_id, first_frame_id)
    VALUES (${turn.id}, ${orgId}, ${turn.conversation_id}, ${turn.question}, 'running', ${turn.answer_message_id}, ${turn.first_frame_id})`;
}

export async function getTurn(db: Db, orgId: string, turnId: string, lock = false): Promise<TurnRow | undefined> {
  const forUpdate = lock ? db`FOR UPDATE` : db``;
  const [row]: [TurnRow?] = await db`SELECT * FROM analytics_turns WHERE org_id = ${orgId} AND id = ${turnId} ${forUpdate}`;
  return row;
}

export async function listTurns(db: Db, orgId: string, conversationId: string): Promise<TurnRow[]> {
  return db<
    TurnRow[]
  >`SELECT * FROM analytics_turns WHERE org_id = ${orgId} AND conversation_id = ${conversationId} ORDER BY created_at, id`;
}

/** The ended turns before this one, newest last, at most `limit`: the conversation the model reads. */
export async function previousTurns(db: Db, orgId: string, conversationId: string, turnId: string, limit: number): Promise<TurnRow[]> {
  const rows = await db<TurnRow[]>`
    SELECT * FROM analytics_turns WHERE org_id = ${orgId} AND conversation_id = ${conversationId} AND id <> ${turnId} AND ended_at IS NOT NULL
    ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
  return rows.reverse();
}

export async function endTurn(
  db: Db,
  orgId: string,
  turnId: string,
  end: {
    status: 'completed' | 'failed';
    parts: UiPart[];
    text: string | null;
    transcript: AssistantTranscript;
    model: string | null;
    error: string | null;
  },
): Promise<void> {
  await db`
    UPDATE analytics_turns SET status = ${end.status}, answer_parts = ${db.json(end.parts as Json)}, answer_text = ${end.text},
      transcript = ${db.json(end.transcript as unknown as Json)}, model = coalesce(${end.model}, model), error = ${end.error}, ended_at = now()
    WHERE org_id = ${orgId} AND id = ${turnId}`;
}

export async function setTurnModel(db: Db, orgId: string, turnId: string, model: string): Promise<void> {
  await db`UPDATE analytics_turns SET model = ${model} WHERE org_id = ${orgId} AND id = ${turnId}`;
}
