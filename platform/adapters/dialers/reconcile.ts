import { type CallEvent, isFinalCallStatus } from '../../../domain/campaigns';
import type { Logger } from '../../core/logger';
import type { ProviderCall, ProviderCallStore } from './call-store';
import { eachLimited } from './http';

/** Calls read back per sweep, and how many at once. */
const RECONCILE_BATCH = 200;
const RECONCILE_PARALLELISM = 8;

/**
 * A provider dialer's `reconcile`: the named calls among `keys` placed at least `afterMs` ago, each read
 * back through the provider's call API by `readBack`; the final outcomes found, marked `reconciled`.
 */
export async function reconcileCalls(
  options: { calls: ProviderCallStore; logger: Logger; provider: string; afterMs: number },
  orgId: string,
  keys: string[],
  readBack: (row: ProviderCall) => Promise<CallEvent | null>,
): Promise<CallEvent[]> {
  if (!keys.length) return [];
  const rows = await options.calls.named(orgId, keys, new Date(Date.now() - options.afterMs), RECONCILE_BATCH);
  const events: CallEvent[] = [];
  await eachLimited(rows, RECONCILE_PARALLELISM, async (row) => {
    try {
      const event = await readBack(row);
      if (event && isFinalCallStatus(event.status)) events.push({ ...event, outcome: { ...event.outcome, reconciled: true } });
    } catch (err) {
      // One unreadable call does not hold back the others; the next sweep asks again.
      options.logger.warn({ err, key: row.idempotency_key }, `could not read a ${options.provider} call back`);
    }
  });
  return events;
}
