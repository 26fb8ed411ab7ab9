// Mailbox rules: the sending window in the mailbox's own time zone, the local day daily limits count
// against, and the pause/resume moves. Pure: time-zone arithmetic through Intl only, so workflow code
// may call it too.

export type MailboxStatus = 'active' | 'paused';
export type MailboxKind = 'smtp' | 'simulated';
export type MailboxOutcome = 'bounce' | 'failure';

/** Local wall-clock window: `HH:MM` start (inclusive) and end (exclusive, `24:00` allowed), ISO weekdays 1 (Mon) to 7 (Sun). */
export interface SendingWindow {
  window_start: string;
  window_end: string;
  window_days: number[];
  timezone: string;
}

export const DEFAULT_WINDOW = { window_start: '09:00', window_end: '17:00', window_days: [1, 2, 3, 4, 5], timezone: 'UTC' } as const;
export const DAILY_LIMIT_MIN = 1;
export const DAILY_LIMIT_MAX = 2000;
export const DEFAULT_DAILY_LIMIT = 50;

export const WINDOW_START = /^([01]\d|2[0-3]):[0-5]\d$/;
export const WINDOW_END = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;

/** The moves of pause/resume: a mailbox already in the target state is a conflict (409). */
export const MAILBOX_MOVES: Record<'pause' | 'resume', { from: MailboxStatus; to: MailboxStatus }> = {
  pause: { from: 'active', to: 'paused' },
  resume: { from: 'paused', to: 'active' },
};

export function mailboxMove(status: MailboxStatus, move: 'pause' | 'resume'): MailboxStatus | null {
  const rule = MAILBOX_MOVES[move];
  return status === rule.from ? rule.to : null;
}

// --- Time zones ----------------------------------------------------------------------------------

const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** The canonical spelling of an IANA zone name (`europe/paris` → `Europe/Paris`), or null when Intl does not know it. */
export function canonicalTimeZone(zone: string): string | null {
  if (!IANA_SHAPE.test(zone) || zone.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export const isValidTimeZone = (zone: string): boolean => canonicalTimeZone(zone) !== null;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

interface Local {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function local(zone: string, at: Date): Local {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! % 24, minute: parts.minute!, second: parts.second! };
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetMs(zone: string, at: number): number {
  const l = local(zone, new Date(at));
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/**
 * The instant of a local wall-clock time. A time skipped by a daylight-saving jump moves forward with
 * the clock (02:30 on a spring-forward night is 03:30); a repeated time is its first occurrence.
 */
function instantOf(zone: string, year: number, month: number, day: number, minutes: number): number {
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  const candidates = [
    ...new Set([wall - offsetMs(zone, wall - 86_400_000), wall - offsetMs(zone, wall + 86_400_000), wall - offsetMs(zone, wall)]),
  ];
  const exact = candidates.filter((t) => {
    const l = local(zone, new Date(t));
    return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute) === wall;
  });
  return exact.length > 0 ? Math.min(...exact) : Math.max(...candidates);
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
/** ISO weekday (1 Mon … 7 Sun) of a calendar date. */
const weekdayOf = (year: number, month: number, day: number): number =>
  ((new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7) + 1;

/** The mailbox's local calendar day at an instant, `YYYY-MM-DD`: the day its daily limit counts against. */
export function localDay(mb: Pick<SendingWindow, 'timezone'>, at: Date): string {
  const l = local(mb.timezone, at);
  return `${String(l.year).padStart(4, '0')}-${String(l.month).padStart(2, '0')}-${String(l.day).padStart(2, '0')}`;
}

export function isWithinSendingWindow(mb: SendingWindow, at: Date): boolean {
  const l = local(mb.timezone, at);
  const minute = l.hour * 60 + l.minute;
  return (
    mb.window_days.includes(weekdayOf(l.year, l.month, l.day)) && minute >= minutesOf(mb.window_start) && minute < minutesOf(mb.window_end)
  );
}

/**
 * The first instant at or after `after` inside the sending window: `after` itself when the window is
 * open, otherwise the next opening in the mailbox's zone (an opening in a daylight-saving gap moves
 * forward with the clock).
 */
export function nextWindowOpening(mb: SendingWindow, after: Date): Date {
  if (isWithinSendingWindow(mb, after)) return after;
  const today = local(mb.timezone, after);
  const start = minutesOf(mb.window_start);
  for (let offset = 0; offset <= 8; offset++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    if (!mb.window_days.includes(weekdayOf(y, m, d))) continue;
    const opening = new Date(instantOf(mb.timezone, y, m, d, start));
    if (opening.getTime() > after.getTime() && isWithinSendingWindow(mb, opening)) return opening;
  }
  throw new Error(`sending window ${mb.window_start}-${mb.window_end} on days ${mb.window_days.join(',')} never opens in ${mb.timezone}`);
}

// --- Addresses -----------------------------------------------------------------------------------

/** The domain part of an address, lower-cased. */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

// --- Warm-up -------------------------------------------------------------------------------------

export const WARMUP_START_PER_DAY_DEFAULT = 5;
export const WARMUP_DAYS_DEFAULT = 14;
export const WARMUP_DAYS_MIN = 1;
export const WARMUP_DAYS_MAX = 90;

/** What the warm-up ramp of a mailbox depends on. */
export interface WarmupSettings extends Pick<SendingWindow, 'timezone'> {
  daily_limit: number;
  warmup_enabled: boolean;
  /** When warm-up was last switched on; null on a row that predates it (counted from `now`, day 1). */
  warmup_started_at: Date | null;
  warmup_start_per_day: number;
  warmup_days: number;
}

export interface WarmupToday {
  /** 1 on the local day warm-up started, 2 the next, …; past `days` the ramp is over. */
  day: number;
  /** What the ramp allows today (never above the daily limit). */
  volume: number;
  complete: boolean;
}

/**
 * The volume of warm-up day `day`: `startPerDay` on day 1, rising in a straight line to the daily limit
 * on day `days`, then the limit; rounded down, so a day never sends more than the line allows. A start
 * above the limit is the limit.
 */
export function warmupVolume(day: number, startPerDay: number, days: number, dailyLimit: number): number {
  const start = Math.min(startPerDay, dailyLimit);
  if (day >= days) return dailyLimit;
  if (day <= 1) return start;
  return Math.floor(start + ((dailyLimit - start) * (day - 1)) / (days - 1));
}

/** Calendar days from one `YYYY-MM-DD` to another. */
const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/**
 * Where a mailbox stands in its warm-up at `now`, or null when warm-up is off. Days are the mailbox's
 * local calendar days (those its daily limit counts against), from the one warm-up started on; a start
 * in the future (another clock) counts as day 1.
 */
export function warmupToday(mb: WarmupSettings, now: Date): WarmupToday | null {
  if (!mb.warmup_enabled) return null;
  const started = mb.warmup_started_at ?? now;
  const day = Math.max(1, daysBetween(localDay(mb, started), localDay(mb, now)) + 1);
  return { day, volume: warmupVolume(day, mb.warmup_start_per_day, mb.warmup_days, mb.daily_limit), complete: day >= mb.warmup_days };
}

/** The most a mailbox may send on its local day at `now`: its daily limit, or the warm-up volume while that is lower. */
export function dailyCap(mb: WarmupSettings, now: Date): number {
  return warmupToday(mb, now)?.volume ?? mb.daily_limit;
}

/**
 * The pause after a send before the same mailbox sends again: a whole number of seconds drawn evenly
 * from [min, max] (`random` in [0, 1)), so a mailbox never sends in bursts or on a fixed beat.
 */
export function sendGapSeconds(gap: { send_gap_min_seconds: number; send_gap_max_seconds: number }, random: number): number {
  const min = Math.max(0, gap.send_gap_min_seconds);
  const max = Math.max(min, gap.send_gap_max_seconds);
  return min + Math.min(max - min, Math.floor(random * (max - min + 1)));
}
