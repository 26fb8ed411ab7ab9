import type { Db } from '../client';

// SQL of the unsubscribe page: who sent the mail the link came in (the mailbox of the enrollment's
// thread), found by the enrollment's token as the unsubscribe link finds it.

export interface UnsubscribeSender {
  sender_name: string | null;
  sender_address: string | null;
}

export async function senderOfToken(db: Db, token: string): Promise<UnsubscribeSender> {
  const [row]: [UnsubscribeSender?] = await db`
    SELECT mb.display_name AS sender_name, mb.email_address AS sender_address
    FROM outreach_enrollments e
    JOIN outreach_threads t ON t.id = e.thread_id AND t.org_id = e.org_id
    JOIN outreach_mailboxes mb ON mb.id = t.mailbox_id AND mb.org_id = t.org_id
    WHERE e.unsubscribe_token = ${token}`;
  return row ?? { sender_name: null, sender_address: null };
}
