import { z } from 'zod';
import { temporalReachable } from '../../platform/temporal';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';

const Liveness = z.object({ status: z.literal('ok') });
const Readiness = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.object({ postgres: z.boolean(), temporal: z.boolean(), storage: z.boolean() }),
});

/** Resolves with the check's outcome, or false once `ms` have passed, whatever the dependency does. */
async function within(ms: number, check: Promise<unknown>, onLate: () => void = () => {}): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      onLate();
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([check.then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    check.catch(() => {});
  }
}

function postgresReachable(deps: AppDeps, ms: number): Promise<boolean> {
  const query = deps.sql`SELECT 1`;
  // A query still queued for a connection is dropped; one sent is left to the pool's own bounds.
  return within(ms, query.execute(), () => {
    // postgres.js answers cancel() with a promise its types omit; a failed cancel changes nothing here.
    void Promise.resolve(query.cancel() as unknown).catch(() => {});
  });
}

/** A read of a key that never exists: answers undefined when the store works, throws when it fails. */
const storageReachable = (deps: AppDeps, ms: number) => within(ms, deps.storage.head('health/readiness-probe'));

export function registerHealthRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/health',
    tag: 'Service Health',
    summary: 'Liveness: the process answers',
    auth: 'public',
    responses: { 200: { description: 'Alive', schema: Liveness } },
    handler: async () => ({ status: 'ok' }),
  });

  const bound = deps.config.READY_CHECK_TIMEOUT_MS;
  routes.add({
    method: 'get',
    path: '/ready',
    tag: 'Service Health',
    summary: `Readiness: Postgres, Temporal and object storage each answer within ${bound} ms`,
    auth: 'public',
    responses: {
      200: { description: 'Ready', schema: Readiness },
      503: { description: `A dependency did not answer within ${bound} ms; the checks run in parallel, so the answer comes within that bound`, schema: Readiness },
    },
    handler: async () => {
      const [postgres, temporal, storage] = await Promise.all([
        postgresReachable(deps, bound),
        temporalReachable(deps.temporal, bound),
        storageReachable(deps, bound),
      ]);
      const ok = postgres && temporal && storage;
      return reply(ok ? 200 : 503, { status: ok ? ('ready' as const) : ('unavailable' as const), checks: { postgres, temporal, storage } });
    },
  });
}
