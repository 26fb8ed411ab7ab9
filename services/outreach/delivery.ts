import type { Db } from '../../db/client';
import * as mail from '../../db/outreach/messages';
import type { MessageRow, PoolMailbox } from '../../db/outreach/messages';
import * as seqs from '../../db/outreach/sequences';
import type { EnrollableContact, EnrollmentRow } from '../../db/outreach/sequences';
import { afterStep } from '../../domain/outreach/sequences';
import { recordContactEmail } from '../crm-activities';
import type { ServiceDeps } from '../deps';
import { mailboxSender } from './mailbox-sender';
import { recordMailboxOutcome } from './mailboxes';
import { emitOutreachNotice } from './notices';
import { suppressAddress } from './suppressions';
import { trackedHtml } from './tracking';

// Delivering a reserved send (outreach-sending.ts reserves it): SMTP, then the outcome recorded in
// Postgres. A send is never made twice: an outcome in doubt counts as sent.

export interface Reservation {
  message: MessageRow;
  enrollment: EnrollmentRow;
  contact: EnrollableContact;
  mailbox: PoolMailbox;
  /** The sequence the step belongs to (its owner hears of a bounce). */
  sequence: { id: string };
  stepCount: number;
  delays: number[];
  /** The enrollment's one-click unsubscribe URL (List-Unsubscribe, RFC 8058). */
  unsubscribe: string;
  /** The tracking host's base URL when the step goes out tracked (pixel and links, HTML only); else null. */
  trackingBase: string | null;
  /** The pause drawn for the mailbox after this send. */
  gapSeconds: number;
}

export type SendDeps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

const RETRY_AFTER_FAILURE_MS = 5 * 60_000;

/** What a send does to its thread and its contact's timeline. */
export async function recordSent(tx: Db, orgId: string, message: MessageRow, contact: EnrollableContact, at: Date) {
  await mail.touchThread(tx, orgId, message.thread_id, 'outbound', at);
  await recordContactEmail(tx, orgId, contact.id, {
    subject: message.subject,
    body: message.text_body,
    direction: 'outbound',
    at,
    actor: 'system:outreach',
  });
}

/**
 * The bounce notice of a step the receiving server refused at send time: the same event, entity and
 * recipient (the sequence's owner) as a delivery failure report (services/outreach/notices.ts), at
 * stage `smtp`, with the enhanced status code the server gave when it gave one.
 */
async function notifyBounce(tx: Db, orgId: string, r: Reservation, detail: string) {
  const { message, contact, mailbox } = r;
  await emitOutreachNotice(tx, orgId, {
    event_type: 'outreach.message_bounced',
    thread_id: message.thread_id,
    enrollment_id: r.enrollment.id,
    contact_id: contact.id,
    sequence_id: r.sequence.id,
    mailbox_id: mailbox.id,
    address: message.to_addresses[0] ?? contact.email,
    subject: message.subject,
    bounce: {
      stage: 'smtp',
      status: /\b([45]\.\d{1,3}\.\d{1,3})\b/.exec(detail)?.[1] ?? /\b(5\d\d)\b/.exec(detail)?.[1] ?? null,
      diagnostic: detail,
      enrollment_stopped: true,
      suppressed: true,
    },
  });
}

/** What an SMTP failure means for the send: refused before acceptance (free to try later), refused for good, or unknown. */
function classify(error: unknown): { kind: 'retry' | 'bounce' | 'permanent' | 'doubt'; detail: string } {
  const e = error as { code?: string; responseCode?: number; message?: string };
  const detail = (e.message ?? String(error)).slice(0, 500);
  if (typeof e.responseCode === 'number') {
    if (e.responseCode >= 550 && e.responseCode <= 553) return { kind: 'bounce', detail };
    if (e.responseCode >= 500) return { kind: 'permanent', detail };
    return { kind: 'retry', detail };
  }
  // Failures before the message was handed over: nothing was accepted.
  if (['ECONNECTION', 'EDNS', 'EAUTH', 'ETLS', 'ECONNREFUSED', 'ENOTFOUND', 'ECONFIG'].includes(e.code ?? ''))
    return { kind: 'retry', detail };
  return { kind: 'doubt', detail };
}

/** Sends one reservation and records the outcome; true when the message went out. */
export async function deliver(deps: SendDeps, orgId: string, r: Reservation): Promise<boolean> {
  const { message, enrollment, contact } = r;
  let outcome: ReturnType<typeof classify> | undefined;
  try {
    const sender = await mailboxSender(deps, orgId, r.mailbox.id);
    const info = await sender.send({
      from: r.mailbox.display_name ? { name: r.mailbox.display_name, address: r.mailbox.email_address } : r.mailbox.email_address,
      to: message.to_addresses,
      subject: message.subject,
      text: message.text_body ?? '',
      ...(message.html_body
        ? { html: r.trackingBase ? trackedHtml(deps.config, message.id, r.trackingBase, message.html_body) : message.html_body }
        : {}),
      messageId: message.message_id,
      list: { unsubscribe: r.unsubscribe },
      headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      ...(message.in_reply_to ? { inReplyTo: message.in_reply_to, references: message.references } : {}),
    });
    if ((info.rejected ?? []).length > 0 && (info.accepted ?? []).length === 0)
      outcome = { kind: 'bounce', detail: 'Recipient refused by the server' };
  } catch (error) {
    outcome = classify(error);
  }
  const now = new Date();
  await deps.sql.begin(async (tx) => {
    await record(tx);
    // The gap counts from the moment the server took the message, not from the reservation. Last in
    // the transaction: rows lock in the reserving order (enrollment, then mailbox), so no deadlock.
    if (r.gapSeconds > 0) await mail.holdMailboxUntil(tx, orgId, r.mailbox.id, new Date(now.getTime() + r.gapSeconds * 1000));
  });
  async function record(tx: Db) {
    if (!outcome || outcome.kind === 'doubt') {
      await mail.setMessageStatus(tx, orgId, message.id, {
        status: outcome ? 'unconfirmed' : 'sent',
        sent_at: now,
        error: outcome?.detail ?? null,
      });
      await recordSent(tx, orgId, message, contact, now);
      const next = afterStep(enrollment.next_step, now, r.delays);
      await seqs.advanceEnrollment(tx, orgId, enrollment.id, enrollment.next_step, { ...next, thread_id: message.thread_id, sent_at: now });
      return;
    }
    if (outcome.kind === 'retry') {
      await mail.failBeforeAcceptance(tx, orgId, message.id, outcome.detail);
      await recordMailboxOutcome(tx, orgId, r.mailbox.id, 'failure');
      await seqs.rescheduleEnrollments(tx, orgId, [{ id: enrollment.id, at: new Date(now.getTime() + RETRY_AFTER_FAILURE_MS) }]);
      return;
    }
    await mail.setMessageStatus(tx, orgId, message.id, { status: 'failed', sent_at: null, error: outcome.detail });
    await recordMailboxOutcome(tx, orgId, r.mailbox.id, outcome.kind === 'bounce' ? 'bounce' : 'failure');
    await seqs.stopEnrollment(tx, orgId, enrollment.id, outcome.kind === 'bounce' ? 'bounced' : 'failed');
    // A hard bounce at the SMTP door: the address goes on the suppression list, and the sequence's
    // owner hears of it as of a bounce report (services/outreach/inbound.ts), in the same transaction.
    if (outcome.kind === 'bounce') {
      await suppressAddress(tx, orgId, contact.email ?? '', 'bounce', outcome.detail);
      await notifyBounce(tx, orgId, r, outcome.detail);
    }
  }
  if (outcome && outcome.kind !== 'doubt')
    deps.logger.warn({ orgId, messageId: message.id, mailboxId: r.mailbox.id, outcome: outcome.kind }, 'outreach send refused');
  return !outcome || outcome.kind === 'doubt';
}
