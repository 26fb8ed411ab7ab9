import type { Db } from '../../db/client';
import { appendFrames, getStream, keptFramesFrom, readFrames } from '../../db/ui-streams';
import { type UiFrame, closingFrames, partsFromFrames } from '../../domain/ui-message-stream';
import type { Logger } from '../../platform/core/logger';

/** A turn as its stream knows it: where its frames start and the id of the answer message. */
export interface StreamTurn {
  id: string;
  messageId: string;
  firstFrameId: number;
}

/**
 * The end of a turn on its stream, for the chat and the Analytics Assistant alike: closes the segment
 * being written (an `error` frame first when the turn failed; open text parts, the step, `finish`,
 * `[DONE]`), and answers the turn's message as the client saw it. A segment already closed (a turn that
 * ended while waiting for an approval) gets no new one unless there is an error to say. An answer with
 * neither text nor tool parts is logged: the client shows an empty bubble, an operator must see why.
 */
export async function closeTurnStream(
  tx: Db,
  deps: { logger?: Pick<Logger, 'warn'> },
  orgId: string,
  streamId: string,
  turn: StreamTurn,
  end: { error: string | null; finishReason: 'stop' | 'error' | 'other' },
) {
  const stream = await getStream(tx, orgId, streamId);
  if (stream) {
    const closing: (UiFrame | null)[] = [];
    if (!stream.segment_open) closing.push({ type: 'start', messageId: turn.messageId });
    const segment = stream.segment_open ? await segmentFrames(tx, orgId, streamId, Number(stream.segment_start_id)) : [];
    if (end.error) closing.push({ type: 'error', errorText: end.error });
    closing.push(...closingFrames(segment, end.finishReason));
    if (stream.segment_open || end.error) await appendFrames(tx, orgId, streamId, `${turn.id}:end`, closing);
  }
  const parts = partsFromFrames(await keptFramesFrom(tx, orgId, streamId, turn.firstFrameId));
  const answered = parts.some((p) => (p.type === 'text' && (p as { text: string }).text.trim() !== '') || p.type.startsWith('tool-'));
  if (!answered)
    deps.logger?.warn(
      { orgId, streamId, turnId: turn.id, error: end.error, parts: parts.map((p) => p.type) },
      'turn ended without an answer',
    );
  return parts;
}

async function segmentFrames(tx: Db, orgId: string, streamId: string, segmentStart: number): Promise<UiFrame[]> {
  const frames = await readFrames(tx, orgId, streamId, segmentStart - 1, 100_000);
  return frames.flatMap((f) => (f.frame ? [f.frame] : []));
}
