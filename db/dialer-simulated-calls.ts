import type { NewSimulatedCall, SimulatedCall, SimulatedCallStore } from '../platform/adapters/dialers/simulated';
import type { Db } from './client';

// The simulated dialer's calls (platform/adapters/dialers/simulated.ts), one row per idempotency key.

export async function rememberSimulatedCall(db: Db, c: NewSimulatedCall): Promise<SimulatedCall> {
  const [row] = await db<SimulatedCall[]>`
    INSERT INTO dialer_simulated_calls (idempotency_key, org_id, phone_number, outcome, duration_seconds, due_at)
    VALUES (${c.idempotency_key}, ${c.org_id}, ${c.phone_number}, ${c.outcome}, ${c.duration_seconds}, ${c.due_at})
    ON CONFLICT (idempotency_key) DO UPDATE SET requests = dialer_simulated_calls.requests + 1
    RETURNING idempotency_key, org_id, outcome, duration_seconds, placed_at, due_at, requests`;
  return row!;
}

export async function markSimulatedCallsReported(db: Db, keys: string[]): Promise<void> {
  await db`UPDATE dialer_simulated_calls SET reported_at = now() WHERE idempotency_key = ANY(${keys})`;
}

export async function unreportedSimulatedCalls(db: Db, orgId: string, keys: string[]): Promise<SimulatedCall[]> {
  const rows = await db<SimulatedCall[]>`
    SELECT idempotency_key, org_id, outcome, duration_seconds, placed_at, due_at, requests
    FROM dialer_simulated_calls
    WHERE org_id = ${orgId} AND idempotency_key = ANY(${keys}) AND reported_at IS NULL
      AND due_at <= now() - interval '1 second'`;
  return rows;
}

/** The simulated dialer's store, on this connection pool. */
export const simulatedCallStore = (db: Db): SimulatedCallStore => ({
  remember: (call) => rememberSimulatedCall(db, call),
  markReported: (keys) => markSimulatedCallsReported(db, keys),
  unreported: (orgId, keys) => unreportedSimulatedCalls(db, orgId, keys),
});
