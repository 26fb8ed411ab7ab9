import type { Readable } from 'node:stream';
import * as db from '../../db/analytics-conversations';
import type { ConversationRow, TurnRow } from '../../db/analytics-conversations';
import { createStream, getStream, keptFramesFrom } from '../../db/ui-streams';
import { titleOf } from '../../domain/analytics-assistant';
import { conflict, notFound } from '../../domain/errors';
import { partsFromFrames } from '../../domain/ui-message-stream';
import { newId } from '../../platform/core/ids';
import { analyticsAssistantTurnWorkflowRef, analyticsAssistantWorkflowId } from '../../workflows/analytics-assistant-messages';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { openTurn, turnStream } from '../assistants/turn-kernel';
import { MAX_SQL_ATTEMPTS } from './prompt';

const conversationNotFound = () => notFound('Conversation not found');

/**
 * POST /analytics-assistant/questions: records the question as a turn of a new or the given conversation
 * and starts its workflow in one transaction (Temporal unreachable: 503, nothing recorded), then
 * answers the turn's stream (AI SDK UI message stream v1).
 */
export async function ask(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  userId: string,
  body: { question: string; conversation_id?: string },
): Promise<{ conversationId: string; stream: Readable }> {
  const { conversationId, afterId } = await deps.sql.begin(async (tx) => {
    let conversation: ConversationRow | undefined;
    if (body.conversation_id) {
      conversation = await db.getConversation(tx, orgId, userId, body.conversation_id, true);
      if (!conversation) throw conversationNotFound();
      if (conversation.active_turn_id) throw conflict('A question is being answered in this conversation: wait for its answer');
    } else {
      conversation = await db.insertConversation(tx, orgId, { id: newId(), owner_user_id: userId, title: titleOf(body.question) });
      await createStream(tx, orgId, conversation.id);
    }
    const id = conversation.id;
    const turnId = newId();
    const record = async (firstFrameId: number) => {
      await db.insertTurn(tx, orgId, {
        id: turnId,
        conversation_id: id,
        question: body.question,
        answer_message_id: `msg-${turnId}`,
        first_frame_id: firstFrameId,
      });
      await db.setActiveTurn(tx, orgId, id, turnId);
    };
    const last = await openTurn(tx, deps, orgId, id, record, {
      ref: analyticsAssistantTurnWorkflowRef,
      options: {
        workflowId: analyticsAssistantWorkflowId(id),
        args: [{ orgId, conversationId: id, turnId, maxAttempts: MAX_SQL_ATTEMPTS }],
      },
    });
    return { conversationId: id, afterId: last };
  });
  const stream = turnStream(deps, orgId, conversationId, afterId);
  return { conversationId, stream };
}

const conversationView = (row: ConversationRow) => ({
  id: row.id,
  title: row.title,
  active_turn_id: row.active_turn_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

export async function listConversations(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  query: { limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await db.listConversations(deps.sql, orgId, userId, { limit: query.limit, after });
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), conversationView);
}

/** The conversation with its questions and answers (as AI SDK UIMessages: the SQL, results, errors and text). */
export async function getConversation(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, conversationId: string) {
  const conversation = await db.getConversation(deps.sql, orgId, userId, conversationId);
  if (!conversation) throw conversationNotFound();
  const turns = await db.listTurns(deps.sql, orgId, conversationId);
  const stream = await getStream(deps.sql, orgId, conversationId);
  return {
    ...conversationView(conversation),
    last_event_id: Number(stream?.last_frame_id ?? 0),
    turns: await Promise.all(turns.map((t) => turnView(deps, orgId, t))),
  };
}

async function turnView(deps: Pick<ServiceDeps, 'sql'>, orgId: string, turn: TurnRow) {
  const parts = turn.ended_at
    ? turn.answer_parts
    : partsFromFrames(await keptFramesFrom(deps.sql, orgId, turn.conversation_id, Number(turn.first_frame_id)));
  return {
    id: turn.id,
    question: turn.question,
    status: turn.status,
    answer: { id: turn.answer_message_id, role: 'assistant' as const, parts },
    answer_text: turn.answer_text,
    model: turn.model,
    error: turn.error,
    created_at: turn.created_at.toISOString(),
    ended_at: turn.ended_at?.toISOString() ?? null,
  };
}
