import sanitizeHtml from 'sanitize-html';
import * as mail from '../../db/outreach/messages';
import type { MessageRow, ThreadFilters, ThreadRow } from '../../db/outreach/messages';
import * as seqs from '../../db/outreach/sequences';
import { conflict, notFound, upstream } from '../../domain/errors';
import { localDay } from '../../domain/outreach/mailboxes';
import { classifySmtpFailure } from '../../domain/outreach/smtp-failures';
import { escapeHtml } from '../../domain/outreach/templates';
import { makeMessageId, replyHeaders, replySubject } from '../../domain/outreach/threading';
import { newId } from '../../platform/core/ids';
import { recordContactEmail } from '../crm-activities';
import type { ServiceDeps } from '../deps';
import { mailboxSender } from './mailbox-sender';
import { cursorPage, decodeCursor } from '../pagination';
import { CreatedCursor } from '../pagination';
import { iso } from '../views';

// The unibox: every conversation of the organization's mailboxes, one thread at a time, with the
// campaign it belongs to; marking read and answering from the thread.

/** Received HTML as a browser may show it: no scripts, styles, event handlers or other schemes than web and mail links. */
export function sanitizeMessageHtml(html: string): string {
  return sanitizeHtml(html, {
    allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img']),
    allowedAttributes: { a: ['href', 'name', 'target', 'title'], img: ['src', 'alt', 'width', 'height'], '*': ['dir', 'lang'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['https', 'cid'] },
    transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }) },
  });
}

export function threadSummary(row: ThreadRow) {
  return {
    id: row.id,
    subject: row.subject,
    counterpart: row.counterpart,
    mailbox_id: row.mailbox_id,
    sequence_id: row.sequence_id,
    enrollment_id: row.enrollment_id,
    contact_id: row.contact_id,
    unread: row.unread_count > 0,
    unread_count: row.unread_count,
    needs_reply: row.needs_reply,
    last_message_at: row.last_message_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

function messageView(m: MessageRow) {
  return {
    id: m.id,
    direction: m.direction,
    kind: m.kind,
    status: m.status,
    message_id: m.message_id,
    in_reply_to: m.in_reply_to,
    references: m.references,
    from: m.from_address,
    to: m.to_addresses,
    subject: m.subject,
    text: m.text_body,
    html: m.html_body === null ? null : sanitizeMessageHtml(m.html_body),
    step: m.step,
    variant: m.variant,
    classification: m.classification,
    error: m.error,
    sent_at: iso(m.sent_at),
    received_at: iso(m.received_at),
  };
}

const ThreadCursor = CreatedCursor;

export async function listThreads(deps: Pick<ServiceDeps, 'sql'>, orgId: string, q: ThreadFilters & { limit: number; cursor?: string }) {
  const after = decodeCursor(q.cursor, ThreadCursor);
  const filters: ThreadFilters = { mailbox_id: q.mailbox_id, sequence_id: q.sequence_id, unread: q.unread, needs_reply: q.needs_reply };
  const [rows, total] = await Promise.all([
    mail.listThreads(deps.sql, orgId, { ...filters, limit: q.limit, after }),
    mail.countThreads(deps.sql, orgId, filters),
  ]);
  return cursorPage(rows, q.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), threadSummary);
}

/** One conversation: every message, oldest first, and its campaign context (sequence, step, enrollment, contact, mailbox). */
export async function readThread(deps: Pick<ServiceDeps, 'sql'>, orgId: string, threadId: string) {
  const thread = await mail.getThread(deps.sql, orgId, threadId);
  if (!thread) throw notFound('Thread not found');
  const [messages, mailbox, enrollment, sequence, contacts] = await Promise.all([
    mail.threadMessages(deps.sql, orgId, thread.id),
    mail.getMailbox(deps.sql, orgId, thread.mailbox_id),
    thread.enrollment_id ? seqs.getEnrollmentById(deps.sql, orgId, thread.enrollment_id) : undefined,
    thread.sequence_id ? seqs.getSequence(deps.sql, orgId, thread.sequence_id) : undefined,
    seqs.contactsForSend(deps.sql, orgId, thread.contact_id ? [thread.contact_id] : []),
  ]);
  const contact = thread.contact_id ? contacts.get(thread.contact_id) : undefined;
  const lastStep = [...messages].reverse().find((m) => m.kind === 'sequence' && m.step !== null)?.step ?? null;
  const step = lastStep !== null && sequence?.steps[lastStep] ? sequence.steps[lastStep] : null;
  return {
    ...threadSummary(thread),
    messages: messages.map(messageView),
    context: {
      sequence: sequence ? { id: sequence.id, name: sequence.name, status: sequence.status, stop_on_reply: sequence.stop_on_reply } : null,
      step: step ? { index: lastStep!, delay_days: step.delay_days, subject: step.subject, step_count: sequence!.steps.length } : null,
      enrollment: enrollment
        ? {
            id: enrollment.id,
            status: enrollment.status,
            next_step: enrollment.next_step,
            next_send_at: iso(enrollment.next_send_at),
            stopped_at: iso(enrollment.stopped_at),
          }
        : null,
      contact: contact
        ? {
            id: contact.id,
            first_name: contact.first_name,
            last_name: contact.last_name,
            email: contact.email,
            company: contact.company,
            title: contact.title,
          }
        : null,
      mailbox: mailbox
        ? { id: mailbox.id, email_address: mailbox.email_address, display_name: mailbox.display_name, status: mailbox.status }
        : null,
    },
  };
}

export async function markRead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, threadId: string, read: boolean) {
  const row = await mail.markThreadRead(deps.sql, orgId, threadId, read);
  if (!row) throw notFound('Thread not found');
  return threadSummary(row);
}

/**
 * Answers the thread through its mailbox, threaded: In-Reply-To the latest message, References its
 * chain, `Re:` subject. The row is written before SMTP and marked after, like a sequence step; a
 * refusal by the server is a 502 and leaves the message failed in the thread. A reply counts toward
 * the mailbox's daily total but is never held back by it: a person wrote it.
 */
export async function replyToThread(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  threadId: string,
  body: { text: string; html?: string | null },
) {
  const reserved = await deps.sql.begin(async (tx) => {
    const thread = await mail.getThread(tx, orgId, threadId, true);
    if (!thread) throw notFound('Thread not found');
    const [mailbox] = await mail.lockMailboxes(tx, orgId, [thread.mailbox_id]);
    if (!mailbox) throw conflict('The thread’s mailbox no longer exists');
    if (mailbox.status !== 'active') throw conflict('The thread’s mailbox is paused');
    const parent = await mail.lastDeliveredMessage(tx, orgId, thread.id);
    const headers = parent ? replyHeaders(parent) : null;
    const id = newId();
    const message = (await mail.insertMessage(tx, orgId, {
      id,
      thread_id: thread.id,
      mailbox_id: mailbox.id,
      direction: 'outbound',
      kind: 'reply',
      enrollment_id: thread.enrollment_id,
      step: null,
      variant: null,
      idempotency_key: null,
      status: 'reserved',
      message_id: makeMessageId(id, orgId, mailbox.email_address),
      in_reply_to: headers?.inReplyTo ?? null,
      references: headers?.references ?? [],
      from_address: mailbox.email_address,
      to_addresses: [parent?.direction === 'inbound' ? parent.from_address : thread.counterpart],
      subject: replySubject(thread.subject),
      text_body: body.text,
      html_body: body.html ?? null,
      local_day: localDay(mailbox, new Date()),
    }))!;
    return { thread, mailbox, message };
  });
  const { thread, mailbox, message } = reserved;
  try {
    const sender = await mailboxSender(deps, orgId, mailbox.id);
    await sender.send({
      from: mailbox.display_name ? { name: mailbox.display_name, address: mailbox.email_address } : mailbox.email_address,
      to: message.to_addresses,
      subject: message.subject,
      text: message.text_body ?? '',
      html: message.html_body ?? `<p>${escapeHtml(message.text_body ?? '').replace(/\n/g, '<br>')}</p>`,
      messageId: message.message_id,
      ...(message.in_reply_to ? { inReplyTo: message.in_reply_to, references: message.references } : {}),
    });
  } catch (error) {
    await mail.setMessageStatus(deps.sql, orgId, message.id, {
      status: 'failed',
      // The server's words, or what happened without naming the server (domain/outreach/smtp-failures.ts).
      error: classifySmtpFailure(error).detail,
    });
    throw upstream('The mailbox’s SMTP server refused the reply');
  }
  const now = new Date();
  await deps.sql.begin(async (tx) => {
    await mail.setMessageStatus(tx, orgId, message.id, { status: 'sent', sent_at: now });
    await mail.touchThread(tx, orgId, thread.id, 'outbound', now);
    if (thread.contact_id)
      await recordContactEmail(tx, orgId, thread.contact_id, {
        subject: message.subject,
        body: message.text_body,
        direction: 'outbound',
        at: now,
        actor,
      });
  });
  const row = (await mail.threadMessages(deps.sql, orgId, thread.id)).find((m) => m.id === message.id)!;
  return messageView(row);
}
