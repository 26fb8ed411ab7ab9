import type { Readable } from 'node:stream';
import { getStream } from '../../db/ui-streams';
import type { ServiceDeps } from '../deps';
import { streamResponse } from '../ui-stream/response';
import { ownChat } from './chats';

type StreamDeps = Pick<ServiceDeps, 'sql' | 'logger' | 'config'>;

/** The chat's stream from `afterId` to the end of the segment being written: what a turn or an approval answers. */
export function chatStream(deps: StreamDeps, orgId: string, chatId: string, afterId: number): Readable {
  return streamResponse(deps, {
    orgId,
    streamId: chatId,
    afterId,
    keepAliveMs: deps.config.AI_CHAT_KEEPALIVE_MS,
    idleTimeoutMs: deps.config.AI_CHAT_STREAM_IDLE_TIMEOUT_MS,
  });
}

/**
 * GET /ai/chats/{chat_id}/stream: the active turn's current segment, replayed after `lastEventId`
 * (from the segment's start without it) and then live. Null (204) when no turn is active, or when the
 * turn waits for an approval and the client has already seen everything its last segment sent.
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
  const stream = await getStream(deps.sql, orgId, chatId);
  if (!stream?.segment_start_id) return null;
  const segmentStart = Number(stream.segment_start_id);
  const after = Math.max(lastEventId ?? 0, segmentStart - 1);
  if (!stream.segment_open && (lastEventId === null || after >= Number(stream.last_frame_id))) return null;
  return chatStream(deps, orgId, chatId, after);
}
