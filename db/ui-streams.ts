import type { Db } from './client';
import type { StoredFrame, UiFrame } from '../domain/ui-message-stream';
import { newId } from '../platform/core/ids';

/** NOTIFY channel of new frames; the payload is the stream id. */
export const FRAMES_CHANNEL = 'ui_stream_frames';

export interface StreamRow {
  id: string;
  org_id: string;
  last_frame_id: string;
  segment_id: string | null;
  segment_start_id: string | null;
  segment_open: boolean;
}

export async function createStream(db: Db, orgId: string, streamId: string): Promise<void> {
  await db`INSERT INTO ui_streams (id, org_id) VALUES (${streamId}, ${orgId}) ON CONFLICT (id) DO NOTHING`;
}

export async function deleteStream(db: Db, orgId: string, streamId: string): Promise<void> {
  await db`DELETE FROM ui_streams WHERE org_id = ${orgId} AND id = ${streamId}`;
}

export async function getStream(db: Db, orgId: string, streamId: string): Promise<StreamRow | undefined> {
  const [row]: [StreamRow?] = await db`SELECT * FROM ui_streams WHERE org_id = ${orgId} AND id = ${streamId}`;
  return row;
}

/**
 * Appends frames (null: the segment's end) under the stream row's lock, so ids are dense and commit
 * in order; a batch starting with a `start` frame opens a new segment. Wakes the readers (NOTIFY, sent
 * at commit). Returns the ids given, or null when the stream is gone (its chat deleted).
 */
export async function appendFrames(
  db: Db,
  orgId: string,
  streamId: string,
  source: string,
  frames: (UiFrame | null)[],
  options: { abandoned?: boolean } = {},
): Promise<number[] | null> {
  if (frames.length === 0) return [];
  const opens = frames[0]?.type === 'start';
  const closes = frames[frames.length - 1] === null;
  const segment = opens ? newId() : null;
  const [row]: [{ last_frame_id: string; segment_id: string | null }?] = await db`
    UPDATE ui_streams SET
      last_frame_id = last_frame_id + ${frames.length},
      segment_id = coalesce(${segment}::uuid, segment_id),
      segment_start_id = CASE WHEN ${opens} THEN last_frame_id + 1 ELSE segment_start_id END,
      segment_open = CASE WHEN ${closes} THEN false WHEN ${opens} THEN true ELSE segment_open END
    WHERE org_id = ${orgId} AND id = ${streamId}
    RETURNING last_frame_id, segment_id`;
  if (!row) return null;
  const last = Number(row.last_frame_id);
  const first = last - frames.length + 1;
  const ids = frames.map((_, i) => first + i);
  const segmentId = row.segment_id ?? newId();
  await db`
    INSERT INTO ui_stream_frames ${db(
      frames.map((frame, i) => ({
        stream_id: streamId,
        id: ids[i],
        org_id: orgId,
        segment_id: segmentId,
        frame: frame === null ? null : db.json(frame as never),
        source,
        abandoned: options.abandoned ?? false,
      })),
    )}`;
  await db`SELECT pg_notify(${FRAMES_CHANNEL}, ${streamId})`;
  return ids;
}

/** Frames after `afterId` (and from `fromId` on), in order, at most `limit`. */
export async function readFrames(db: Db, orgId: string, streamId: string, afterId: number, limit: number): Promise<StoredFrame[]> {
  const rows = await db<{ id: string; frame: UiFrame | null }[]>`
    SELECT id, frame FROM ui_stream_frames
    WHERE org_id = ${orgId} AND stream_id = ${streamId} AND id > ${afterId}
    ORDER BY id LIMIT ${limit}`;
  return rows.map((r) => ({ id: Number(r.id), frame: r.frame }));
}

/** The frames a writer (`source`) wrote, not abandoned, in order. */
export async function framesOfSource(db: Db, orgId: string, streamId: string, source: string): Promise<UiFrame[]> {
  const rows = await db<{ frame: UiFrame | null }[]>`
    SELECT frame FROM ui_stream_frames
    WHERE org_id = ${orgId} AND stream_id = ${streamId} AND source = ${source} AND NOT abandoned
    ORDER BY id`;
  return rows.flatMap((r) => (r.frame ? [r.frame] : []));
}

export async function abandonSource(db: Db, orgId: string, streamId: string, source: string): Promise<void> {
  await db`UPDATE ui_stream_frames SET abandoned = true WHERE org_id = ${orgId} AND stream_id = ${streamId} AND source = ${source}`;
}

/** Every frame of the stream from `fromId` on that is not abandoned (what the stored message is built from). */
export async function keptFramesFrom(db: Db, orgId: string, streamId: string, fromId: number): Promise<UiFrame[]> {
  const rows = await db<{ frame: UiFrame | null }[]>`
    SELECT frame FROM ui_stream_frames
    WHERE org_id = ${orgId} AND stream_id = ${streamId} AND id >= ${fromId} AND NOT abandoned AND frame IS NOT NULL
    ORDER BY id`;
  return rows.map((r) => r.frame!);
}
