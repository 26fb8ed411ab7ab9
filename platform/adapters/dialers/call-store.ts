// Where a provider dialer remembers the calls it placed, one per attempt key (db/dialer-provider-calls.ts
// on Postgres): written before the provider is asked, so a repeated request never rings twice.

export interface ProviderCall {
  idempotency_key: string;
  org_id: string;
  provider: string;
  phone_number: string;
  from_number: string | null;
  /** Null until the provider's answer (or its first callback) named the call. */
  provider_call_id: string | null;
  /** How many times the call was requested; above 1, an earlier request may have reached the provider. */
  requests: number;
  requested_at: Date;
}

export interface NewProviderCall {
  idempotency_key: string;
  org_id: string;
  provider: string;
  phone_number: string;
  from_number: string | null;
}

export interface ProviderCallStore {
  /** Stores a new call, or counts one more request for a key already stored; returns the stored call. */
  begin(call: NewProviderCall): Promise<ProviderCall>;
  /** Names the provider's call of a key (kept when already named). */
  placed(provider: string, key: string, providerCallId: string): Promise<void>;
  /** The organization's named calls among `keys` requested before `before`, oldest first, at most `limit`. */
  named(orgId: string, keys: string[], before: Date, limit: number): Promise<ProviderCall[]>;
}
