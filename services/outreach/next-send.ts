import type { Db } from '../../db/client';
import * as mail from '../../db/outreach/messages';
import type { EnrollmentRow, SequenceRow } from '../../db/outreach/sequences';
import { localDay } from '../../domain/outreach/mailboxes';
import { nextSend, type NextSend, type SenderMailbox } from '../../domain/outreach/next-send';

// What an enrollment's read shows of its next send: the time the sender would really send it and why
// (domain/outreach/next-send.ts), from the mailboxes that may send it as they are now.

/** The next send of each active enrollment among `rows` (all of `sequence`), by enrollment id. */
export async function nextSends(
  db: Db,
  orgId: string,
  sequence: Pick<SequenceRow, 'status' | 'start_at' | 'mailbox_ids'>,
  rows: EnrollmentRow[],
  now = new Date(),
): Promise<Map<string, NextSend>> {
  const active = rows.filter((r) => r.status === 'active' && r.next_send_at);
  if (!active.length) return new Map();
  const threadIds = active.map((r) => r.thread_id).filter((id): id is string => !!id);
  const [pool, threads, refused] = await Promise.all([
    mail.poolMailboxes(db, orgId, sequence.mailbox_ids),
    mail.threadsByIds(db, orgId, threadIds),
    mail.refusedAttempts(
      db,
      orgId,
      active.map((r) => ({ enrollment_id: r.id, step: r.next_step })),
    ),
  ]);
  const sent = await mail.sentPerMailboxDay(
    db,
    orgId,
    pool.map((mb) => ({ mailbox_id: mb.id, day: localDay(mb, now) })),
  );
  const senders = new Map<string, SenderMailbox>(
    pool.map((mb) => [mb.id, { ...mb, sent_today: sent.get(`${mb.id}|${localDay(mb, now)}`) ?? 0 }]),
  );
  const result = new Map<string, NextSend>();
  for (const row of active) {
    // A thread keeps its mailbox (while it is in the pool); a first step takes any of the pool.
    const pinned = row.thread_id ? threads.get(row.thread_id)?.mailbox_id : undefined;
    const mailboxes = pinned ? [senders.get(pinned)].filter((mb): mb is SenderMailbox => !!mb) : [...senders.values()];
    const enrollment = { ...row, refused_attempts: refused.get(`${row.id}|${row.next_step}`) ?? 0 };
    result.set(row.id, nextSend({ enrollment, sequence, mailboxes, now }));
  }
  return result;
}
