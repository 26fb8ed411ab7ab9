// Workflow credentials: refresh policies, the refresh lock and what a value's entries hold. Pure rules,
// shared by the API, the services, the refresh workflow and its activities.

/** The built-in refreshers, by their fixed ids: every organization may name them. */
export const REFRESHER_IDS = {
  oauth2_refresh_token: '0190f5a0-0000-7000-8000-000000000001',
  oauth2_client_credentials: '0190f5a0-0000-7000-8000-000000000002',
  http_json: '0190f5a0-0000-7000-8000-000000000003',
} as const;
export type RefresherKind = keyof typeof REFRESHER_IDS;

export const refresherKindOf = (id: string): RefresherKind | undefined =>
  (Object.entries(REFRESHER_IDS) as [RefresherKind, string][]).find(([, v]) => v === id)?.[0];

export const REFRESH_POLICY_TYPES = ['manual', 'interval', 'cron', 'before_expiry'] as const;
export type RefreshPolicyType = (typeof REFRESH_POLICY_TYPES)[number];

export type RefreshPolicy =
  | { type: 'manual' }
  | { type: 'interval'; every_seconds: number; paused?: boolean }
  | { type: 'cron'; expression: string; timezone: string; paused?: boolean }
  | { type: 'before_expiry'; lead_seconds: number; check_every_seconds?: number; paused?: boolean };

export const LAST_REFRESH_STATUSES = ['success', 'failed', 'running'] as const;
export type LastRefreshStatus = (typeof LAST_REFRESH_STATUSES)[number];

/** Shortest interval a schedule may fire at. */
export const MIN_INTERVAL_SECONDS = 60;

/** How long one refresh may hold the lock; it is released earlier when the refresh ends either way. */
export const REFRESH_LOCK_SECONDS = 120;

export const hasSchedule = (policy: RefreshPolicy): boolean => policy.type !== 'manual';
export const isPaused = (policy: RefreshPolicy): boolean => policy.type !== 'manual' && policy.paused === true;

/**
 * How often a before-expiry schedule looks at the credential: a quarter of the lead time, between one
 * minute and fifteen, unless the policy says. The run refreshes only once `expires_at - lead` has passed.
 */
export function expiryCheckSeconds(policy: { lead_seconds: number; check_every_seconds?: number }): number {
  if (policy.check_every_seconds) return policy.check_every_seconds;
  return Math.min(900, Math.max(MIN_INTERVAL_SECONDS, Math.floor(policy.lead_seconds / 4)));
}

/** True when a before-expiry policy wants a refresh now (no expiry known counts as due). */
export function isDue(policy: RefreshPolicy, expiresAt: Date | null, now: Date): boolean {
  if (policy.type !== 'before_expiry') return true;
  if (!expiresAt) return true;
  return expiresAt.getTime() - policy.lead_seconds * 1000 <= now.getTime();
}

/** What triggered a refresh run. */
export type RefreshTrigger = 'manual' | 'schedule';

export interface RefreshRunInput {
  orgId: string;
  credentialId: string;
  trigger: RefreshTrigger;
}

export type RefreshOutcome =
  | { status: 'success'; expires_at: string | null }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; reason: 'locked' | 'not_due' | 'missing' | 'no_refresher' };

/** One entry of `secrets`: what a key of the value holds, never the value. */
export interface SecretEntry {
  key: string;
  type: 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';
  description: string;
  source: 'input' | 'refresh';
  updated_at: string;
}

const KNOWN_KEYS: Record<string, string> = {
  access_token: 'OAuth 2.0 access token',
  refresh_token: 'OAuth 2.0 refresh token',
  id_token: 'OpenID Connect ID token',
  token_type: 'OAuth 2.0 token type',
  scope: 'granted OAuth 2.0 scopes',
  client_id: 'OAuth 2.0 client identifier',
  client_secret: 'OAuth 2.0 client secret',
  api_key: 'API key',
  password: 'password',
  username: 'user name',
  token: 'bearer token',
};

const typeOf = (v: unknown): SecretEntry['type'] =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as 'string' | 'number' | 'boolean' | 'object');

/**
 * The `secrets` description after a write: keys the write brought take its source and time, keys it
 * kept keep their earlier entry.
 */
export function describeSecrets(
  value: Record<string, unknown>,
  written: readonly string[],
  source: SecretEntry['source'],
  at: Date,
  before: readonly SecretEntry[] = [],
): SecretEntry[] {
  const previous = new Map(before.map((e) => [e.key, e]));
  const fresh = new Set(written);
  return Object.keys(value)
    .sort()
    .map((key) => {
      const old = previous.get(key);
      if (old && !fresh.has(key) && old.type === typeOf(value[key])) return old;
      return { key, type: typeOf(value[key]), description: KNOWN_KEYS[key] ?? 'custom entry', source, updated_at: at.toISOString() };
    });
}
