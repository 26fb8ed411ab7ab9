import { describe, expect, it } from 'vitest';
import { nextSend, type SenderMailbox } from '../../domain/outreach/next-send';

// 2026-12-02 is a Wednesday (ISO day 3).
const now = new Date('2026-12-02T10:00:00Z');
const mailbox = (over: Partial<SenderMailbox> = {}): SenderMailbox => ({
  id: 'mb',
  status: 'active',
  window_start: '09:00',
  window_end: '17:00',
  window_days: [1, 2, 3, 4, 5],
  timezone: 'UTC',
  daily_limit: 50,
  warmup_enabled: false,
  warmup_started_at: null,
  warmup_start_per_day: 5,
  warmup_days: 14,
  next_send_not_before: null,
  sent_today: 0,
  ...over,
});
const enrollment = (over: Partial<Parameters<typeof nextSend>[0]['enrollment']> = {}) => ({
  status: 'active',
  next_send_at: new Date('2026-12-02T09:30:00Z'),
  paused_until: null,
  refused_attempts: 0,
  ...over,
});
const active = { status: 'active', start_at: null };
const at = (r: ReturnType<typeof nextSend>) => ({ at: r.at?.toISOString() ?? null, reason: r.reason });

describe("an enrollment's next send", () => {
  it('is due now when its time has come and a mailbox is open', () => {
    expect(at(nextSend({ enrollment: enrollment(), sequence: active, mailboxes: [mailbox()], now }))).toEqual({
      at: '2026-12-02T09:30:00.000Z',
      reason: 'due',
    });
  });

  it("a closed sending window moves it to the window's next opening, and says so", () => {
    // Open only on Thursdays.
    const r = nextSend({ enrollment: enrollment(), sequence: active, mailboxes: [mailbox({ window_days: [4] })], now });
    expect(at(r)).toEqual({ at: '2026-12-03T09:00:00.000Z', reason: 'sending_window' });
    // Five in the morning in New York: the window opens at 09:00 local, 14:00 UTC.
    const early = nextSend({
      enrollment: enrollment(),
      sequence: active,
      mailboxes: [mailbox({ timezone: 'America/New_York', window_start: '09:00', window_end: '10:00' })],
      now,
    });
    expect(at(early)).toEqual({ at: '2026-12-02T14:00:00.000Z', reason: 'sending_window' });
  });

  it("today's cap, the send gap and a paused pool", () => {
    expect(at(nextSend({ enrollment: enrollment(), sequence: active, mailboxes: [mailbox({ sent_today: 50 })], now }))).toEqual({
      at: '2026-12-03T09:00:00.000Z',
      reason: 'daily_limit',
    });
    const gap = new Date('2026-12-02T10:02:00Z');
    expect(at(nextSend({ enrollment: enrollment(), sequence: active, mailboxes: [mailbox({ next_send_not_before: gap })], now }))).toEqual({
      at: gap.toISOString(),
      reason: 'send_gap',
    });
    expect(at(nextSend({ enrollment: enrollment(), sequence: active, mailboxes: [mailbox({ status: 'paused' })], now }))).toEqual({
      at: null,
      reason: 'mailbox_unavailable',
    });
    // The earliest mailbox of the pool counts.
    const pool = [mailbox({ sent_today: 50 }), mailbox({ id: 'b' })];
    expect(nextSend({ enrollment: enrollment(), sequence: active, mailboxes: pool, now }).reason).toBe('due');
  });

  it("a later due time, an automatic answer's pause, a retry, a sequence not running, a final enrollment", () => {
    const later = new Date('2026-12-04T11:00:00Z');
    expect(at(nextSend({ enrollment: enrollment({ next_send_at: later }), sequence: active, mailboxes: [mailbox()], now }))).toEqual({
      at: later.toISOString(),
      reason: 'scheduled',
    });
    // Due on a Saturday: the window opens on Monday.
    const saturday = new Date('2026-12-05T11:00:00Z');
    expect(at(nextSend({ enrollment: enrollment({ next_send_at: saturday }), sequence: active, mailboxes: [mailbox()], now }))).toEqual({
      at: '2026-12-07T09:00:00.000Z',
      reason: 'sending_window',
    });
    expect(
      nextSend({ enrollment: enrollment({ next_send_at: later, paused_until: later }), sequence: active, mailboxes: [mailbox()], now })
        .reason,
    ).toBe('automatic_answer');
    expect(
      nextSend({ enrollment: enrollment({ next_send_at: later, refused_attempts: 1 }), sequence: active, mailboxes: [mailbox()], now })
        .reason,
    ).toBe('retry');
    expect(at(nextSend({ enrollment: enrollment(), sequence: { status: 'paused', start_at: null }, mailboxes: [mailbox()], now }))).toEqual(
      {
        at: '2026-12-02T09:30:00.000Z',
        reason: 'sequence_not_active',
      },
    );
    expect(nextSend({ enrollment: enrollment({ status: 'completed', next_send_at: null }), sequence: active, mailboxes: [], now })).toEqual(
      {
        at: null,
        reason: null,
      },
    );
  });
});
