import { pollMailbox } from '../services/outreach/inbound';
import { runSequenceCycle } from '../services/outreach/sending';
import type { ImapPollInput, SequenceCycleInput } from '../workflows/outreach-messages';
import type { ActivityDeps } from './deps';

export function createOutreachActivities(deps: ActivityDeps) {
  return {
    /** One send cycle of a sequence (services/outreach/sending.ts). */
    runSequenceCycle: (input: SequenceCycleInput) => runSequenceCycle(deps, input.orgId, input.sequenceId),

    /** Reads a connected mailbox's new messages and places each (services/outreach/inbound.ts). */
    pollOutreachMailbox: (input: ImapPollInput) => pollMailbox(deps, input),
  };
}

/** What the outreach workflows may call: their `proxyActivities<OutreachActivities>` type. */
export type OutreachActivities = ReturnType<typeof createOutreachActivities>;
