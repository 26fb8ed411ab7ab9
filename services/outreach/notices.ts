import type { Db } from '../../db/client';
import { noticeFacts } from '../../db/outreach/inbound';
import { memberIdsOfActors } from '../../db/notifications';
import { emitEvent } from '../notifications/emit';

// The notices of outreach mail (a reply, a bounce): each names the contact (name and address), the
// sequence and the mailbox, and links the thread in the unibox (domain/notifications.ts renders them).
// Whoever emits one fills the ids it knows; the names are read here, in the emitter's transaction. The
// sequence's owner hears of it without subscribing first.

export interface OutreachNoticeInput {
  event_type: 'outreach.reply_received' | 'outreach.message_bounced';
  thread_id: string | null;
  enrollment_id: string | null;
  contact_id: string | null;
  sequence_id: string | null;
  mailbox_id: string | null;
  /** The address the message went to or came from, when the contact has none (or no longer exists). */
  address: string | null;
  subject: string | null;
  /** A bounce: what the report (or the refusing server) said, and what followed. */
  bounce?: {
    /** `report`: a delivery status notification received; `smtp`: refused when sent (550). */
    stage: 'report' | 'smtp';
    status: string | null;
    diagnostic: string | null;
    enrollment_stopped: boolean;
    suppressed: boolean;
  };
}

export async function emitOutreachNotice(tx: Db, orgId: string, input: OutreachNoticeInput): Promise<void> {
  const facts = await noticeFacts(tx, orgId, { contactId: input.contact_id, sequenceId: input.sequence_id, mailboxId: input.mailbox_id });
  await emitEvent(tx, orgId, {
    event_type: input.event_type,
    entity_type: input.thread_id ? 'outreach_thread' : 'outreach_enrollment',
    entity_id: input.thread_id ?? input.enrollment_id ?? input.contact_id ?? '',
    recipient_user_ids: await memberIdsOfActors(tx, orgId, [facts.sequence_created_by]),
    payload: {
      thread_id: input.thread_id,
      enrollment_id: input.enrollment_id,
      contact_id: input.contact_id,
      contact_name: facts.contact_name,
      contact_email: facts.contact_email ?? input.address,
      sequence_id: input.sequence_id,
      sequence_name: facts.sequence_name,
      mailbox_id: input.mailbox_id,
      mailbox_address: facts.mailbox_address,
      mailbox_name: facts.mailbox_name,
      from: input.address,
      subject: input.subject,
      ...(input.bounce
        ? {
            stage: input.bounce.stage,
            status: input.bounce.status,
            diagnostic: input.bounce.diagnostic,
            enrollment_stopped: input.bounce.enrollment_stopped,
            suppressed: input.bounce.suppressed,
          }
        : {}),
    },
  });
}
