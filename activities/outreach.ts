import * as mail from '../db/outreach-messages';
import { fetchNewMessages } from '../platform/imap';
import { receiveMessage } from '../services/outreach-inbound';
import { mailboxImapSettings } from '../services/outreach-mailboxes';
import { runSequenceCycle as runCycle } from '../services/outreach-sending';
import type { ActivityDeps } from './deps';

/** Messages read from a mailbox per poll; more wait for the next one, which comes at once. */
const IMAP_BATCH = 100;

export function createOutreachActivities(deps: ActivityDeps) {
  return {
    /** One send cycle of a sequence (services/outreach-sending.ts). */
    async runSequenceCycle(input: { orgId: string; sequenceId: string }) {
      return runCycle(deps, input.orgId, input.sequenceId);
    },

    /** Reads a connected mailbox's new messages and places each; `stop` when the mailbox is gone or has no IMAP settings. */
    async pollOutreachMailbox(input: { orgId: string; mailboxId: string }): Promise<{ stop: boolean; received: number; more: boolean }> {
      const settings = await mailboxImapSettings(deps, input.orgId, input.mailboxId);
      if (!settings) return { stop: true, received: 0, more: false };
      const cursor = await mail.getImapCursor(deps.sql, input.orgId, input.mailboxId);
      const result = await fetchNewMessages(settings, cursor?.last_uid ?? null, {
        timeoutMs: deps.config.OUTREACH_IMAP_TIMEOUT_MS,
        maxMessages: IMAP_BATCH,
        uidValidity: cursor?.uid_validity ?? null,
      });
      let received = 0;
      for (const m of result.messages) {
        const placed = await receiveMessage(deps, m.raw, { orgId: input.orgId, mailboxId: input.mailboxId });
        if (placed.stored) received += 1;
      }
      await mail.saveImapCursor(deps.sql, input.orgId, input.mailboxId, result.uidValidity, result.lastUid);
      return { stop: false, received, more: result.messages.length >= IMAP_BATCH };
    },
  };
}
