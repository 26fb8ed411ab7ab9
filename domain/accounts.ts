/**
 * The account health formula, a pure function of what the account's rows say (see docs/decisions/crm.md):
 *
 *   recency    0-40  full marks when the latest past activity is at most 7 days old, falling linearly
 *                    to 0 at 90 days; 0 when the account has no past activity
 *   deals      0-30  10 per open deal (any stage but closed_won / closed_lost), at most 3 counted
 *   engagement 0-30  30 x the share of the account's contacts with an activity in the last 90 days;
 *                    0 when the account has no contacts
 *
 * score = round(recency + deals + engagement), always an integer in 0-100.
 */

export interface HealthInputs {
  /** ISO time the inputs were read at (the database's clock). */
  now: string;
  /** ISO effective_time of the latest activity not in the future, or null. */
  lastActivityAt: string | null;
  openDeals: number;
  contacts: number;
  engagedContacts: number;
}

export interface HealthFactors {
  recency: number;
  deals: number;
  engagement: number;
  days_since_last_activity: number | null;
  open_deals: number;
  contacts: number;
  engaged_contacts: number;
}

export const RECENCY_POINTS = 40;
export const DEAL_POINTS = 30;
export const ENGAGEMENT_POINTS = 30;
export const FRESH_DAYS = 7;
export const STALE_DAYS = 90;
export const DEALS_COUNTED = 3;

const DAY_MS = 86_400_000;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const round2 = (x: number) => Math.round(x * 100) / 100;

export function scoreAccountHealth(inputs: HealthInputs): { score: number; factors: HealthFactors } {
  const days = inputs.lastActivityAt === null ? null : Math.max(0, (Date.parse(inputs.now) - Date.parse(inputs.lastActivityAt)) / DAY_MS);
  const recency = days === null ? 0 : RECENCY_POINTS * clamp((STALE_DAYS - days) / (STALE_DAYS - FRESH_DAYS), 0, 1);
  const deals = (DEAL_POINTS * Math.min(Math.max(inputs.openDeals, 0), DEALS_COUNTED)) / DEALS_COUNTED;
  const engagement = inputs.contacts > 0 ? ENGAGEMENT_POINTS * clamp(inputs.engagedContacts / inputs.contacts, 0, 1) : 0;
  return {
    score: clamp(Math.round(recency + deals + engagement), 0, 100),
    factors: {
      recency: round2(recency),
      deals: round2(deals),
      engagement: round2(engagement),
      days_since_last_activity: days === null ? null : round2(days),
      open_deals: inputs.openDeals,
      contacts: inputs.contacts,
      engaged_contacts: inputs.engagedContacts,
    },
  };
}

/** Workflow id of an account's health refresh: one run at a time per account. */

/** The industries an account may name (snake_case); anything else is refused. */
export const ACCOUNT_INDUSTRIES = [
  'agriculture',
  'automotive',
  'construction',
  'consulting',
  'consumer_goods',
  'education',
  'energy',
  'financial_services',
  'government',
  'healthcare',
  'hospitality',
  'insurance',
  'legal',
  'logistics',
  'manufacturing',
  'media',
  'non_profit',
  'pharmaceuticals',
  'real_estate',
  'retail',
  'software',
  'telecommunications',
  'other',
] as const;
export type AccountIndustry = (typeof ACCOUNT_INDUSTRIES)[number];
