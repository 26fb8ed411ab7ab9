import crypto from 'node:crypto';
import type { Sql } from '../db/client';
import type { CallEvent, CallEventSink, CallRequest, CallStatus, Dialer, PlacedCall } from './dialer';
import type { Logger } from './logger';

// The built-in dialer for development, tests and benchmarks: no phone rings. A call "lasts" the
// configured latency and ends with an outcome drawn from the configured weights (stable per
// idempotency key), or scripted per attempt by the contact's `data.simulate.outcomes`. It remembers
// every call in Postgres, so a repeated request for one key never places a second call, and calls
// whose report died with a worker are still reported by reconcile().

const SCRIPTABLE = new Set<string>(['completed', 'no_answer', 'busy', 'failed']);
const FLUSH_DELAY_MS = 50;

interface SimulatedRow {
  idempotency_key: string;
  org_id: string;
  outcome: string;
  duration_seconds: number;
  placed_at: Date;
  due_at: Date;
  requests: number;
}

interface Hints {
  outcomes?: unknown;
  latency_ms?: unknown;
}

export interface SimulatedDialerOptions {
  sql: Sql;
  logger: Logger;
  latencyMs: number;
  outcomes: [CallStatus, number][];
  sink: CallEventSink;
}

/** A number in [0, 1) fixed by the key, so a replayed or repeated call draws the same outcome. */
function unitHash(key: string): number {
  return crypto.createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;
}

export function pickOutcome(weights: [CallStatus, number][], key: string): CallStatus {
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  if (total <= 0) return 'completed';
  let point = unitHash(key) * total;
  for (const [status, weight] of weights) {
    if (point < weight) return status;
    point -= weight;
  }
  return weights[weights.length - 1]![0];
}

function eventOf(row: SimulatedRow): CallEvent {
  return {
    idempotency_key: row.idempotency_key,
    status: row.outcome as CallStatus,
    provider_call_id: `sim-${row.idempotency_key}`,
    started_at: row.placed_at.toISOString(),
    ended_at: row.due_at.toISOString(),
    duration_seconds: row.duration_seconds,
    outcome: { simulated: true, disposition: row.outcome },
  };
}

export function createSimulatedDialer(options: SimulatedDialerOptions): Dialer {
  const { sql, logger, sink } = options;
  const queued = new Map<string, CallEvent[]>();
  let flushing: NodeJS.Timeout | null = null;

  function plan(request: CallRequest): { outcome: CallStatus; latencyMs: number } {
    const hints = (request.data?.simulate ?? {}) as Hints;
    const scripted = Array.isArray(hints.outcomes) ? hints.outcomes[request.attempt - 1] : undefined;
    const outcome =
      typeof scripted === 'string' && SCRIPTABLE.has(scripted)
        ? (scripted as CallStatus)
        : pickOutcome(options.outcomes, request.idempotency_key);
    const latencyMs = typeof hints.latency_ms === 'number' && hints.latency_ms >= 0 ? hints.latency_ms : options.latencyMs;
    return { outcome, latencyMs };
  }

  async function flush(): Promise<void> {
    flushing = null;
    const batches = [...queued.entries()];
    queued.clear();
    for (const [orgId, events] of batches) {
      try {
        await sink(orgId, events);
        await sql`UPDATE dialer_simulated_calls SET reported_at = now() WHERE idempotency_key = ANY(${events.map((e) => e.idempotency_key)})`;
      } catch (err) {
        // Left unreported: the dispatcher's next sweep collects them through reconcile().
        logger.warn({ err, orgId, calls: events.length }, 'simulated dialer could not report call outcomes');
      }
    }
  }

  function report(row: SimulatedRow): void {
    const list = queued.get(row.org_id) ?? [];
    list.push(eventOf(row));
    queued.set(row.org_id, list);
    flushing ??= setTimeout(() => void flush(), FLUSH_DELAY_MS).unref();
  }

  return {
    name: 'simulated',

    async placeCall(request: CallRequest): Promise<PlacedCall> {
      const { outcome, latencyMs } = plan(request);
      const dueAt = new Date(Date.now() + latencyMs);
      const duration = outcome === 'completed' ? Math.max(1, Math.round(latencyMs / 1000)) : 0;
      const [row] = await sql<SimulatedRow[]>`
        INSERT INTO dialer_simulated_calls (idempotency_key, org_id, phone_number, outcome, duration_seconds, due_at)
        VALUES (${request.idempotency_key}, ${request.org_id}, ${request.to}, ${outcome}, ${duration}, ${dueAt})
        ON CONFLICT (idempotency_key) DO UPDATE SET requests = dialer_simulated_calls.requests + 1
        RETURNING idempotency_key, org_id, outcome, duration_seconds, placed_at, due_at, requests`;
      if (row!.requests === 1) {
        setTimeout(() => report(row!), Math.max(0, row!.due_at.getTime() - Date.now())).unref();
      }
      return { provider_call_id: `sim-${request.idempotency_key}` };
    },

    async reconcile(orgId: string, keys: string[]): Promise<CallEvent[]> {
      if (!keys.length) return [];
      const rows = await sql<SimulatedRow[]>`
        SELECT idempotency_key, org_id, outcome, duration_seconds, placed_at, due_at, requests
        FROM dialer_simulated_calls
        WHERE org_id = ${orgId} AND idempotency_key = ANY(${keys}) AND reported_at IS NULL
          AND due_at <= now() - interval '1 second'`;
      return rows.map(eventOf);
    },
  };
}
