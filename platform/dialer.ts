import crypto from 'node:crypto';
import type { CallEvent, CallStatus } from '../domain/campaigns';
import type { Config } from './config';
import type { Logger } from './logger';
import { createSimulatedDialer, type SimulatedCallStore } from './dialer-simulated';

// The telephony (or voice runtime) behind campaigns. Placing a call is asynchronous: the provider
// accepts it at once and reports its progress and outcome later, through the signed callback
// POST /campaign/call-events (or, for the built-in simulated dialer, straight to the dispatcher).

export type { CallEvent, CallStatus } from '../domain/campaigns';

export interface CallRequest {
  /** `<campaign_id>:<contact_id>:<attempt>`; a provider must never ring twice for one key. */
  idempotency_key: string;
  org_id: string;
  campaign_id: string;
  contact_id: string;
  attempt: number;
  to: string;
  from: string | null;
  agent_id: string | null;
  agent_version: number | null;
  agent_config: Record<string, unknown> | null;
  initial_context: string | null;
  data: Record<string, unknown> | null;
}

export interface PlacedCall {
  provider_call_id: string;
}

/** The provider refused this one call for good (e.g. an unroutable number): the attempt fails, unretried. */
export class CallRejected extends Error {}

export interface Dialer {
  readonly name: string;
  /** Idempotent on `idempotency_key`: a repeated request returns the call already placed. */
  placeCall(request: CallRequest): Promise<PlacedCall>;
  /**
   * Final outcomes the provider holds for calls whose report may have been lost (a provider's call
   * status API); calls still ringing, or already reported, are left out.
   */
  reconcile(orgId: string, keys: string[]): Promise<CallEvent[]>;
}

/** Where a dialer sends the events it produces itself (the simulated one); the worker signals the dispatcher. */
export type CallEventSink = (orgId: string, events: CallEvent[]) => Promise<void>;

/** The configured dialer; `simulatedCalls` is where the simulated one remembers its calls. */
export function createDialer(config: Config, deps: { simulatedCalls: SimulatedCallStore; logger: Logger; sink: CallEventSink }): Dialer {
  switch (config.DIALER) {
    case 'simulated':
      return createSimulatedDialer({
        calls: deps.simulatedCalls,
        logger: deps.logger,
        latencyMs: config.DIALER_SIMULATED_LATENCY_MS,
        outcomes: parseOutcomeWeights(config.DIALER_SIMULATED_OUTCOMES),
        sink: deps.sink,
      });
  }
}

/** `completed:0.8,no_answer:0.2` → weighted outcomes (config validates the shape). */
export function parseOutcomeWeights(spec: string): [CallStatus, number][] {
  return spec.split(',').map((part) => {
    const [status, weight] = part.split(':');
    return [status as CallStatus, Number(weight)];
  });
}

/** The X-Dialer-Signature of a callback body: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const signBody = (secret: string, rawBody: string): string =>
  `sha256=${crypto.createHmac('sha256', secret).update(rawBody).digest('hex')}`;

/** Checks a callback's signature against the exact raw body, in constant time. */
export function verifySignature(secret: string, rawBody: string, header: string): boolean {
  const expected = Buffer.from(signBody(secret, rawBody));
  const given = Buffer.from(header);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
