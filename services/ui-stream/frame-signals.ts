import type { Sql } from '../../db/client';
import { FRAMES_CHANNEL } from '../../db/ui-streams';
import type { Logger } from '../../platform/logger';

/**
 * Wake-ups for stream readers: one LISTEN per process (per pool), fanned out by stream id. A reader
 * also polls on its own, so a lost notification (or a LISTEN that could not start) only delays it.
 */
export interface FrameSignals {
  /** Resolves on the stream's next notification, or after `ms`, or when `signal` aborts. */
  wait(streamId: string, ms: number, signal?: AbortSignal): Promise<void>;
}

const registry = new WeakMap<Sql, FrameSignals>();

export function frameSignals(sql: Sql, logger: Logger): FrameSignals {
  const existing = registry.get(sql);
  if (existing) return existing;
  const waiters = new Map<string, Set<() => void>>();
  const wake = (streamId: string) => {
    const set = waiters.get(streamId);
    if (!set) return;
    waiters.delete(streamId);
    for (const fn of set) fn();
  };
  let listening: Promise<unknown> | null = null;
  const listen = () => {
    listening ??= sql.listen(FRAMES_CHANNEL, (streamId) => wake(streamId)).catch((error: unknown) => {
      logger.warn({ err: error }, 'stream readers could not LISTEN; they poll');
      listening = null;
    });
  };
  const signals: FrameSignals = {
    wait(streamId, ms, signal) {
      listen();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          waiters.get(streamId)?.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        let set = waiters.get(streamId);
        if (!set) waiters.set(streamId, (set = new Set()));
        set.add(done);
      });
    },
  };
  registry.set(sql, signals);
  return signals;
}
