import { setTimeout as sleep } from 'node:timers/promises';
import type { ConcurrencySettingsRow } from '../../db/campaigns';
import type { Sql } from '../../db/client';
import { ensureScopes, reserveSlot } from '../../db/dial-pacing';
import { ACCOUNT_SCOPE, DIAL_BUDGET_MS, intervalMs, numberScope, type Pacing } from '../../domain/pacing';
import type { Config } from '../../platform/core/config';

// The gate every campaign call passes right before it is handed to the dialer (services/campaigns/dispatch.ts):
// the do-not-call list is read, then the call's instant is reserved in Postgres at the organization's pace
// (per account and per caller number) and waited for, heartbeating. One call passes the gate at a time, so a
// dial reserves at most one instant ahead: a crashed or retried activity wastes at most that one, and calls
// are never closer than the pace, whichever worker places them.

type PacingConfig = Pick<Config, 'CAMPAIGN_DEFAULT_CALLS_PER_SECOND' | 'CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER'>;

/** The organization's pace: its own settings, else the deployment's defaults. */
export const pacingOf = (config: PacingConfig, settings: ConcurrencySettingsRow | undefined): Pacing => ({
  callsPerSecond: settings?.calls_per_second ?? config.CAMPAIGN_DEFAULT_CALLS_PER_SECOND,
  callsPerSecondPerNumber: settings?.calls_per_second_per_number ?? config.CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER,
});

/** What the gate says of one call: dial it now, its number is listed, or the dial's time is up (next cycle). */
export type Admission = 'dial' | 'do_not_call' | 'later';

/** Longest sleep between two heartbeats while waiting for an instant. */
const HEARTBEAT_EVERY_MS = 1000;

async function waitHeartbeating(ms: number, heartbeat: () => void): Promise<void> {
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now()) {
    await sleep(Math.min(left, HEARTBEAT_EVERY_MS));
    heartbeat();
  }
}

/** Checks the list and reserves the call's instant in one statement: the milliseconds to wait for it, or listed. */
async function reserve(
  sql: Sql,
  orgId: string,
  pacing: Pacing,
  to: string,
  from: string | null,
  known: Set<string>,
): Promise<{ waitMs: number; slotMs: number } | 'do_not_call'> {
  const number = numberScope(from);
  if (!known.has(number)) {
    await ensureScopes(sql, orgId, [ACCOUNT_SCOPE, number]);
    known.add(number);
  }
  const row = await reserveSlot(sql, orgId, to, [
    { scope: ACCOUNT_SCOPE, intervalMs: intervalMs(pacing.callsPerSecond) },
    { scope: number, intervalMs: intervalMs(pacing.callsPerSecondPerNumber) },
  ]);
  if (!row) return 'do_not_call';
  return { waitMs: row.slot_ms - row.now_ms, slotMs: row.slot_ms };
}

/** A gate for one dial of the organization's claimed attempts; `onSlot` hears each reserved instant (epoch ms, the database's clock). */
export function createDialGate(sql: Sql, orgId: string, pacing: Pacing, heartbeat: () => void, onSlot?: (atMs: number) => void) {
  const startedAt = Date.now();
  const known = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  return {
    /** Resolves when the call to `to` from `from` may be placed, one caller at a time. */
    admit(to: string, from: string | null): Promise<Admission> {
      const turn = queue.then(async (): Promise<Admission> => {
        if (Date.now() - startedAt > DIAL_BUDGET_MS) return 'later';
        const reserved = await reserve(sql, orgId, pacing, to, from, known);
        if (reserved === 'do_not_call') return reserved;
        onSlot?.(reserved.slotMs);
        if (reserved.waitMs > 0) await waitHeartbeating(reserved.waitMs, heartbeat);
        return 'dial';
      });
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
