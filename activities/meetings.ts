import { createMeetingVendor, VendorRejected } from '../platform/adapters/meetings/vendor';
import * as bots from '../services/meeting-bots';
import type { BotEnding, BotEvents, BotRecording, BotRef, BotTranscript, VendorBotRef } from '../workflows/meeting-messages';
import type { ActivityDeps } from './deps';
import { classified, finalFailure, onError } from './failures';

/** A vendor refusal is final: retrying the same request cannot help. */
const VENDOR_FAILURES = [onError(VendorRejected, 'VendorRejected')];
const vendorCall = <T>(call: () => Promise<T>): Promise<T> => classified(VENDOR_FAILURES, call);

/** The meetingBotWorkflow's steps (services/meeting-bots.ts), on the worker's one meeting vendor. */
export function createMeetingActivities(deps: ActivityDeps) {
  const botDeps = { ...deps, vendor: createMeetingVendor(deps.config, deps.logger) };

  return {
    openMeetingBot: (input: BotRef) => bots.openMeetingBot(deps, input),

    /** A bot deleted meanwhile is final. */
    async createVendorBot(input: BotRef): Promise<{ vendor_bot_id: string }> {
      const created = await vendorCall(() => bots.createVendorBot(botDeps, input));
      if (!created) throw finalFailure('BotGone', 'meeting bot no longer exists');
      return created;
    },

    recordMeetingBotEvents: (input: BotEvents) => bots.recordMeetingBotEvents(deps, input),
    finishMeetingBot: (input: BotEnding) => bots.finishMeetingBot(deps, input),
    removeVendorBot: (input: VendorBotRef) => vendorCall(() => bots.removeVendorBot(botDeps, input)),
    findVendorRecording: (input: VendorBotRef) => vendorCall(() => bots.findVendorRecording(botDeps, input)),
    requestMeetingTranscript: (input: BotRecording) => vendorCall(() => bots.requestMeetingTranscript(botDeps, input)),
    ingestMeetingTranscript: (input: BotTranscript) => vendorCall(() => bots.ingestMeetingTranscript(botDeps, input)),
  };
}

/** What the meetings workflows may call: their `proxyActivities<MeetingActivities>` type. */
export type MeetingActivities = ReturnType<typeof createMeetingActivities>;
