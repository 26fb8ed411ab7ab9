import type { Db, Sql } from './client';
import type { TranscriptMessage } from '../domain/ai-chat';
import type { UiMessage, UiPart } from '../domain/ui-message-stream';
import { keysetPage } from './kit/keyset';

type Json = Parameters<Sql['json']>[0];

export interface ChatRow {
  id: string;
  org_id: string;
  owner_user_id: string;
  title: string;
  account_id: string | null;
  active_turn_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export type TurnStatus = 'streaming' | 'awaiting_approval' | 'completed' | 'stopped' | 'failed';

export interface TurnRow {
  id: string;
  org_id: string;
  chat_id: string;
  status: TurnStatus;
  user_message: UiMessage;
  assistant_message_id: string;
  assistant_parts: UiPart[];
  transcript: TranscriptMessage[];
  model: string | null;
  steps: number;
  stop_requested: boolean;
  first_frame_id: string;
  created_at: Date;
  ended_at: Date | null;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'canceled';

export interface ApprovalRow {
  id: string;
  org_id: string;
  chat_id: string;
  turn_id: string;
  step: number;
  tool_call_id: string;
  tool_name: string;
  input: unknown;
  input_hash: string;
  status: ApprovalStatus;
  reason: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  committed_at: Date | null;
  result: unknown;
  expires_at: Date;
  created_at: Date;
}

// ---- chats ---------------------------------------------------------------------------------------

export async function insertChat(
  db: Db,
  orgId: string,
  chat: { id: string; owner_user_id: string; title: string; account_id: string | null },
): Promise<ChatRow> {
  const [row] = await db<ChatRow[]>`
    INSERT INTO ai_chats (id, org_id, owner_user_id, title, account_id)
    VALUES (${chat.id}, ${orgId}, ${chat.owner_user_id}, ${chat.title}, ${chat.account_id}) RETURNING *`;
  return row!;
}

/** A chat of its owner in the organization (anyone else's is not found). */
export async function getChat(db: Db, orgId: string, ownerId: string, chatId: string, lock = false): Promise<ChatRow | undefined> {
  const [row]: [ChatRow?] = lock
    ? await db`SELECT * FROM ai_chats WHERE org_id = ${orgId} AND owner_user_id = ${ownerId} AND id = ${chatId} FOR UPDATE`
    : await db`SELECT * FROM ai_chats WHERE org_id = ${orgId} AND owner_user_id = ${ownerId} AND id = ${chatId}`;
  return row;
}

/** A chat by id alone (workers act for the chat's owner). */
export async function chatById(db: Db, orgId: string, chatId: string): Promise<ChatRow | undefined> {
  const [row]: [ChatRow?] = await db`SELECT * FROM ai_chats WHERE org_id = ${orgId} AND id = ${chatId}`;
  return row;
}

export async function listChats(
  db: Db,
  orgId: string,
  ownerId: string,
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (ChatRow & { cursor_t: string })[]; total: number }> {
  return keysetPage<ChatRow>(db, {
    select: db`*`,
    from: db`ai_chats`,
    where: db`org_id = ${orgId} AND owner_user_id = ${ownerId}`,
    ...page,
  });
}

export async function deleteChat(db: Db, orgId: string, chatId: string): Promise<void> {
  await db`DELETE FROM ai_chats WHERE org_id = ${orgId} AND id = ${chatId}`;
}

export async function setActiveTurn(db: Db, orgId: string, chatId: string, turnId: string | null, title?: string): Promise<void> {
  await db`UPDATE ai_chats SET active_turn_id = ${turnId}, title = coalesce(${title ?? null}, title), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${chatId}`;
}

/** Clears the chat's active turn if it is still this one. */
export async function clearActiveTurn(db: Db, orgId: string, chatId: string, turnId: string): Promise<void> {
  await db`UPDATE ai_chats SET active_turn_id = NULL, updated_at = now() WHERE org_id = ${orgId} AND id = ${chatId} AND active_turn_id = ${turnId}`;
}

// ---- turns ---------------------------------------------------------------------------------------

export async function insertTurn(
  db: Db,
  orgId: string,
  turn: { id: string; chat_id: string; user_message: UiMessage; assistant_message_id: string; first_frame_id: number },
): Promise<TurnRow> {
  const [row] = await db<TurnRow[]>`
    INSERT INTO ai_chat_turns (id, org_id, chat_id, status, user_message, assistant_message_id, first_frame_id)
    VALUES (${turn.id}, ${orgId}, ${turn.chat_id}, 'streaming', ${db.json(turn.user_message as unknown as Json)}, ${turn.assistant_message_id}, ${turn.first_frame_id})
    RETURNING *`;
  return row!;
}

export async function messageIdTaken(db: Db, orgId: string, chatId: string, messageId: string): Promise<boolean> {
  const [row] =
    await db`SELECT 1 FROM ai_chat_turns WHERE org_id = ${orgId} AND chat_id = ${chatId} AND user_message->>'id' = ${messageId}`;
  return Boolean(row);
}

export async function getTurn(db: Db, orgId: string, turnId: string, lock = false): Promise<TurnRow | undefined> {
  const [row]: [TurnRow?] = lock
    ? await db`SELECT * FROM ai_chat_turns WHERE org_id = ${orgId} AND id = ${turnId} FOR UPDATE`
    : await db`SELECT * FROM ai_chat_turns WHERE org_id = ${orgId} AND id = ${turnId}`;
  return row;
}

export async function listTurns(db: Db, orgId: string, chatId: string): Promise<TurnRow[]> {
  return db<TurnRow[]>`SELECT * FROM ai_chat_turns WHERE org_id = ${orgId} AND chat_id = ${chatId} ORDER BY created_at, id`;
}

/** The latest ended turns before this one, newest first: the history the model reads. */
/** The chat's last `limit` ended turns before this one, oldest first (as the Analytics Assistant's). */
export async function previousTurns(db: Db, orgId: string, chatId: string, turnId: string, limit: number): Promise<TurnRow[]> {
  const rows = await db<TurnRow[]>`
    SELECT * FROM ai_chat_turns
    WHERE org_id = ${orgId} AND chat_id = ${chatId} AND id <> ${turnId} AND ended_at IS NOT NULL
    ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
  return rows.reverse();
}

export async function setTurnStatus(db: Db, orgId: string, turnId: string, status: TurnStatus): Promise<void> {
  await db`UPDATE ai_chat_turns SET status = ${status} WHERE org_id = ${orgId} AND id = ${turnId} AND ended_at IS NULL`;
}

export async function endTurn(
  db: Db,
  orgId: string,
  turnId: string,
  end: { status: TurnStatus; parts: UiPart[]; transcript: TranscriptMessage[]; model: string | null; steps: number },
): Promise<void> {
  await db`UPDATE ai_chat_turns SET status = ${end.status}, assistant_parts = ${db.json(end.parts as unknown as Json)},
      transcript = ${db.json(end.transcript as unknown as Json)}, model = coalesce(${end.model}, model), steps = ${end.steps}, ended_at = now()
    WHERE org_id = ${orgId} AND id = ${turnId}`;
}

export async function requestStop(db: Db, orgId: string, turnId: string): Promise<void> {
  await db`UPDATE ai_chat_turns SET stop_requested = true WHERE org_id = ${orgId} AND id = ${turnId}`;
}

export async function stopRequested(db: Db, orgId: string, turnId: string): Promise<boolean> {
  const [row]: [{ stop_requested: boolean }?] =
    await db`SELECT stop_requested FROM ai_chat_turns WHERE org_id = ${orgId} AND id = ${turnId}`;
  return row?.stop_requested ?? true;
}

export async function setTurnModel(db: Db, orgId: string, turnId: string, model: string): Promise<void> {
  await db`UPDATE ai_chat_turns SET model = ${model} WHERE org_id = ${orgId} AND id = ${turnId}`;
}

// ---- steps ---------------------------------------------------------------------------------------

export async function getStepResult<T>(db: Db, orgId: string, turnId: string, step: number, kind: string): Promise<T | undefined> {
  const [row]: [{ result: T }?] =
    await db`SELECT result FROM ai_chat_steps WHERE org_id = ${orgId} AND turn_id = ${turnId} AND step = ${step} AND kind = ${kind}`;
  return row?.result;
}

export async function insertStepResult(db: Db, orgId: string, turnId: string, step: number, kind: string, result: unknown): Promise<void> {
  await db`INSERT INTO ai_chat_steps (turn_id, org_id, step, kind, result) VALUES (${turnId}, ${orgId}, ${step}, ${kind}, ${db.json(result as Json)})`;
}

// ---- approvals -----------------------------------------------------------------------------------

export async function insertApproval(
  db: Db,
  orgId: string,
  a: Pick<ApprovalRow, 'id' | 'chat_id' | 'turn_id' | 'step' | 'tool_call_id' | 'tool_name' | 'input' | 'input_hash' | 'expires_at'>,
): Promise<void> {
  await db`
    INSERT INTO ai_chat_approvals (id, org_id, chat_id, turn_id, step, tool_call_id, tool_name, input, input_hash, status, expires_at)
    VALUES (${a.id}, ${orgId}, ${a.chat_id}, ${a.turn_id}, ${a.step}, ${a.tool_call_id}, ${a.tool_name}, ${db.json(a.input as Json)}, ${a.input_hash}, 'pending', ${a.expires_at})`;
}

export async function lockApproval(db: Db, orgId: string, approvalId: string, chatId?: string): Promise<ApprovalRow | undefined> {
  const chat = chatId ? db`AND chat_id = ${chatId}` : db``;
  const [row]: [ApprovalRow?] = await db`SELECT * FROM ai_chat_approvals WHERE org_id = ${orgId} AND id = ${approvalId} ${chat} FOR UPDATE`;
  return row;
}

export async function decideApproval(
  db: Db,
  orgId: string,
  approvalId: string,
  d: { status: ApprovalStatus; reason: string | null; userId: string | null },
): Promise<void> {
  await db`UPDATE ai_chat_approvals SET status = ${d.status}, reason = ${d.reason}, decided_by_user_id = ${d.userId}, decided_at = now()
    WHERE org_id = ${orgId} AND id = ${approvalId}`;
}

export async function markCommitted(db: Db, orgId: string, approvalId: string, result: unknown): Promise<void> {
  await db`UPDATE ai_chat_approvals SET committed_at = now(), result = ${db.json(result as Json)} WHERE org_id = ${orgId} AND id = ${approvalId}`;
}

export async function approvalsOfChat(db: Db, orgId: string, chatId: string): Promise<ApprovalRow[]> {
  return db<ApprovalRow[]>`SELECT * FROM ai_chat_approvals WHERE org_id = ${orgId} AND chat_id = ${chatId} ORDER BY created_at, id`;
}

export async function userExternalId(db: Db, userId: string): Promise<string | undefined> {
  const [row]: [{ external_id: string }?] = await db`SELECT external_id FROM users WHERE id = ${userId}`;
  return row?.external_id;
}

/**
 * A transaction seen as a pool: `begin` opens a savepoint inside it. Services that open their own
 * transaction (`deps.sql.begin`) then run inside the caller's, so an approved change and the record
 * that it was made commit together, exactly once.
 */
export function inTransaction(tx: Db): Sql {
  return new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop === 'begin') {
        return (...args: unknown[]) => {
          const fn = args[args.length - 1] as (t: Db) => unknown;
          return (target as { savepoint: (f: (t: Db) => unknown) => Promise<unknown> }).savepoint(fn);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  }) as unknown as Sql;
}
