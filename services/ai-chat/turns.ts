import type { Readable } from 'node:stream';
import * as db from '../../db/ai-chat';
import type { TurnStatus } from '../../db/ai-chat';
import { type TranscriptMessage, completeTranscript, titleFrom } from '../../domain/ai-chat';
import { conflict } from '../../domain/errors';
import type { UiMessage } from '../../domain/ui-message-stream';
import { newId } from '../../platform/core/ids';
import { aiChatTurnWorkflowRef, aiChatWorkflowId, stopTurnSignal } from '../../workflows/ai-chat-messages';
import type { ServiceDeps } from '../deps';
import { closeTurn, openTurn } from '../assistants/turn-kernel';
import { signalWorkflow } from '../workflow-client';
import { ownChat } from './chats';
import { chatStream } from './stream';

export const userText = (message: UiMessage) => message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');

/**
 * POST /ai/chats/{chat_id}/messages: records the user's message as a new turn and starts its workflow
 * in one transaction (Temporal unreachable: 503, nothing recorded), then answers the turn's stream.
 * The history the model reads is the server's own; the client sends only the new message.
 */
export async function sendMessage(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  userId: string,
  chatId: string,
  message: UiMessage,
): Promise<Readable> {
  const afterId = await deps.sql.begin(async (tx) => {
    const chat = await ownChat({ sql: tx as never }, orgId, userId, chatId, true);
    if (chat.active_turn_id) throw conflict('A turn is active in this chat: wait for it to finish, answer its approval, or stop it');
    if (await db.messageIdTaken(tx, orgId, chatId, message.id)) throw conflict(`A message with id ${message.id} is already in this chat`);
    const turnId = newId();
    const turns = await db.listTurns(tx, orgId, chatId);
    const record = async (firstFrameId: number) => {
      await db.insertTurn(tx, orgId, {
        id: turnId,
        chat_id: chatId,
        user_message: message,
        assistant_message_id: `msg-${turnId}`,
        first_frame_id: firstFrameId,
      });
      const title = turns.length === 0 && chat.title === 'New chat' ? titleFrom(userText(message)) : undefined;
      await db.setActiveTurn(tx, orgId, chatId, turnId, title);
    };
    return openTurn(tx, deps, orgId, chatId, record, {
      ref: aiChatTurnWorkflowRef,
      options: {
        workflowId: aiChatWorkflowId(chatId),
        args: [
          {
            orgId,
            chatId,
            turnId,
            maxSteps: deps.config.AI_CHAT_MAX_STEPS,
            approvalTtlMs: deps.config.AI_CHAT_APPROVAL_TTL_SECONDS * 1000,
          },
        ],
      },
    });
  });
  return chatStream(deps, orgId, chatId, afterId);
}

/** POST /ai/chats/{chat_id}/stop: asks the active turn to end (a model call in flight is canceled). */
export async function stopTurn(deps: Pick<ServiceDeps, 'sql' | 'temporal'>, orgId: string, userId: string, chatId: string) {
  const chat = await ownChat(deps, orgId, userId, chatId);
  if (!chat.active_turn_id) throw conflict('No turn is active in this chat');
  const turnId = chat.active_turn_id;
  await deps.sql.begin(async (tx) => {
    await db.requestStop(tx, orgId, turnId);
    await signalWorkflow(deps, aiChatWorkflowId(chatId), stopTurnSignal);
  });
  return { turn_id: chat.active_turn_id, stopping: true as const };
}

const STATUS: Record<string, TurnStatus> = {
  completed: 'completed',
  stopped: 'stopped',
  failed: 'failed',
  denied: 'completed',
  expired: 'completed',
};

/**
 * The turn's last activity: closes the segment being written (open text parts, the step, `finish`,
 * `[DONE]`; an `error` frame first when the turn failed), stores the answer as the client saw it and
 * the transcript later turns read, and frees the chat for the next turn. All in one transaction;
 * a repeat does nothing.
 */
export async function endTurn(
  deps: Pick<ServiceDeps, 'sql'> & { logger?: Pick<ServiceDeps['logger'], 'warn'> },
  input: {
    orgId: string;
    chatId: string;
    turnId: string;
    outcome: string;
    error: string | null;
    transcript: TranscriptMessage[];
    steps: number;
  },
): Promise<void> {
  const { orgId, chatId, turnId } = input;
  await closeTurn(
    deps,
    { orgId, streamId: chatId, error: input.error, finishReason: input.outcome === 'stopped' ? 'other' : input.error ? 'error' : 'stop' },
    {
      load: async (tx) => {
        const turn = await db.getTurn(tx, orgId, turnId, true);
        return (
          turn && {
            id: turnId,
            messageId: turn.assistant_message_id,
            firstFrameId: Number(turn.first_frame_id),
            ended: Boolean(turn.ended_at),
          }
        );
      },
      store: async (tx, parts) => {
        await db.endTurn(tx, orgId, turnId, {
          status: STATUS[input.outcome] ?? 'completed',
          parts,
          transcript: completeTranscript(input.transcript),
          model: null,
          steps: input.steps,
        });
        await db.clearActiveTurn(tx, orgId, chatId, turnId);
      },
    },
  );
}
