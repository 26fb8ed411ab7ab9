import { createMailTransport, type MailTransport } from '../platform/adapters/mail/mail';
import { deliverEvents } from '../services/notifications/delivery';
import { buildDigests } from '../services/notifications/digests';
import { sendQueuedEmails } from '../services/notifications/emails';
import type { BuildDigestsInput, DeliverEventsInput, SendEmailsInput } from '../workflows/notification-messages';
import type { ActivityDeps } from './deps';

/**
 * The notification actor's side effects. Each is idempotent (keyed by event, user and digest window),
 * so Temporal's retries after a worker dies redo nothing that was done.
 */
export function createNotificationActivities(deps: ActivityDeps, mail?: MailTransport) {
  let transport = mail;
  const mailer = () => (transport ??= createMailTransport(deps.config, deps.logger));
  return {
    /** In-app items, queued immediate emails and digest entries for a batch of events. */
    deliverNotificationEvents: (input: DeliverEventsInput) => deliverEvents(deps, input.orgId, input.events),

    /**
     * Sends the organization's queued emails; one already sent is never sent again, so when some
     * failed this attempt fails too and Temporal's retry sends only those.
     */
    async sendNotificationEmails(input: SendEmailsInput) {
      const result = await sendQueuedEmails({ ...deps, mail: mailer() }, input.orgId);
      if (result.failed > 0) throw new Error(`${result.failed} notification email(s) failed; ${result.sent} sent`);
      return result;
    },

    /** Builds one digest email per recipient from the entries of the window ending at `until`. */
    buildNotificationDigests: (input: BuildDigestsInput) => buildDigests(deps, input.orgId, new Date(input.until)),
  };
}

/** What the notifications workflows may call: their `proxyActivities<NotificationActivities>` type. */
export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
