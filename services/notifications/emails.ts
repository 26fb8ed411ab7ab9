import * as db from '../../db/notifications';
import type { MailTransport } from '../../platform/adapters/mail/mail';
import type { SendEmailsResult } from '../../workflows/notification-messages';
import type { ServiceDeps } from '../deps';

// Sending the queued notification emails (immediate ones and digests), each at most once.

/** Attempts per email before it is left aside (with its last error) rather than retried forever. */
const MAX_EMAIL_ATTEMPTS = 5;

/**
 * Sends the organization's queued emails, one at a time, each locked while it is sent and marked sent
 * in the same transaction: a retried activity skips what already went out. Returns sent and failed counts.
 */
export async function sendQueuedEmails(
  deps: Pick<ServiceDeps, 'sql' | 'logger'> & { mail: MailTransport },
  orgId: string,
  limit = 500,
): Promise<SendEmailsResult> {
  let sent = 0;
  let failed = 0;
  const failedIds = new Set<string>();
  while (sent + failed < limit) {
    const outcome = await deps.sql.begin(async (tx) => {
      // One that failed in this call waits for the next; the others still go out.
      const email = await db.claimUnsentEmail(tx, orgId, MAX_EMAIL_ATTEMPTS, [...failedIds]);
      if (!email) return 'none' as const;
      try {
        await deps.mail.send({
          to: email.to_address,
          subject: email.subject,
          text: email.text_body,
          html: email.html_body,
          idempotencyKey: email.idempotency_key,
        });
        await db.markEmailSent(tx, orgId, email.id);
        return 'sent' as const;
      } catch (error) {
        failedIds.add(email.id);
        await db.markEmailFailed(tx, orgId, email.id, error instanceof Error ? error.message : String(error));
        deps.logger.warn({ err: error, orgId, emailId: email.id }, 'notification email failed');
        return 'failed' as const;
      }
    });
    if (outcome === 'none') break;
    if (outcome === 'sent') sent += 1;
    else failed += 1;
  }
  return { sent, failed };
}
