// Outreach sequence rules shared by every layer (workflows included: nothing here does I/O).

import { localDay, nextWindowOpening, type SendingWindow } from './mailboxes';

export const SEQUENCE_STATUSES = ['draft', 'active', 'paused', 'completed', 'archived'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];

export type SequenceMove = 'activate' | 'pause' | 'resume' | 'complete' | 'archive';

/**
 * The state table: the moves a caller may ask for and the statuses each is allowed from. `active →
 * completed` also happens by itself once no enrollment has a step left (AUTO_COMPLETION).
 */
export const SEQUENCE_MOVES: Record<SequenceMove, { from: readonly SequenceStatus[]; to: SequenceStatus }> = {
  activate: { from: ['draft'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  complete: { from: ['active', 'paused'], to: 'completed' },
  archive: { from: ['draft', 'paused', 'completed'], to: 'archived' },
};
export const AUTO_COMPLETION: { from: readonly SequenceStatus[]; to: SequenceStatus } = { from: ['active'], to: 'completed' };
export const SEQUENCE_MOVE_NAMES = Object.keys(SEQUENCE_MOVES) as SequenceMove[];

/** Why `move` is refused in `status`, or null when the table allows it. */
export const sequenceMoveRefusal = (move: SequenceMove, status: SequenceStatus): string | null =>
  SEQUENCE_MOVES[move].from.includes(status) ? null : `Cannot ${move} a sequence that is ${status}`;

/** Steps, pool and schedule change only while nothing is being sent. */
export const EDITABLE: readonly SequenceStatus[] = ['draft', 'paused'];
/** The name changes in any status but archived. */
export const RENAMABLE: readonly SequenceStatus[] = ['draft', 'active', 'paused', 'completed'];
/** Contacts join a sequence that may still send. */
export const ACCEPTS_ENROLLMENTS: readonly SequenceStatus[] = ['draft', 'active', 'paused'];
/** The statuses in which the sender works. */
export const SENDING: readonly SequenceStatus[] = ['active'];

/** `suppressed`: the address went on the organization's suppression list; it is never mailed again. */
export const ENROLLMENT_STATUSES = ['active', 'completed', 'replied', 'bounced', 'removed', 'failed', 'suppressed'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];
export const isFinalEnrollment = (status: EnrollmentStatus): boolean => status !== 'active';

/** Limits of one sequence. */
export const MAX_STEPS = 20;
export const MAX_VARIANTS = 5;
export const MAX_DELAY_DAYS = 365;
export const MAX_POOL = 100;
export const MAX_ENROLL_BATCH = 1000;

const DAY_MS = 86_400_000;

/** When a step is due: `delay_days` after the previous step went out (the first step: after enrollment or the schedule's start). */
export function stepDueAt(previous: Date, delayDays: number): Date {
  return new Date(previous.getTime() + delayDays * DAY_MS);
}

/** The enrollment after step `sent` went out: the next step's due time, or completed when none is left. */
export function afterStep(
  sent: number,
  sentAt: Date,
  delays: readonly number[],
): { status: 'active'; next_step: number; next_send_at: Date } | { status: 'completed'; next_step: number; next_send_at: null } {
  const next = sent + 1;
  if (next >= delays.length) return { status: 'completed', next_step: next, next_send_at: null };
  return { status: 'active', next_step: next, next_send_at: stepDueAt(sentAt, delays[next]!) };
}

/** Index of the pool's mailbox to try first for the n-th send (round robin). */
export const rotationStart = (rotation: number, poolSize: number): number => (poolSize ? ((rotation % poolSize) + poolSize) % poolSize : 0);

/** The failure type a refused move carries from the service to the API (409). */
export const INVALID_SEQUENCE_MOVE = 'InvalidSequenceMove';

/**
 * The first window opening on a later local day of the mailbox than `now`'s: when a mailbox used up
 * its daily limit, the earliest it sends again.
 */
export function nextLocalDayOpening(mb: SendingWindow, now: Date): Date {
  const today = localDay(mb, now);
  let t = now.getTime();
  // Quarter-hour steps find the local midnight within a day and a bit, whatever the zone's offset.
  for (let i = 0; i < 26 * 4 && localDay(mb, new Date(t)) === today; i++) t += 15 * 60_000;
  while (localDay(mb, new Date(t - 60_000)) !== today && t - 60_000 > now.getTime()) t -= 60_000;
  return nextWindowOpening(mb, new Date(t));
}
