import { z } from 'zod';
import { temporalReachable } from '../../platform/temporal';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';

const Liveness = z.object({ status: z.literal('ok') });
const Readiness = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.object({ postgres: z.boolean(), temporal: z.boolean() }),
});

async function postgresReachable(deps: AppDeps): Promise<boolean> {
  try {
    await deps.sql`SELECT 1`.execute();
    return true;
  } catch {
    return false;
  }
}

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

  routes.add({
    method: 'get',
    path: '/ready',
    tag: 'Service Health',
    summary: 'Readiness: Postgres and Temporal are reachable',
    auth: 'public',
    responses: {
      200: { description: 'Ready', schema: Readiness },
      503: { description: 'A dependency is unreachable', schema: Readiness },
    },
    handler: async () => {
      const [postgres, temporal] = await Promise.all([postgresReachable(deps), temporalReachable(deps.temporal)]);
      const ok = postgres && temporal;
      return reply(ok ? 200 : 503, { status: ok ? 'ready' : 'unavailable', checks: { postgres, temporal } });
    },
  });
}
