// Rate limits as the IETF httpapi draft states them (draft-ietf-httpapi-ratelimit-headers): each policy has
// a name, a quota of requests and a window in seconds; an answer says which policies apply
// (`RateLimit-Policy: "key";q=1200;w=60, "org";q=3000;w=60`) and what is left of each
// (`RateLimit: "key";r=1187;t=42, "org";r=2950;t=42`).

export type PolicyName = 'key' | 'org';

export interface RatePolicy {
  name: PolicyName;
  /** Requests allowed in one window. */
  quota: number;
  windowSeconds: number;
}

/** What is left of one policy for one subject, as the `RateLimit` field reports it. */
export interface PolicyState {
  policy: RatePolicy;
  remaining: number;
  /** Seconds until the window ends and the quota is whole again. */
  resetSeconds: number;
}

/** The end of the fixed window `nowMs` falls in: windows are aligned on the epoch, so every process agrees. */
export function windowEndMs(nowMs: number, windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return (Math.floor(nowMs / windowMs) + 1) * windowMs;
}

/** Whole seconds until `endMs`, at least 1 while the window lasts (`t=0` would say the quota is back now). */
export const secondsUntil = (endMs: number, nowMs: number): number => Math.max(1, Math.ceil((endMs - nowMs) / 1000));

/**
 * A lease is at most `leaseMax` requests and at most an eighth of what is left of the quota (at least one):
 * while the quota is far from spent a process reserves whole leases, near its end they shrink, so requests a
 * process reserved but does not serve (its clients went quiet) stay a small part of the quota. The database
 * applies the same rule in its upsert (db/rate-limits.ts); this is its statement for tests and readers.
 */
export const LEASE_SHARE_OF_REMAINING = 8;
export function leaseSize(quota: number, used: number, leaseMax: number): number {
  const remaining = quota - used;
  if (remaining <= 0) return 0;
  return Math.min(leaseMax, remaining, Math.max(1, Math.ceil(remaining / LEASE_SHARE_OF_REMAINING)));
}

/** `RateLimit-Policy`: a structured-field list of the policies that apply. */
export const policyField = (policies: readonly RatePolicy[]): string =>
  policies.map((p) => `"${p.name}";q=${p.quota};w=${p.windowSeconds}`).join(', ');

/** `RateLimit`: a structured-field list of what is left of each policy. */
export const stateField = (states: readonly PolicyState[]): string =>
  states.map((s) => `"${s.policy.name}";r=${Math.max(0, s.remaining)};t=${s.resetSeconds}`).join(', ');

/** The 429's detail: which quota was spent and when it comes back. */
export function exceededDetail(state: PolicyState): string {
  const whose = state.policy.name === 'key' ? 'this credential' : 'this organization';
  return (
    `Rate limit exceeded for ${whose}: ${state.policy.quota} requests per ${state.policy.windowSeconds} s; ` +
    `retry after ${state.resetSeconds} s`
  );
}
