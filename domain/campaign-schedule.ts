import { DateTime, IANAZone } from 'luxon';
import type { CallOutcome, ContactState } from './campaigns';

// When a campaign contact may be called: pure functions of time, zone and settings, used by the
// dispatch activities and the API's checks (never by workflow code, which stays free of time-zone data).

/** Local wall-clock window: `HH:MM` start (inclusive) and end (exclusive, `24:00` allowed), ISO weekdays 1 (Mon) to 7 (Sun). */
export interface CallingWindow {
  start: string;
  end: string;
  days: number[];
}

export const DEFAULT_CALLING_WINDOW: CallingWindow = { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5] };

/** Longest wait between two attempts, whatever the base. */
export const MAX_BACKOFF_SECONDS = 86_400;

export type { CallOutcome, ContactState };

export const isValidTimeZone = (zone: string): boolean => IANAZone.isValidZone(zone);

export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

export function isInWindow(at: Date, timezone: string, window: CallingWindow): boolean {
  const local = DateTime.fromJSDate(at, { zone: timezone });
  const minute = local.hour * 60 + local.minute;
  return window.days.includes(local.weekday) && minute >= minutesOf(window.start) && minute < minutesOf(window.end);
}

/**
 * The first instant at or after `from` inside the window, reckoned in the contact's own zone: a
 * window opening that falls in a daylight-saving gap moves forward with the clock.
 */
export function nextWindowOpening(from: Date, timezone: string, window: CallingWindow): Date {
  if (isInWindow(from, timezone, window)) return from;
  const local = DateTime.fromJSDate(from, { zone: timezone });
  const start = minutesOf(window.start);
  for (let day = 0; day <= 8; day++) {
    const date = local.startOf('day').plus({ days: day });
    if (!window.days.includes(date.weekday)) continue;
    const opening = date.set({ hour: Math.floor(start / 60), minute: start % 60, second: 0, millisecond: 0 });
    if (opening > local && isInWindow(opening.toJSDate(), timezone, window)) return opening.toJSDate();
  }
  throw new Error(`calling window ${JSON.stringify(window)} never opens in ${timezone}`);
}

/** Wait after failed attempt `attempt` (1-based): the base doubled per attempt, capped. */
export function retryDelaySeconds(attempt: number, baseSeconds: number): number {
  return Math.min(baseSeconds * 2 ** Math.max(0, attempt - 1), Math.max(baseSeconds, MAX_BACKOFF_SECONDS));
}

export function retryAt(now: Date, attempt: number, baseSeconds: number): Date {
  return new Date(now.getTime() + retryDelaySeconds(attempt, baseSeconds) * 1000);
}

/**
 * A contact's state once attempt `attempt` ended with `outcome`: answered calls complete it; on a
 * canceled campaign it stops; otherwise it waits for another attempt until `maxAttempts` are spent.
 */
export function stateAfterOutcome(
  outcome: CallOutcome,
  attempt: number,
  maxAttempts: number,
  campaignStatus: string,
): Exclude<ContactState, 'calling'> {
  if (outcome === 'completed') return 'completed';
  if (campaignStatus === 'canceled') return 'canceled';
  return attempt >= maxAttempts ? 'failed' : 'pending';
}

/** Attempts rotate through a contact's numbers: the first attempt calls the first number. */
export function numberForAttempt(phoneNumbers: string[], attempt: number): string {
  return phoneNumbers[(attempt - 1) % phoneNumbers.length]!;
}

/** `<campaign_id>:<contact_id>:<attempt>`: one key per attempt, for the dialer and the conversation row. */
export const attemptKey = (campaignId: string, contactId: string, attempt: number): string => `${campaignId}:${contactId}:${attempt}`;

const KEY = /^([0-9a-f-]{36}):([0-9a-f-]{36}):([1-9]\d{0,3})$/;

export function parseAttemptKey(key: string): { campaignId: string; contactId: string; attempt: number } | null {
  const m = KEY.exec(key);
  return m ? { campaignId: m[1]!, contactId: m[2]!, attempt: Number(m[3]) } : null;
}
