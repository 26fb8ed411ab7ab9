import type { Db } from '../../db/client';
import * as mail from '../../db/outreach/messages';
import type { MessageRow, PoolMailbox, ThreadRow } from '../../db/outreach/messages';
import * as seqs from '../../db/outreach/sequences';
import { suppressedAmong } from '../../db/outreach/suppressions';
import { trackingHostsOf } from '../../db/outreach/tracking';
import type { EnrollableContact, EnrollmentRow, SequenceRow } from '../../db/outreach/sequences';
import { dailyCap, isWithinSendingWindow, localDay, nextWindowOpening, sendGapSeconds } from '../../domain/outreach/mailboxes';
import { AUTO_COMPLETION, afterStep, nextLocalDayOpening, rotationStart } from '../../domain/outreach/sequences';
import { chooseVariant, oneLine, renderTemplate, type TemplateValues } from '../../domain/outreach/templates';
import { makeMessageId, replyHeaders, replySubject } from '../../domain/outreach/threading';
import { newId } from '../../platform/core/ids';
import type { CycleResult } from '../../workflows/outreach-messages';
import { deliver, recordSent, type Reservation, type SendDeps } from './delivery';
import { recordTrackedMessage, trackingBaseUrl } from './tracking';
import { unsubscribeUrl } from './unsubscribe';

// Sending a sequence's steps. One cycle reserves due sends in a transaction that holds the pool's
// mailbox rows (so every sender of the organization counts the same daily totals), then hands each
// reservation to SMTP, then records it as sent. The reservation row carries the idempotency key
// `<enrollment>:<step>`: a retried cycle that finds it never sends a second time (see resolveExisting).

/** SMTP sends of one cycle in flight at once. */
const SEND_PARALLELISM = 8;
const PAUSED_MAILBOX_RECHECK_MS = 60 * 60_000;

export const idempotencyKey = (enrollmentId: string, step: number) => `${enrollmentId}:${step}`;

export function templateValues(c: EnrollableContact): TemplateValues {
  const full = [c.first_name, c.last_name].filter((v) => v?.trim()).join(' ');
  return {
    first_name: c.first_name,
    last_name: c.last_name,
    full_name: full || null,
    email: c.email,
    company: c.company,
    title: c.title,
    department: c.department,
    phone: c.phone,
  };
}

/** Still within the gap after its last send. */
const spacedOut = (mb: PoolMailbox, now: Date) => mb.next_send_not_before !== null && mb.next_send_not_before > now;

/**
 * The earliest a mailbox sends again: its window's next opening, the next local day when its limit is
 * used up, or the end of the gap after its last send.
 */
function reopensAt(mb: PoolMailbox, capacityLeft: number, now: Date): Date {
  if (mb.status !== 'active') return new Date(now.getTime() + PAUSED_MAILBOX_RECHECK_MS);
  if (!isWithinSendingWindow(mb, now)) return nextWindowOpening(mb, now);
  if (capacityLeft > 0 && spacedOut(mb, now)) return mb.next_send_not_before!;
  return capacityLeft > 0 ? now : nextLocalDayOpening(mb, now);
}

/** One send cycle of a sequence: reserve, send, record; then tell the sender when to look again. */
export async function runSequenceCycle(deps: SendDeps, orgId: string, sequenceId: string, now = new Date()): Promise<CycleResult> {
  // Read with a row lock: a move whose transaction is still open (it started or woke this sender
  // before committing) is waited for, so the sender never ends on the status from before an activation.
  const sequence = await seqs.getSequence(deps.sql, orgId, sequenceId, true);
  if (!sequence) return { state: 'missing', sent: 0, more: false, nextDueInMs: null };
  if (sequence.status !== 'active') return { state: sequence.status, sent: 0, more: false, nextDueInMs: null };
  if (sequence.start_at && sequence.start_at > now)
    return { state: 'active', sent: 0, more: false, nextDueInMs: sequence.start_at.getTime() - now.getTime() };

  const batch = await deps.sql.begin((tx) => reserve(tx, deps.config, orgId, sequence, now));
  let sent = 0;
  // Reservations are independent (each its own row, limits already taken): a few SMTP sessions at once.
  let next = 0;
  const lanes = Array.from({ length: Math.min(SEND_PARALLELISM, batch.reservations.length) }, async () => {
    while (next < batch.reservations.length) if (await deliver(deps, orgId, batch.reservations[next++]!)) sent += 1;
  });
  await Promise.all(lanes);

  if (batch.reservations.length === 0 && !batch.exhausted) {
    const next = await seqs.nextDueAt(deps.sql, orgId, sequenceId);
    if (!next && (await seqs.countEnrollments(deps.sql, orgId, sequenceId)) > 0) {
      const completed = await seqs.setSequenceStatus(deps.sql, orgId, sequenceId, AUTO_COMPLETION, null);
      if (completed) return { state: 'completed', sent, more: false, nextDueInMs: null };
    }
    return { state: 'active', sent, more: false, nextDueInMs: next ? next.getTime() - now.getTime() : null };
  }
  if (batch.exhausted) return { state: 'active', sent, more: false, nextDueInMs: batch.reopensInMs };
  return { state: 'active', sent, more: batch.full, nextDueInMs: 0 };
}

async function reserve(
  tx: Db,
  config: SendDeps['config'],
  orgId: string,
  sequence: SequenceRow,
  now: Date,
): Promise<{ reservations: Reservation[]; exhausted: boolean; full: boolean; reopensInMs: number | null }> {
  const batchSize = config.OUTREACH_SEND_BATCH;
  const due = await seqs.lockDueEnrollments(tx, orgId, sequence.id, now, batchSize);
  if (!due.length) return { reservations: [], exhausted: false, full: false, reopensInMs: null };

  // The pool's rows, locked: sends through a mailbox serialize here, across sequences and workers.
  const pool = await mail.lockMailboxes(tx, orgId, sequence.mailbox_ids);
  const byId = new Map(pool.map((mb) => [mb.id, mb]));
  const days = new Map(pool.map((mb) => [mb.id, localDay(mb, now)]));
  const counts = await mail.sentPerMailboxDay(
    tx,
    orgId,
    pool.map((mb) => ({ mailbox_id: mb.id, day: days.get(mb.id)! })),
  );
  // Today's cap is the daily limit, or the warm-up volume while a warming-up mailbox ramps towards it.
  const capacity = new Map(
    pool.map((mb) => [
      mb.id,
      mb.status === 'active' && isWithinSendingWindow(mb, now)
        ? Math.max(0, dailyCap(mb, now) - (counts.get(`${mb.id}|${days.get(mb.id)}`) ?? 0))
        : 0,
    ]),
  );
  // A mailbox within the gap after its last send has no room now (its daily room stays for later).
  const ready = (id: string) => (capacity.get(id) ?? 0) > 0 && !spacedOut(byId.get(id)!, now);
  const order = sequence.mailbox_ids.filter((id) => byId.has(id));
  const contacts = await seqs.contactsForSend(
    tx,
    orgId,
    due.map((e) => e.contact_id),
  );
  const suppressed = await suppressedAmong(tx, orgId, [...contacts.values()].map((c) => c.email ?? '').filter(Boolean));
  const threadIds = due.map((e) => e.thread_id).filter((id): id is string => !!id);
  const threads = await mail.threadsByIds(tx, orgId, threadIds);
  const parents = await mail.lastSentMessages(tx, orgId, threadIds);
  const delays = sequence.steps.map((s) => s.delay_days);
  // Mailboxes whose sending domain tracks opens and clicks (and is verified): their steps go out tracked.
  const trackingHosts = await trackingHostsOf(
    tx,
    orgId,
    pool.map((mb) => mb.id),
  );

  let rotation = sequence.rotation;
  let exhausted = false;
  const reservations: Reservation[] = [];
  const later: { id: string; at: Date }[] = [];

  for (const enrollment of due) {
    const step = sequence.steps[enrollment.next_step];
    const contact = contacts.get(enrollment.contact_id);
    if (!step) {
      // Steps were removed while the sequence was paused: nothing is left to send.
      await seqs.advanceEnrollment(tx, orgId, enrollment.id, enrollment.next_step, {
        status: 'completed',
        next_step: enrollment.next_step,
        next_send_at: null,
        thread_id: enrollment.thread_id!,
        sent_at: enrollment.last_sent_at ?? now,
      });
      continue;
    }
    if (!contact?.email?.trim()) {
      await seqs.stopEnrollment(tx, orgId, enrollment.id, 'failed');
      continue;
    }
    // Listed since it was enrolled (a bounce or an unsubscribe elsewhere): never mailed again.
    if (suppressed.has(contact.email.trim().toLowerCase())) {
      await seqs.stopEnrollment(tx, orgId, enrollment.id, 'suppressed');
      continue;
    }
    const key = idempotencyKey(enrollment.id, enrollment.next_step);
    const existing = await mail.getMessageByKey(tx, orgId, key);
    if (existing) {
      await resolveExisting(tx, orgId, existing, enrollment, contact, delays, now);
      continue;
    }

    // A thread keeps its mailbox; a first step takes the pool's next mailbox with room (round robin).
    const thread = enrollment.thread_id ? threads.get(enrollment.thread_id) : undefined;
    let mailbox: PoolMailbox | undefined;
    if (thread) {
      const pinned = byId.get(thread.mailbox_id);
      if (!pinned || !ready(pinned.id)) {
        later.push({
          id: enrollment.id,
          at: pinned ? reopensAt(pinned, capacity.get(pinned.id) ?? 0, now) : new Date(now.getTime() + PAUSED_MAILBOX_RECHECK_MS),
        });
        continue;
      }
      mailbox = pinned;
    } else {
      const start = rotationStart(rotation, order.length);
      for (let k = 0; k < order.length; k++) {
        const candidate = byId.get(order[(start + k) % order.length]!)!;
        if (ready(candidate.id)) {
          mailbox = candidate;
          rotation += k + 1;
          break;
        }
      }
      if (!mailbox) {
        exhausted = true; // no mailbox has room for a first step now; the rest stay due, in order
        break;
      }
    }
    capacity.set(mailbox.id, capacity.get(mailbox.id)! - 1);
    // The gap is drawn now, per message: the mailbox sends nothing else until it has passed.
    const gap = sendGapSeconds(mailbox, Math.random());
    if (gap > 0) {
      mailbox.next_send_not_before = new Date(now.getTime() + gap * 1000);
      await mail.holdMailboxUntil(tx, orgId, mailbox.id, mailbox.next_send_not_before);
    }
    const reservation = await reserveOne(
      tx,
      orgId,
      sequence,
      enrollment,
      contact,
      mailbox,
      thread,
      parents.get(thread?.id ?? ''),
      key,
      now,
      unsubscribeUrl(config, enrollment.unsubscribe_token),
    );
    const trackingHost = trackingHosts.get(mailbox.id);
    if (trackingHost && reservation.message.html_body) {
      reservation.trackingBase = trackingBaseUrl(config, trackingHost);
      await recordTrackedMessage(tx, config, orgId, reservation.message.id, reservation.trackingBase, reservation.message.html_body);
    }
    reservations.push({ ...reservation, gapSeconds: gap });
  }

  if (rotation !== sequence.rotation) await seqs.advanceRotation(tx, orgId, sequence.id, rotation - sequence.rotation);
  await seqs.rescheduleEnrollments(tx, orgId, later);
  let reopensInMs: number | null = null;
  if (exhausted) {
    const times = pool.map((mb) => reopensAt(mb, capacity.get(mb.id) ?? 0, now).getTime() - now.getTime()).filter((ms) => ms > 0);
    reopensInMs = times.length ? Math.min(...times) : null;
  }
  for (const r of reservations) r.delays = delays;
  return { reservations, exhausted, full: due.length === batchSize, reopensInMs };
}

async function reserveOne(
  tx: Db,
  orgId: string,
  sequence: SequenceRow,
  enrollment: EnrollmentRow,
  contact: EnrollableContact,
  mailbox: PoolMailbox,
  thread: ThreadRow | undefined,
  parent: MessageRow | undefined,
  key: string,
  now: Date,
  unsubscribe: string,
): Promise<Reservation> {
  const step = sequence.steps[enrollment.next_step]!;
  const variant = chooseVariant(enrollment.id, enrollment.next_step, 1 + step.variants.length);
  const content = variant === 0 ? step : step.variants[variant - 1]!;
  const values = { ...templateValues(contact), unsubscribe_url: unsubscribe };
  const ownSubject = content.subject?.trim() ? oneLine(renderTemplate(content.subject, values, 'text')) : null;
  const subject = ownSubject ?? replySubject(thread?.subject ?? '');
  if (!thread) {
    thread = await mail.insertThread(tx, orgId, {
      mailbox_id: mailbox.id,
      sequence_id: sequence.id,
      enrollment_id: enrollment.id,
      contact_id: contact.id,
      subject,
      counterpart: contact.email!.trim().toLowerCase(),
    });
    await seqs.setEnrollmentThread(tx, orgId, enrollment.id, thread.id);
  }
  const id = newId();
  const headers = parent ? replyHeaders(parent) : null;
  const message = (await mail.insertMessage(tx, orgId, {
    id,
    thread_id: thread.id,
    mailbox_id: mailbox.id,
    direction: 'outbound',
    kind: 'sequence',
    enrollment_id: enrollment.id,
    step: enrollment.next_step,
    variant,
    idempotency_key: key,
    status: 'reserved',
    message_id: makeMessageId(id, orgId, mailbox.email_address),
    in_reply_to: headers?.inReplyTo ?? null,
    references: headers?.references ?? [],
    from_address: mailbox.email_address,
    to_addresses: [contact.email!.trim()],
    subject,
    text_body: renderTemplate(content.body, values, 'text'),
    html_body: content.body_html ? renderTemplate(content.body_html, values, 'html') : null,
    local_day: localDay(mailbox, now),
  }))!;
  return {
    message,
    enrollment: { ...enrollment, thread_id: thread.id },
    contact,
    mailbox,
    sequence: { id: sequence.id },
    stepCount: sequence.steps.length,
    delays: [],
    unsubscribe,
    trackingBase: null,
    gapSeconds: 0,
  };
}

/**
 * A reservation found for a step that is still due: an earlier attempt reserved it and did not record
 * the outcome (a crash, a lost activity, a timeout). `reserved` means SMTP may or may not have taken it:
 * it becomes `unconfirmed` and counts as sent — at most once, never a second send. `sent` and
 * `unconfirmed` only advance the enrollment; `failed` (refused for good) stops it.
 */
async function resolveExisting(
  tx: Db,
  orgId: string,
  existing: MessageRow,
  enrollment: EnrollmentRow,
  contact: EnrollableContact,
  delays: number[],
  now: Date,
) {
  if (existing.status === 'failed') {
    await seqs.stopEnrollment(tx, orgId, enrollment.id, 'failed');
    return;
  }
  const sentAt = existing.sent_at ?? existing.created_at;
  if (existing.status === 'reserved') {
    await mail.setMessageStatus(tx, orgId, existing.id, {
      status: 'unconfirmed',
      sent_at: sentAt,
      error: 'Outcome of the hand-over lost; counted as sent, not sent again',
    });
    await recordSent(tx, orgId, existing, contact, sentAt);
  }
  const next = afterStep(enrollment.next_step, sentAt > now ? now : sentAt, delays);
  await seqs.advanceEnrollment(tx, orgId, enrollment.id, enrollment.next_step, { ...next, thread_id: existing.thread_id, sent_at: sentAt });
}
