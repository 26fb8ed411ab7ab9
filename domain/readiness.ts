// Account readiness: three separate axes (fit, engagement, timing), each a 0-100 score with the
// signals that made it, and one label derived from them by a fixed rule.

export const READINESS_LABELS = ['hot', 'warm', 'nurture', 'not_a_fit', 'unknown_fit'] as const;
export type ReadinessLabel = (typeof READINESS_LABELS)[number];

export interface Signal {
  name: string;
  /** What was observed (a count, a date, a stage), as the reader would say it. */
  value: string | number | null;
  points: number;
  max: number;
}

export interface Axis {
  score: number;
  /** One line saying what earned the score, the biggest contributions first. */
  reason: string;
  signals: Signal[];
}

/** The fit axis: the ICP score (null when it cannot be scored), with one signal per criterion. */
export interface FitAxis {
  score: number | null;
  /** One line: which criteria matched and missed, or why there is no score. */
  reason: string;
  grade: 'A' | 'B' | 'C' | 'D' | null;
  confidence: number | null;
  signals: (Signal & {
    criterion?: { values: string[]; exclude: boolean };
    evidence?: { value: string; source: string; confidence: number }[];
  })[];
}

/** Accounts one nightly activity refreshes; pages before the nightly run continues as new. */
export const NIGHTLY_PAGE_SIZE = 200;
export const NIGHTLY_PAGES_PER_RUN = 20;

const DAY = 86_400_000;
const daysSince = (now: Date, at: Date | null) => (at ? (now.getTime() - at.getTime()) / DAY : null);
const label = (name: string) => name.replace(/_(\d+)d$/, ' ($1 days)').replace(/_/g, ' ');
/** "62/100: last activity 40/40, activities (30 days) 15/25"; signals that earned nothing are left out. */
export function axisReason(score: number, signals: Signal[]): string {
  const earned = signals.filter((s) => s.points > 0).sort((a, b) => b.points - a.points);
  if (earned.length === 0) return `${score}/100: no signal earned points`;
  return `${score}/100: ${earned.map((s) => `${label(s.name)} ${s.points}/${s.max}`).join(', ')}`;
}
const axis = (signals: Signal[]): Axis => {
  const score = Math.min(
    100,
    signals.reduce((s, x) => s + x.points, 0),
  );
  return { score, reason: axisReason(score, signals), signals };
};

/** The fit axis's line: matched and missed criteria, unknown ones, or why nothing was scored. */
export function fitReason(
  score: number | null,
  breakdown: { type: string; result: 'matched' | 'missed' | 'unknown'; exclude: boolean }[] | null,
): string {
  if (breakdown === null) return 'No default ICP profile: fit is not scored';
  const of = (result: string, exclude = false) =>
    breakdown
      .filter((b) => b.result === result && b.exclude === exclude)
      .map((b) => b.type)
      .join(', ');
  const parts = [
    of('matched', true) && `excluded by ${of('matched', true)}`,
    of('matched') && `matched ${of('matched')}`,
    of('missed') && `missed ${of('missed')}`,
    of('unknown') && `unknown ${of('unknown')}`,
  ].filter(Boolean);
  if (score === null) return `Too few facts to score (${parts.join('; ') || 'nothing known'})`;
  return `${score}/100: ${parts.join('; ')}`;
}

export interface EngagementInputs {
  now: Date;
  lastActivityAt: Date | null;
  activities30d: number;
  emailReplies90d: number;
  meetings90d: number;
  /** Calls that reached someone (a call activity, or a campaign call completed) in the last 90 days. */
  connectedCalls90d: number;
  /** Campaign call attempts that reached no one (no answer, busy, failed) in the last 90 days. */
  unansweredCalls90d: number;
}

/**
 * recency 40 (≤7 days 40, ≤30 days 25, ≤90 days 10) + frequency 25 (5 per activity in 30 days)
 * + replies 15 (7.5 per email reply in 90 days) + meetings 10 (any in 90 days) + calls 10 (a
 * connected call in 90 days). Unanswered campaign calls are shown, and earn nothing.
 */
export function engagementAxis(i: EngagementInputs): Axis {
  const days = daysSince(i.now, i.lastActivityAt);
  const recency = days === null ? 0 : days <= 7 ? 40 : days <= 30 ? 25 : days <= 90 ? 10 : 0;
  return axis([
    { name: 'last_activity', value: i.lastActivityAt?.toISOString() ?? null, points: recency, max: 40 },
    { name: 'activities_30d', value: i.activities30d, points: Math.min(25, i.activities30d * 5), max: 25 },
    { name: 'email_replies_90d', value: i.emailReplies90d, points: Math.min(15, Math.round(i.emailReplies90d * 7.5)), max: 15 },
    { name: 'meetings_90d', value: i.meetings90d, points: i.meetings90d > 0 ? 10 : 0, max: 10 },
    { name: 'connected_calls_90d', value: i.connectedCalls90d, points: i.connectedCalls90d > 0 ? 10 : 0, max: 10 },
    { name: 'unanswered_calls_90d', value: i.unansweredCalls90d, points: 0, max: 0 },
  ]);
}

const STAGE_POINTS: Record<string, number> = { prospecting: 10, qualification: 18, proposal: 28, negotiation: 35 };

export interface TimingInputs {
  now: Date;
  /** Stages of the account's open deals. */
  openDealStages: string[];
  /** When an open deal last changed (its stage or anything else). */
  lastDealChangeAt: Date | null;
  openTasksDueSoon: number;
  openTasks: number;
  /** When research last found facts for the account. */
  lastResearchAt: Date | null;
}

/**
 * stage 35 (furthest open deal: negotiation 35, proposal 28, qualification 18, prospecting 10)
 * + movement 25 (an open deal changed within 14 days; 12 within 30) + tasks 20 (an open task due
 * within 14 days; 10 for open tasks further out) + research 20 (new facts within 30 days).
 */
export function timingAxis(i: TimingInputs): Axis {
  const stage = Math.max(0, ...i.openDealStages.map((s) => STAGE_POINTS[s] ?? 0));
  const furthest = i.openDealStages.find((s) => (STAGE_POINTS[s] ?? 0) === stage && stage > 0) ?? null;
  const moved = daysSince(i.now, i.lastDealChangeAt);
  const researched = daysSince(i.now, i.lastResearchAt);
  return axis([
    { name: 'furthest_open_stage', value: furthest, points: stage, max: 35 },
    {
      name: 'last_deal_change',
      value: i.lastDealChangeAt?.toISOString() ?? null,
      points: moved === null ? 0 : moved <= 14 ? 25 : moved <= 30 ? 12 : 0,
      max: 25,
    },
    { name: 'open_tasks', value: i.openTasks, points: i.openTasksDueSoon > 0 ? 20 : i.openTasks > 0 ? 10 : 0, max: 20 },
    {
      name: 'last_research',
      value: i.lastResearchAt?.toISOString() ?? null,
      points: researched !== null && researched <= 30 ? 20 : 0,
      max: 20,
    },
  ]);
}

/**
 * The label, from the three axes (fit null: no default ICP profile, or nothing known to score):
 * unknown_fit when fit is null; not_a_fit below 40; hot when fit ≥ 60, engagement ≥ 50 and timing
 * ≥ 40; warm when fit ≥ 60 and engagement or timing ≥ 30; nurture otherwise.
 */
export function readinessLabel(fit: number | null, engagement: number, timing: number): ReadinessLabel {
  if (fit === null) return 'unknown_fit';
  if (fit < 40) return 'not_a_fit';
  if (fit >= 60 && engagement >= 50 && timing >= 40) return 'hot';
  if (fit >= 60 && (engagement >= 30 || timing >= 30)) return 'warm';
  return 'nurture';
}
