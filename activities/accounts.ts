import { loadHealthSignals, recordHealthScore } from '../db/accounts';
import { scoreAccountHealth, type HealthFactors } from '../domain/accounts';
import type { ActivityDeps } from './deps';

export interface AccountHealthInput {
  orgId: string;
  accountId: string;
}

export interface AccountHealthResult {
  score: number;
  factors: HealthFactors;
  computed_at: string;
}

export function createAccountActivities({ sql, logger }: ActivityDeps) {
  return {
    /**
     * Reads the account's signals, scores them and records the score, in one transaction holding the
     * account row; null (and nothing written) when the account no longer exists.
     */
    async refreshAccountHealth({ orgId, accountId }: AccountHealthInput): Promise<AccountHealthResult | null> {
      const result = await sql.begin(async (tx) => {
        const signals = await loadHealthSignals(tx, orgId, accountId);
        if (!signals) return null;
        const { score, factors } = scoreAccountHealth({
          now: signals.measured_at.toISOString(),
          lastActivityAt: signals.last_activity_at?.toISOString() ?? null,
          openDeals: signals.open_deals,
          contacts: signals.contacts,
          engagedContacts: signals.engaged_contacts,
        });
        const row = await recordHealthScore(tx, orgId, accountId, score, { ...factors });
        return { score, factors, computed_at: row.computed_at.toISOString() };
      });
      if (!result) logger.info({ orgId, accountId }, 'account gone before its health refresh; nothing recorded');
      return result;
    },
  };
}
