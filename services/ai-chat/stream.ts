import type { Readable } from 'node:stream';
import { getTurn } from '../../db/ai-chat';
import { getStream } from '../../db/ui-streams';
import type { ServiceDeps } from '../deps';
import { turnStream } from '../assistants/turn-kernel';
import { ownChat } from './chats';

type StreamDeps = Pick<ServiceDeps, 'sql' | 'logger' | 'config'>;

/** The chat's stream from `afterId` to the end of the segment being written: what a turn or an approval answers. */
export const chatStream = (deps: StreamDeps, orgId: string, chatId: string, afterId: number): Readable =>
  turnStream(deps, orgId, chatId, afterId);

/**
 * GET /ai/chats/{chat_id}/stream: the active turn's latest segment, replayed after `lastEventId` and then
 * live. Without `lastEventId` the client has seen nothing: the segment is replayed from its start, also
 * once it has closed (the turn waits for an approval); before the turn's first segment opens, the
 * stream starts with it. Null (204) when no turn is active, or when the turn waits and `lastEventId`
 * already covers everything its last segment sent.
 */
export async function resumeStream(
  deps: StreamDeps,
  orgId: string,
  userId: string,
  chatId: string,
  lastEventId: number | null,
): Promise<Readable | null> {
  const chat = await ownChat(deps, orgId, userId, chatId);
  if (!chat.active_turn_id) return null;
  const [stream, turn] = await Promise.all([getStream(deps.sql, orgId, chatId), getTurn(deps.sql, orgId, chat.active_turn_id)]);
  if (!stream || !turn) return null;
  const lastFrame = Number(stream.last_frame_id);
  // The turn's latest segment; an earlier turn's is not this turn's (its first opens with the next frame).
  const segmentStart = stream.segment_start_id === null ? null : Number(stream.segment_start_id);
  const current = segmentStart !== null && segmentStart >= Number(turn.first_frame_id) ? segmentStart : null;
  const from = current ?? lastFrame + 1;
  if (lastEventId === null) return chatStream(deps, orgId, chatId, from - 1);
  const after = Math.max(lastEventId, from - 1);
  if (current !== null && !stream.segment_open && after >= lastFrame) return null;
  return chatStream(deps, orgId, chatId, after);
}
