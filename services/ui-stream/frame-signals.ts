import type { Sql } from '../../db/client';
import { FRAMES_CHANNEL } from '../../db/ui-streams';
import type { Logger } from '../../platform/core/logger';

/**
 * Wake-ups for stream readers: one LISTEN per process (per pool), fanned out by stream id. A reader
 * takes its ticket before it reads, so a frame written between its read and its wait still wakes it;
 * it also polls on its own, so a lost notification (or a LISTEN that could not start) only delays it.
 */
export interface FrameSignals {
  /** Resolves once LISTEN is in place (or has failed: readers then poll), at most after `ms`. */
  ready(ms: number): Promise<void>;
  /** A ticket for the stream's next notification: `wait` resolves on it, after `ms`, or on abort. */
  ticket(streamId: string): { wait(ms: number, signal?: AbortSignal): Promise<void>; cancel(): void };
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
  const listen = () =>
    (listening ??= sql
      .listen(FRAMES_CHANNEL, (streamId) => wake(streamId))
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'stream readers could not LISTEN; they poll');
        listening = null;
      }));
  const signals: FrameSignals = {
    async ready(ms) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([listen(), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    },
    ticket(streamId) {
      let fired = false;
      let resolveWait: (() => void) | null = null;
      const fire = () => {
        fired = true;
        resolveWait?.();
      };
      let set = waiters.get(streamId);
      if (!set) waiters.set(streamId, (set = new Set()));
      set.add(fire);
      const cancel = () => waiters.get(streamId)?.delete(fire);
      return {
        cancel,
        wait(ms, signal) {
          if (fired || signal?.aborted) return Promise.resolve();
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', done);
              cancel();
              resolve();
            };
            const timer = setTimeout(done, ms);
            signal?.addEventListener('abort', done, { once: true });
            resolveWait = done;
          });
        },
      };
    },
  };
  registry.set(sql, signals);
  return signals;
}
