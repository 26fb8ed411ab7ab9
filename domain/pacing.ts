// Dial pacing: how fast the dispatcher may start calls, beside how many may be in flight. Pure rules; the
// reservations live in Postgres (db/dial-pacing.ts) and the waiting in services/campaigns/pacing.ts.

/** Bounds an organization may set: calls started per second through its account, and through one caller number. */
export const CALLS_PER_SECOND_MAX = 100;
export const CALLS_PER_SECOND_PER_NUMBER_MAX = 10;

export interface Pacing {
  callsPerSecond: number;
  callsPerSecondPerNumber: number;
}

/** Seconds of calls one claim takes at most: the dial that follows places them within about this long. */
export const CLAIM_HORIZON_SECONDS = 30;

/** How long one dial keeps placing calls before it leaves the rest to the next cycle (a slow number's queue). */
export const DIAL_BUDGET_MS = 60_000;

/** Contacts one claim may take at the account's pace. */
export const pacedClaimBudget = (pacing: Pacing): number => Math.max(1, Math.ceil(pacing.callsPerSecond * CLAIM_HORIZON_SECONDS));

/** The gap between two calls at `perSecond`, in milliseconds (fractional: 3 per second is 333.333 ms). */
export const intervalMs = (perSecond: number): number => 1000 / perSecond;

export const ACCOUNT_SCOPE = 'account';

/** A caller number's scope; without one the account's default caller id (`number:`). */
export const numberScope = (from: string | null | undefined): string => `number:${from ?? ''}`;
