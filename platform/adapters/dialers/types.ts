import type { CallEvent } from '../../../domain/campaigns';

// The dialer's contract (platform/adapters/dialers/dialer.ts builds the configured one; the adapters implement it).

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
