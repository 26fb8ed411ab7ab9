import type { Db } from '../client';

// SQL of received mail's consequences (see migration 0040): delivery reports recorded on messages, the
// soft-bounce count of an address, the pause an automatic answer puts on an enrollment, and the facts a
// notice names. Every function takes (db, orgId, ...) and filters by org_id.

export interface DeliveryReport {
  status: string | null;
  action: string | null;
  diagnostic: string | null;
}

/**
 * Records what a delivery report said on a message (the report itself, or the message it reports on);
 * `softBounce` adds one to the message's soft-bounce count.
 */
export async function recordDeliveryReport(
  db: Db,
  orgId: string,
  messageId: string,
  report: DeliveryReport,
  softBounce: boolean,
): Promise<void> {
  await db`
    UPDATE outreach_messages
    SET delivery_status = ${report.status?.slice(0, 20) ?? null}, delivery_action = ${report.action?.slice(0, 40) ?? null},
        delivery_diagnostic = ${report.diagnostic?.slice(0, 500) ?? null}, soft_bounces = soft_bounces + ${softBounce ? 1 : 0}
    WHERE id = ${messageId} AND org_id = ${orgId}`;
}

/**
 * Soft bounces of an address (case-insensitive) since `since`: delay reports received for its threads,
 * and sends its server refused for now at the recipient or the message (a failed step with a soft bounce).
 */
export async function countSoftBounces(db: Db, orgId: string, email: string, since: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_messages m
    JOIN outreach_threads t ON t.id = m.thread_id AND t.org_id = m.org_id
    WHERE m.org_id = ${orgId} AND lower(t.counterpart) = lower(${email.trim()})
      AND ((m.classification = 'soft_bounce' AND m.received_at >= ${since})
        OR (m.direction = 'outbound' AND m.status = 'failed' AND m.soft_bounces > 0 AND m.created_at >= ${since}))`;
  return row!.n;
}

/**
 * Holds an active enrollment until `until` and says why: its next step moves there (never earlier than
 * it was due). False when the enrollment is not active or was due later anyway (nothing waits then).
 */
export async function pauseEnrollment(
  db: Db,
  orgId: string,
  id: string,
  until: Date,
  reason: 'out_of_office' | 'auto_reply',
): Promise<boolean> {
  const rows = await db`
    UPDATE outreach_enrollments SET next_send_at = ${until}, paused_until = ${until}, pause_reason = ${reason}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} AND status = 'active' AND next_send_at < ${until}`;
  return rows.count > 0;
}

/** What we sent in a thread (its latest 20 outbound messages): what an answer may repeat or quote. */
export async function ownMail(db: Db, orgId: string, threadId: string): Promise<{ subjects: string[]; texts: string[] }> {
  const rows = await db<{ subject: string; text_body: string | null }[]>`
    SELECT subject, text_body FROM outreach_messages
    WHERE org_id = ${orgId} AND thread_id = ${threadId} AND direction = 'outbound'
    ORDER BY created_at DESC LIMIT 20`;
  return { subjects: rows.map((r) => r.subject), texts: rows.map((r) => r.text_body ?? '').filter(Boolean) };
}

/** What a notice about an outreach message names: the contact, the sequence and the mailbox. */
export interface NoticeFacts {
  contact_name: string | null;
  contact_email: string | null;
  sequence_name: string | null;
  sequence_created_by: string | null;
  mailbox_address: string | null;
  mailbox_name: string | null;
}

export async function noticeFacts(
  db: Db,
  orgId: string,
  ids: { contactId: string | null; sequenceId: string | null; mailboxId: string | null },
): Promise<NoticeFacts> {
  const [row] = await db<NoticeFacts[]>`
    SELECT
      (SELECT nullif(trim(concat_ws(' ', c.first_name, c.last_name)), '') FROM contacts c WHERE c.id = ${ids.contactId} AND c.org_id = ${orgId}) AS contact_name,
      (SELECT c.email FROM contacts c WHERE c.id = ${ids.contactId} AND c.org_id = ${orgId}) AS contact_email,
      (SELECT s.name FROM outreach_sequences s WHERE s.id = ${ids.sequenceId} AND s.org_id = ${orgId}) AS sequence_name,
      (SELECT s.created_by FROM outreach_sequences s WHERE s.id = ${ids.sequenceId} AND s.org_id = ${orgId}) AS sequence_created_by,
      (SELECT m.email_address FROM outreach_mailboxes m WHERE m.id = ${ids.mailboxId} AND m.org_id = ${orgId}) AS mailbox_address,
      (SELECT m.display_name FROM outreach_mailboxes m WHERE m.id = ${ids.mailboxId} AND m.org_id = ${orgId}) AS mailbox_name`;
  return row!;
}
