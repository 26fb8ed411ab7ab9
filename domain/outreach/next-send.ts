// When an active enrollment's next step really goes out, and why then: its due time (stored) moved by
// what the sender would meet at that time (the mailbox's sending window, today's cap, the gap after its
// last send, a paused mailbox). Pure, so the rule the read shows is the rule the sender follows
// (services/outreach/sending.ts `reserve`).

import { dailyCap, isWithinSendingWindow, localDay, nextWindowOpening, type SendingWindow, type WarmupSettings } from './mailboxes';
import { nextLocalDayOpening } from './sequences';

/**
 * - `scheduled`: the step is due later (its delay after the previous step, or the sequence's start).
 * - `due`: due now; it goes out in the sender's next cycle.
 * - `automatic_answer`: held by an automatic answer until its return date (`paused_until`).
 * - `retry`: the server refused the last attempt for now; it is tried again then.
 * - `sending_window`: the mailbox's sending window is closed at the due time; the step goes at its next opening.
 * - `daily_limit`: the mailbox sent today's cap (daily limit or warm-up volume); the step goes at the next local day's opening.
 * - `send_gap`: the mailbox is spacing its sends; the step goes when its gap ends.
 * - `mailbox_unavailable`: no mailbox that could send it is active (paused, or gone from the pool); no time is known.
 * - `sequence_not_active`: the sequence is draft or paused; next_send_at is when the step is due once it runs.
 */
export const NEXT_SEND_REASONS = [
  'scheduled',
  'due',
  'automatic_answer',
  'retry',
  'sending_window',
  'daily_limit',
  'send_gap',
  'mailbox_unavailable',
  'sequence_not_active',
] as const;
export type NextSendReason = (typeof NEXT_SEND_REASONS)[number];

export interface SenderMailbox extends SendingWindow, WarmupSettings {
  id: string;
  status: 'active' | 'paused';
  next_send_not_before: Date | null;
  /** Messages it sent on its local day at `now` (what today's cap counts). */
  sent_today: number;
}

export interface NextSend {
  at: Date | null;
  reason: NextSendReason | null;
}

/** The earliest `mb` sends at or after `from`, and what held it, if anything. */
function mailboxOpening(mb: SenderMailbox, from: Date, now: Date): { at: Date; held: NextSendReason | null } {
  let at = from;
  let held: NextSendReason | null = null;
  for (let i = 0; i < 3; i++) {
    if (!isWithinSendingWindow(mb, at)) {
      at = nextWindowOpening(mb, at);
      held ??= 'sending_window';
    }
    // Today's cap binds only a send on today's local day.
    if (localDay(mb, at) === localDay(mb, now) && mb.sent_today >= dailyCap(mb, now)) {
      at = nextLocalDayOpening(mb, now);
      held ??= 'daily_limit';
      continue;
    }
    if (mb.next_send_not_before && mb.next_send_not_before > at) {
      at = mb.next_send_not_before;
      held ??= 'send_gap';
      continue;
    }
    break;
  }
  return { at, held };
}

/**
 * The next send of an enrollment. `mailboxes` are those that may send its step: the thread's mailbox
 * once it has a thread (when still in the pool), else the sequence's pool; the sender takes the first
 * with room, so the earliest of them counts.
 */
export function nextSend(input: {
  enrollment: { status: string; next_send_at: Date | null; paused_until: Date | null; refused_attempts: number };
  sequence: { status: string; start_at: Date | null };
  mailboxes: readonly SenderMailbox[];
  now: Date;
}): NextSend {
  const { enrollment, sequence, now } = input;
  if (enrollment.status !== 'active' || !enrollment.next_send_at) return { at: enrollment.next_send_at, reason: null };
  let due = enrollment.next_send_at;
  if (sequence.start_at && sequence.start_at > due) due = sequence.start_at;
  if (sequence.status !== 'active') return { at: due, reason: 'sequence_not_active' };
  const active = input.mailboxes.filter((mb) => mb.status === 'active');
  if (!active.length) return { at: null, reason: 'mailbox_unavailable' };
  const from = new Date(Math.max(due.getTime(), now.getTime()));
  const best = active.map((mb) => mailboxOpening(mb, from, now)).sort((a, b) => a.at.getTime() - b.at.getTime())[0]!;
  if (best.held) return { at: best.at, reason: best.held };
  if (enrollment.paused_until && enrollment.paused_until > now && due >= enrollment.paused_until)
    return { at: due, reason: 'automatic_answer' };
  if (due > now) return { at: due, reason: enrollment.refused_attempts > 0 ? 'retry' : 'scheduled' };
  return { at: due, reason: 'due' };
}
