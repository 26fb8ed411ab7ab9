import { accountExists } from '../../db/accounts';
import * as db from '../../db/ai-chat';
import type { ChatRow, TurnRow } from '../../db/ai-chat';
import { createStream, deleteStream, getStream, keptFramesFrom } from '../../db/ui-streams';
import { notFound } from '../../domain/errors';
import { type UiMessage, partsFromFrames } from '../../domain/ui-message-stream';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { aiChatWorkflowId } from '../../workflows/ai-chat-messages';
import { terminateWorkflow } from '../workflow-client';

export const chatNotFound = () => notFound('Chat not found');

export function chatView(row: ChatRow) {
  return {
    id: row.id,
    title: row.title,
    account_id: row.account_id,
    active_turn_id: row.active_turn_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The chat of its owner, or 404 (another user's or another organization's chat is not found). */
export async function ownChat(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  chatId: string,
  lock = false,
): Promise<ChatRow> {
  const chat = await db.getChat(deps.sql, orgId, userId, chatId, lock);
  if (!chat) throw chatNotFound();
  return chat;
}

export async function createChat(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  body: { title?: string; account_id?: string | null },
) {
  const row = await deps.sql.begin(async (tx) => {
    if (body.account_id && !(await accountExists(tx, orgId, body.account_id))) throw notFound('Account not found');
    const chat = await db.insertChat(tx, orgId, {
      id: newId(),
      owner_user_id: userId,
      title: body.title ?? 'New chat',
      account_id: body.account_id ?? null,
    });
    await createStream(tx, orgId, chat.id);
    return chat;
  });
  return chatView(row);
}

export async function listChats(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await db.listChats(deps.sql, orgId, userId, { limit: query.limit, after });
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(chatView), pagination: page.pagination };
}

/** The turn's answer as the client saw it: stored once the turn ended, built from its frames while it runs. */
async function assistantMessage(deps: Pick<ServiceDeps, 'sql'>, orgId: string, turn: TurnRow): Promise<UiMessage | null> {
  const parts = turn.ended_at
    ? turn.assistant_parts
    : partsFromFrames(await keptFramesFrom(deps.sql, orgId, turn.chat_id, Number(turn.first_frame_id)));
  return parts.length ? { id: turn.assistant_message_id, role: 'assistant', parts } : null;
}

/** The chat with its messages as AI SDK UIMessages, oldest first, and its pending approvals. */
export async function getChat(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, chatId: string) {
  const chat = await ownChat(deps, orgId, userId, chatId);
  const turns = await db.listTurns(deps.sql, orgId, chatId);
  const messages: UiMessage[] = [];
  for (const turn of turns) {
    messages.push(turn.user_message);
    const answer = await assistantMessage(deps, orgId, turn);
    if (answer) messages.push(answer);
  }
  const approvals = await db.approvalsOfChat(deps.sql, orgId, chatId);
  const stream = await getStream(deps.sql, orgId, chatId);
  return {
    ...chatView(chat),
    messages,
    last_event_id: Number(stream?.last_frame_id ?? 0),
    approvals: approvals.map((a) => ({
      id: a.id,
      turn_id: a.turn_id,
      tool_call_id: a.tool_call_id,
      tool_name: a.tool_name,
      input: a.input,
      input_hash: a.input_hash,
      status: a.status,
      reason: a.reason,
      decided_at: a.decided_at?.toISOString() ?? null,
      committed_at: a.committed_at?.toISOString() ?? null,
      result: a.result ?? null,
      expires_at: a.expires_at.toISOString(),
      created_at: a.created_at.toISOString(),
    })),
  };
}

/** Deletes the chat with its turns, approvals and stream; a turn still running is terminated first. */
export async function deleteChat(
  deps: Pick<ServiceDeps, 'sql' | 'temporal'>,
  orgId: string,
  userId: string,
  chatId: string,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const chat = await ownChat({ sql: tx as never }, orgId, userId, chatId, true);
    if (chat.active_turn_id) {
      // Inside the transaction: Temporal unreachable is a 503 and nothing is deleted.
      await terminateWorkflow(deps, aiChatWorkflowId(chatId), 'chat deleted');
    }
    await db.deleteChat(tx, orgId, chatId);
    await deleteStream(tx, orgId, chatId);
  });
}
