import type { NewProviderCall, ProviderCall, ProviderCallStore } from '../platform/adapters/dialers/call-store';
import type { Db } from './client';

// The provider dialers' calls (platform/adapters/dialers/call-store.ts), one row per attempt key.

export async function beginProviderCall(db: Db, c: NewProviderCall): Promise<ProviderCall> {
  const [row] = await db<ProviderCall[]>`
    INSERT INTO dialer_provider_calls (idempotency_key, org_id, provider, phone_number, from_number)
    VALUES (${c.idempotency_key}, ${c.org_id}, ${c.provider}, ${c.phone_number}, ${c.from_number})
    ON CONFLICT (idempotency_key) DO UPDATE SET requests = dialer_provider_calls.requests + 1
    RETURNING idempotency_key, org_id, provider, phone_number, from_number, provider_call_id, requests, requested_at`;
  return row!;
}

/** Names the provider call of a key; a key already named keeps its call. */
export async function markProviderCallPlaced(db: Db, provider: string, key: string, providerCallId: string): Promise<void> {
  await db`
    UPDATE dialer_provider_calls SET provider_call_id = ${providerCallId}, placed_at = now()
    WHERE idempotency_key = ${key} AND provider = ${provider} AND provider_call_id IS NULL`;
}

export async function namedProviderCalls(db: Db, orgId: string, keys: string[], before: Date, limit: number): Promise<ProviderCall[]> {
  if (!keys.length) return [];
  return db<ProviderCall[]>`
    SELECT idempotency_key, org_id, provider, phone_number, from_number, provider_call_id, requests, requested_at FROM dialer_provider_calls
    WHERE org_id = ${orgId} AND idempotency_key = ANY(${keys}::text[]) AND provider_call_id IS NOT NULL AND requested_at < ${before}
    ORDER BY requested_at
    LIMIT ${limit}`;
}

/** The provider dialers' store, on this connection pool. */
export const providerCallStore = (db: Db): ProviderCallStore => ({
  begin: (call) => beginProviderCall(db, call),
  placed: (provider, key, id) => markProviderCallPlaced(db, provider, key, id),
  named: (orgId, keys, before, limit) => namedProviderCalls(db, orgId, keys, before, limit),
});

/**
 * The organization and current status of a campaign call, by its attempt key: the one lookup across
 * organizations, for a provider callback (signed for the deployment's account) that names no organization.
 */
export async function callByKey(db: Db, key: string): Promise<{ org_id: string; status: string } | undefined> {
  const [row]: [{ org_id: string; status: string }?] = await db`
    SELECT org_id, status FROM conversations WHERE idempotency_key = ${key} AND campaign_id IS NOT NULL`;
  return row;
}
