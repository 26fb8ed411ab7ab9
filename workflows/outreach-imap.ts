import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { OutreachActivities } from '../activities/outreach';
import type { ImapPollerInput } from './outreach-messages';

const { pollOutreachMailbox } = proxyActivities<OutreachActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});

/**
 * Polls one connected mailbox's INBOX over IMAP (`outreach-imap:<mailbox_id>`) every `intervalMs`,
 * placing replies and bounces in their threads. It ends when the mailbox is gone or has no IMAP
 * settings, and continues as new every `cyclesPerRun` polls so its history stays bounded. A failing
 * server only delays the next poll.
 */
export async function outreachImapPoller(input: ImapPollerInput): Promise<void> {
  for (let cycle = 0; cycle < input.cyclesPerRun; cycle++) {
    let more = false;
    try {
      const result = await pollOutreachMailbox({ orgId: input.orgId, mailboxId: input.mailboxId });
      if (result.stop) return;
      more = result.more;
    } catch {
      // the next poll tries again
    }
    if (!more) await sleep(input.intervalMs);
  }
  await continueAsNew<typeof outreachImapPoller>(input);
}
