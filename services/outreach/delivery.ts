import type { Db } from '../../db/client';
import * as mail from '../../db/outreach/messages';
import type { MessageRow, PoolMailbox } from '../../db/outreach/messages';
import * as seqs from '../../db/outreach/sequences';
import type { EnrollableContact, EnrollmentRow } from '../../db/outreach/sequences';
import { SOFT_BOUNCE_LIMIT, SOFT_BOUNCE_WINDOW_DAYS } from '../../domain/outreach/dsn';
import { afterStep } from '../../domain/outreach/sequences';
import { SEND_ATTEMPTS, classifySmtpFailure, retryDelayMs, type SmtpFailure } from '../../domain/outreach/smtp-failures';
import { countSoftBounces } from '../../db/outreach/inbound';
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
 * The notice of a step the server refused at send time: the same event, entity and recipient (the
 * sequence's owner) as a delivery failure report (services/outreach/notices.ts), at stage `smtp`, with
 * the status the server gave, its words, and what followed.
 */
async function notifyRefusal(
  tx: Db,
  orgId: string,
  r: Reservation,
  failure: { status: string | null; diagnostic: string; suppressed: boolean },
) {
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
      status: failure.status,
      diagnostic: failure.diagnostic,
      enrollment_stopped: true,
      suppressed: failure.suppressed,
    },
  });
}

/** Sends one reservation and records the outcome; true when the message went out. */
export async function deliver(deps: SendDeps, orgId: string, r: Reservation): Promise<boolean> {
  const { message, enrollment, contact } = r;
  let outcome: SmtpFailure | undefined;
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
      outcome = { kind: 'bounce', status: null, detail: 'Recipient refused by the server' };
  } catch (error) {
    outcome = classifySmtpFailure(error);
  }
  const now = new Date();
  let result = 'sent';
  await deps.sql.begin(async (tx) => {
    result = await record(tx);
    // The gap counts from the moment the server took the message, not from the reservation. Last in
    // the transaction: rows lock in the reserving order (enrollment, then mailbox), so no deadlock.
    if (r.gapSeconds > 0) await mail.holdMailboxUntil(tx, orgId, r.mailbox.id, new Date(now.getTime() + r.gapSeconds * 1000));
  });
  /** Records the outcome; says what followed (for the log). */
  async function record(tx: Db): Promise<string> {
    if (!outcome || outcome.kind === 'doubt') {
      await mail.setMessageStatus(tx, orgId, message.id, {
        status: outcome ? 'unconfirmed' : 'sent',
        sent_at: now,
        error: outcome?.detail ?? null,
      });
      await recordSent(tx, orgId, message, contact, now);
      const next = afterStep(enrollment.next_step, now, r.delays);
      await seqs.advanceEnrollment(tx, orgId, enrollment.id, enrollment.next_step, { ...next, thread_id: message.thread_id, sent_at: now });
      return outcome ? 'unconfirmed' : 'sent';
    }
    const address = message.to_addresses[0] ?? contact.email ?? '';
    if (outcome.kind === 'retry' || outcome.kind === 'soft_bounce') {
      const soft = outcome.kind === 'soft_bounce';
      await mail.failBeforeAcceptance(
        tx,
        orgId,
        message.id,
        outcome.detail,
        soft ? { status: outcome.status, diagnostic: outcome.detail } : null,
      );
      await recordMailboxOutcome(tx, orgId, r.mailbox.id, 'failure');
      if (soft) {
        // A refusal for now at the recipient counts like a delay report: the SOFT_BOUNCE_LIMIT-th within the window suppresses.
        const since = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000);
        const count = await countSoftBounces(tx, orgId, address, since);
        if (count >= SOFT_BOUNCE_LIMIT) {
          const note = `${count} soft bounces within ${SOFT_BOUNCE_WINDOW_DAYS} days; last: ${outcome.detail}`;
          await seqs.stopEnrollment(tx, orgId, enrollment.id, 'bounced');
          await suppressAddress(tx, orgId, address, 'soft_bounce', note);
          await notifyRefusal(tx, orgId, r, { status: outcome.status, diagnostic: note, suppressed: true });
          return 'suppressed after soft bounces';
        }
      }
      const attempts = await mail.failedAttempts(tx, orgId, enrollment.id, enrollment.next_step);
      if (attempts >= SEND_ATTEMPTS) {
        await seqs.stopEnrollment(tx, orgId, enrollment.id, 'failed');
        const diagnostic = `${outcome.detail} (refused ${attempts} times; not tried again)`;
        await notifyRefusal(tx, orgId, r, { status: outcome.status, diagnostic, suppressed: false });
        return 'given up';
      }
      await seqs.rescheduleEnrollments(tx, orgId, [{ id: enrollment.id, at: new Date(now.getTime() + retryDelayMs(attempts)) }]);
      return `tried again later (attempt ${attempts} of ${SEND_ATTEMPTS})`;
    }
    const bounce = outcome.kind === 'bounce';
    await mail.setMessageStatus(tx, orgId, message.id, { status: 'failed', sent_at: null, error: outcome.detail });
    await recordMailboxOutcome(tx, orgId, r.mailbox.id, bounce ? 'bounce' : 'failure');
    await seqs.stopEnrollment(tx, orgId, enrollment.id, bounce ? 'bounced' : 'failed');
    // A hard bounce at the SMTP door puts the address on the suppression list; either way the sequence's
    // owner hears of it as of a bounce report (services/outreach/inbound.ts), in the same transaction.
    if (bounce) await suppressAddress(tx, orgId, address, 'bounce', outcome.detail);
    await notifyRefusal(tx, orgId, r, { status: outcome.status, diagnostic: outcome.detail, suppressed: bounce });
    return bounce ? 'bounced' : 'failed';
  }
  if (outcome && outcome.kind !== 'doubt')
    deps.logger.warn(
      { orgId, messageId: message.id, mailboxId: r.mailbox.id, outcome: outcome.kind, status: outcome.status, result },
      'outreach send refused',
    );
  return !outcome || outcome.kind === 'doubt';
}
