import type { Sql } from '../../db/client';
import { readFrames } from '../../db/ui-streams';
import type { StoredFrame } from '../../domain/ui-message-stream';
import type { Logger } from '../../platform/core/logger';
import { frameSignals } from './frame-signals';

export interface TailOptions {
  orgId: string;
  streamId: string;
  /** Frames after this id are sent (the request's Last-Event-ID, or where the segment began less one). */
  afterId: number;
  /** Without a new frame for this long the stream ends with an `error` frame; the writer goes on, and a client resumes later. */
  idleTimeoutMs: number;
  /** How often a reader looks without a notification. */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * The stored frames of a stream after `afterId`, then the new ones as they are written, up to and
 * including the segment's end (`[DONE]`, a null frame). Every wait is bounded: past `idleTimeoutMs`
 * without a frame it yields an `error` frame and an end of its own.
 */
export async function* tailFrames(deps: { sql: Sql; logger: Logger }, options: TailOptions): AsyncGenerator<StoredFrame> {
  const signals = frameSignals(deps.sql, deps.logger);
  await signals.ready(2000);
  let after = options.afterId;
  let lastProgress = Date.now();
  while (!options.signal?.aborted) {
    const ticket = signals.ticket(options.streamId);
    const frames = await readFrames(deps.sql, options.orgId, options.streamId, after, 500);
    if (frames.length > 0) ticket.cancel();
    for (const f of frames) {
      yield f;
      after = f.id;
      if (f.frame === null) return;
    }
    if (frames.length > 0) {
      lastProgress = Date.now();
      continue;
    }
    const idle = Date.now() - lastProgress;
    if (idle >= options.idleTimeoutMs) {
      ticket.cancel();
      yield {
        id: after,
        frame: {
          type: 'error',
          errorText: `No progress for ${Math.round(idle / 1000)} s; the answer goes on: reconnect with Last-Event-ID to read the rest`,
        },
      };
      yield { id: after, frame: null };
      return;
    }
    await ticket.wait(Math.min(options.pollMs ?? 1000, options.idleTimeoutMs - idle), options.signal);
  }
}
