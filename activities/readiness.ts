import * as readiness from '../services/readiness';
import type { ActivityDeps } from './deps';

export function createReadinessActivities({ sql, logger }: ActivityDeps) {
  return {
    /** Computes and records the profile in one transaction; null (nothing written) when the account is gone. */
    async computeReadinessProfile({ orgId, accountId, trigger }: { orgId: string; accountId: string; trigger: 'manual' | 'nightly' }) {
      const row = await sql.begin((tx) => readiness.computeReadiness(tx, orgId, accountId, trigger));
      if (!row) {
        logger.info({ orgId, accountId }, 'account gone before its readiness refresh; nothing recorded');
        return null;
      }
      return { id: row.id, label: row.label, computed_at: row.computed_at.toISOString() };
    },
    refreshStaleReadinessPage: ({ orgId, afterId, staleHours }: { orgId: string; afterId: string | null; staleHours: number }) =>
      readiness.refreshStalePage({ sql }, orgId, afterId, staleHours),
  };
}
