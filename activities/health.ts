import type { ActivityDeps } from './deps';

export interface ProbeResult {
  postgres: boolean;
  storage: boolean;
  checked_at: string;
}

/** A worker-side view of its dependencies, run as a workflow so operators can see the worker answer. */
export function createHealthActivities({ sql, storage }: ActivityDeps) {
  return {
    async probeDependencies(): Promise<ProbeResult> {
      const postgres = await sql`SELECT 1`.then(
        () => true,
        () => false,
      );
      const storageOk = await storage.head('health/probe').then(
        () => true,
        () => false,
      );
      return { postgres, storage: storageOk, checked_at: new Date().toISOString() };
    },
  };
}

/** What the health workflows may call: their `proxyActivities<HealthActivities>` type. */
export type HealthActivities = ReturnType<typeof createHealthActivities>;
