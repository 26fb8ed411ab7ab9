import crypto from 'node:crypto';
import type { CallEvent, CallEventSink, CallRequest, CallStatus, Dialer, PlacedCall } from './dialer';
import type { Logger } from '../../core/logger';

// The built-in dialer for development, tests and benchmarks: no phone rings. A call "lasts" the
// configured latency and ends with an outcome drawn from the configured weights (stable per
// idempotency key), or scripted per attempt by the contact's `data.simulate.outcomes`. It remembers
// every call in the store it is given (Postgres in the worker), so a repeated request for one key never
// places a second call, and calls whose report died with a worker are still reported by reconcile().

const SCRIPTABLE = new Set<string>(['completed', 'no_answer', 'busy', 'failed']);
const FLUSH_DELAY_MS = 50;

/** A call the simulated dialer placed, as its store keeps it. */
export interface SimulatedCall {
  idempotency_key: string;
  org_id: string;
  outcome: string;
  duration_seconds: number;
  placed_at: Date;
  due_at: Date;
  /** How many times the call was requested; the first request alone schedules its report. */
  requests: number;
}

export interface NewSimulatedCall {
  idempotency_key: string;
  org_id: string;
  phone_number: string;
  outcome: CallStatus;
  duration_seconds: number;
  due_at: Date;
}

/** Where the simulated dialer remembers its calls; the service that creates the dialer supplies it. */
export interface SimulatedCallStore {
  /** Stores a new call, or counts one more request for a key already stored; returns the stored call. */
  remember(call: NewSimulatedCall): Promise<SimulatedCall>;
  markReported(keys: string[]): Promise<void>;
  /** The organization's calls among `keys` never reported, ended at least a second ago. */
  unreported(orgId: string, keys: string[]): Promise<SimulatedCall[]>;
}

interface Hints {
  outcomes?: unknown;
  latency_ms?: unknown;
}

export interface SimulatedDialerOptions {
  calls: SimulatedCallStore;
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

function eventOf(row: SimulatedCall): CallEvent {
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
  const { calls, logger, sink } = options;
  const queued = new Map<string, CallEvent[]>();
  /** The pending flush, if one is scheduled: reports of one moment go out as one batch. */
  let flushTimer: NodeJS.Timeout | null = null;

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
    flushTimer = null;
    const batches = [...queued.entries()];
    queued.clear();
    for (const [orgId, events] of batches) {
      try {
        await sink(orgId, events);
        await calls.markReported(events.map((e) => e.idempotency_key));
      } catch (err) {
        // Left unreported: the dispatcher's next sweep collects them through reconcile().
        logger.warn({ err, orgId, calls: events.length }, 'simulated dialer could not report call outcomes');
      }
    }
  }

  function report(row: SimulatedCall): void {
    const list = queued.get(row.org_id) ?? [];
    list.push(eventOf(row));
    queued.set(row.org_id, list);
    if (!flushTimer) flushTimer = setTimeout(() => void flush(), FLUSH_DELAY_MS).unref();
  }

  return {
    name: 'simulated',

    async placeCall(request: CallRequest): Promise<PlacedCall> {
      const { outcome, latencyMs } = plan(request);
      const dueAt = new Date(Date.now() + latencyMs);
      const duration = outcome === 'completed' ? Math.max(1, Math.round(latencyMs / 1000)) : 0;
      const row = await calls.remember({
        idempotency_key: request.idempotency_key,
        org_id: request.org_id,
        phone_number: request.to,
        outcome,
        duration_seconds: duration,
        due_at: dueAt,
      });
      if (row.requests === 1) {
        setTimeout(() => report(row), Math.max(0, row.due_at.getTime() - Date.now())).unref();
      }
      return { provider_call_id: `sim-${request.idempotency_key}` };
    },

    async reconcile(orgId: string, keys: string[]): Promise<CallEvent[]> {
      if (!keys.length) return [];
      return (await calls.unreported(orgId, keys)).map(eventOf);
    },
  };
}
