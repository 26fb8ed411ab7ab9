import { describe, expect, it } from 'vitest';
import {
  canonicalTimeZone,
  dailyCap,
  isWithinSendingWindow,
  localDay,
  mailboxMove,
  nextWindowOpening,
  warmupToday,
  warmupVolume,
  type SendingWindow,
  type WarmupSettings,
} from '../../domain/outreach/mailboxes';

const mb = (overrides: Partial<SendingWindow> = {}): SendingWindow => ({
  window_start: '09:00',
  window_end: '17:00',
  window_days: [1, 2, 3, 4, 5],
  timezone: 'UTC',
  ...overrides,
});
const at = (iso: string) => new Date(iso);

describe('isWithinSendingWindow', () => {
  it('start is inclusive, end exclusive, on the listed weekdays only', () => {
    // 2030-01-07 is a Monday.
    expect(isWithinSendingWindow(mb(), at('2030-01-07T09:00:00Z'))).toBe(true);
    expect(isWithinSendingWindow(mb(), at('2030-01-07T08:59:59Z'))).toBe(false);
    expect(isWithinSendingWindow(mb(), at('2030-01-07T16:59:59Z'))).toBe(true);
    expect(isWithinSendingWindow(mb(), at('2030-01-07T17:00:00Z'))).toBe(false);
    expect(isWithinSendingWindow(mb(), at('2030-01-12T10:00:00Z'))).toBe(false); // Saturday
    expect(isWithinSendingWindow(mb({ window_days: [6] }), at('2030-01-12T10:00:00Z'))).toBe(true);
  });

  it("reads the clock in the mailbox's zone", () => {
    const ny = mb({ timezone: 'America/New_York' });
    // 14:00Z on a January Monday is 09:00 in New York (UTC-5).
    expect(isWithinSendingWindow(ny, at('2030-01-07T14:00:00Z'))).toBe(true);
    expect(isWithinSendingWindow(ny, at('2030-01-07T13:59:00Z'))).toBe(false);
    // In July New York is UTC-4: 13:00Z is 09:00.
    expect(isWithinSendingWindow(ny, at('2030-07-08T13:00:00Z'))).toBe(true);
    // The weekday is the local one: Tuesday 02:00Z is still Monday 21:00 in New York.
    expect(
      isWithinSendingWindow(
        mb({ timezone: 'America/New_York', window_start: '20:00', window_end: '24:00', window_days: [1] }),
        at('2030-01-08T02:00:00Z'),
      ),
    ).toBe(true);
  });

  it('24:00 closes the window at midnight', () => {
    const late = mb({ window_start: '00:00', window_end: '24:00', window_days: [1, 2, 3, 4, 5, 6, 7] });
    expect(isWithinSendingWindow(late, at('2030-01-07T23:59:59Z'))).toBe(true);
    expect(isWithinSendingWindow(late, at('2030-01-07T00:00:00Z'))).toBe(true);
  });
});

describe('nextWindowOpening', () => {
  it('is the instant itself inside the window', () => {
    expect(nextWindowOpening(mb(), at('2030-01-07T10:00:00Z')).toISOString()).toBe('2030-01-07T10:00:00.000Z');
  });

  it('is the same day’s opening before it, the next working day’s after it', () => {
    expect(nextWindowOpening(mb(), at('2030-01-07T06:00:00Z')).toISOString()).toBe('2030-01-07T09:00:00.000Z');
    expect(nextWindowOpening(mb(), at('2030-01-07T17:00:00Z')).toISOString()).toBe('2030-01-08T09:00:00.000Z');
    // Friday evening → Monday morning.
    expect(nextWindowOpening(mb(), at('2030-01-11T18:00:00Z')).toISOString()).toBe('2030-01-14T09:00:00.000Z');
  });

  it('is DST-correct: the opening keeps its local time across a clock change', () => {
    const ny = mb({ timezone: 'America/New_York' });
    // 2030-03-10 (Sunday) is the spring-forward day in the US: Friday 8th opens at 14:00Z, Monday 11th at 13:00Z.
    expect(nextWindowOpening(ny, at('2030-03-08T23:00:00Z')).toISOString()).toBe('2030-03-11T13:00:00.000Z');
    const paris = mb({ timezone: 'Europe/Paris' });
    // 2030-10-27 (Sunday) Paris falls back: Friday 25th opens at 07:00Z (UTC+2), Monday 28th at 08:00Z (UTC+1).
    expect(nextWindowOpening(paris, at('2030-10-25T06:00:00Z')).toISOString()).toBe('2030-10-25T07:00:00.000Z');
    expect(nextWindowOpening(paris, at('2030-10-25T16:00:00Z')).toISOString()).toBe('2030-10-28T08:00:00.000Z');
  });

  it('an opening inside a skipped hour moves forward with the clock', () => {
    // 2030-03-10 02:30 does not exist in New York: the window opens at 03:30 EDT (07:30Z).
    const ny = mb({ timezone: 'America/New_York', window_start: '02:30', window_end: '05:00', window_days: [7] });
    expect(nextWindowOpening(ny, at('2030-03-10T05:00:00Z')).toISOString()).toBe('2030-03-10T07:30:00.000Z');
  });

  it('a repeated hour opens at its first occurrence', () => {
    // 2030-11-03 01:30 happens twice in New York; the first is 05:30Z (EDT).
    const ny = mb({ timezone: 'America/New_York', window_start: '01:30', window_end: '03:00', window_days: [7] });
    expect(nextWindowOpening(ny, at('2030-11-03T03:00:00Z')).toISOString()).toBe('2030-11-03T05:30:00.000Z');
  });

  it('every answer is inside the window, and never before the asked instant', () => {
    const zones = ['UTC', 'America/New_York', 'Europe/Paris', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];
    for (const timezone of zones) {
      const w = mb({ timezone, window_start: '08:15', window_end: '11:45', window_days: [2, 4, 7] });
      for (let t = Date.UTC(2030, 2, 1); t < Date.UTC(2030, 3, 15); t += 3 * 3_600_000 + 17 * 60_000) {
        const next = nextWindowOpening(w, new Date(t));
        expect(next.getTime()).toBeGreaterThanOrEqual(t);
        expect(isWithinSendingWindow(w, next)).toBe(true);
        expect(next.getTime() - t).toBeLessThan(8 * 86_400_000);
      }
    }
  });
});

describe('localDay', () => {
  it("is the calendar day in the mailbox's zone", () => {
    expect(localDay({ timezone: 'UTC' }, at('2030-01-07T23:30:00Z'))).toBe('2030-01-07');
    expect(localDay({ timezone: 'Asia/Tokyo' }, at('2030-01-07T23:30:00Z'))).toBe('2030-01-08');
    expect(localDay({ timezone: 'America/Los_Angeles' }, at('2030-01-07T03:00:00Z'))).toBe('2030-01-06');
  });
});

describe('time zones and moves', () => {
  it('canonicalizes IANA names and refuses others', () => {
    expect(canonicalTimeZone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    for (const bad of ['Mars/Olympus', '+01:00', '', 'Europe/Paris; DROP', '../etc']) expect(canonicalTimeZone(bad), bad).toBeNull();
  });

  it('pause only from active, resume only from paused', () => {
    expect(mailboxMove('active', 'pause')).toBe('paused');
    expect(mailboxMove('paused', 'pause')).toBeNull();
    expect(mailboxMove('paused', 'resume')).toBe('active');
    expect(mailboxMove('active', 'resume')).toBeNull();
  });
});

describe('warm-up', () => {
  it('ramps in a straight line from the start volume on day 1 to the daily limit on the last day', () => {
    const ramp = Array.from({ length: 16 }, (_, i) => warmupVolume(i + 1, 5, 14, 50));
    expect(ramp[0]).toBe(5);
    expect(ramp[13]).toBe(50);
    expect(ramp.slice(13)).toEqual([50, 50, 50]);
    // 5 + 45 × (day − 1) / 13, rounded down.
    expect(ramp.slice(0, 5)).toEqual([5, 8, 11, 15, 18]);
    for (let i = 1; i < ramp.length; i++) expect(ramp[i]).toBeGreaterThanOrEqual(ramp[i - 1]!);
    for (const v of ramp) expect(v).toBeLessThanOrEqual(50);
  });

  it('never exceeds the limit, whatever the start; one day means no ramp', () => {
    expect(warmupVolume(1, 80, 10, 50)).toBe(50);
    expect(warmupVolume(5, 80, 10, 50)).toBe(50);
    expect(warmupVolume(1, 5, 1, 50)).toBe(50);
    expect(warmupVolume(2, 1, 4, 4)).toBe(2);
    expect(warmupVolume(0, 5, 14, 50)).toBe(5);
  });

  const mailbox = (overrides: Partial<WarmupSettings> = {}): WarmupSettings => ({
    timezone: 'UTC',
    daily_limit: 40,
    warmup_enabled: true,
    warmup_started_at: at('2030-01-07T15:00:00Z'),
    warmup_start_per_day: 4,
    warmup_days: 10,
    ...overrides,
  });

  it("counts the mailbox's local calendar days from the one warm-up started on", () => {
    expect(warmupToday(mailbox(), at('2030-01-07T23:59:00Z'))).toEqual({ day: 1, volume: 4, complete: false });
    expect(warmupToday(mailbox(), at('2030-01-08T00:00:00Z'))).toEqual({ day: 2, volume: 8, complete: false });
    expect(warmupToday(mailbox(), at('2030-01-16T09:00:00Z'))).toEqual({ day: 10, volume: 40, complete: true });
    expect(warmupToday(mailbox(), at('2030-03-01T09:00:00Z'))).toMatchObject({ volume: 40, complete: true });
    // In Tokyo (UTC+9) 15:00Z on the 7th is already the 8th: day 2 begins at 15:00Z that day.
    const tokyo = mailbox({ timezone: 'Asia/Tokyo', warmup_started_at: at('2030-01-07T14:00:00Z') });
    expect(warmupToday(tokyo, at('2030-01-07T14:59:00Z'))?.day).toBe(1);
    expect(warmupToday(tokyo, at('2030-01-07T15:00:00Z'))?.day).toBe(2);
    // A start stamped by a clock ahead of this one is day 1, never day 0.
    expect(warmupToday(mailbox(), at('2030-01-06T10:00:00Z'))?.day).toBe(1);
  });

  it('caps a day at the warm-up volume while on, at the daily limit when off', () => {
    expect(dailyCap(mailbox(), at('2030-01-09T10:00:00Z'))).toBe(12);
    expect(dailyCap(mailbox({ warmup_enabled: false, warmup_started_at: null }), at('2030-01-09T10:00:00Z'))).toBe(40);
    expect(warmupToday(mailbox({ warmup_enabled: false }), at('2030-01-09T10:00:00Z'))).toBeNull();
    // A lowered limit lowers the ramp with it.
    expect(dailyCap(mailbox({ daily_limit: 3 }), at('2030-01-07T16:00:00Z'))).toBe(3);
  });
});
