import { ApplicationFailure } from '@temporalio/activity';
import { createMeetingVendor, VendorRejected } from '../platform/adapters/meetings/vendor';
import * as bots from '../services/meeting-bots';
import type { BotEnding, BotEvents, BotRecording, BotRef, BotTranscript } from '../workflows/meeting-messages';
import type { ActivityDeps } from './deps';

/** A vendor refusal is final: retrying the same request cannot help. */
async function vendorCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof VendorRejected) throw ApplicationFailure.nonRetryable(error.message, 'VendorRejected');
    throw error;
  }
}

/** The meetingBotWorkflow's steps (services/meeting-bots.ts), on the worker's one meeting vendor. */
export function createMeetingActivities(deps: ActivityDeps) {
  const botDeps = { ...deps, vendor: createMeetingVendor(deps.config, deps.logger) };

  return {
    openMeetingBot: (input: BotRef) => bots.openMeetingBot(deps, input),

    /** A bot deleted meanwhile is final. */
    async createVendorBot(input: BotRef): Promise<{ vendor_bot_id: string }> {
      const created = await vendorCall(() => bots.createVendorBot(botDeps, input));
      if (!created) throw ApplicationFailure.nonRetryable('meeting bot no longer exists', 'BotGone');
      return created;
    },

    recordMeetingBotEvents: (input: BotEvents) => bots.recordMeetingBotEvents(deps, input),
    finishMeetingBot: (input: BotEnding) => bots.finishMeetingBot(deps, input),
    removeVendorBot: (input: { vendorBotId: string }) => vendorCall(() => bots.removeVendorBot(botDeps, input)),
    findVendorRecording: (input: { vendorBotId: string }) => vendorCall(() => bots.findVendorRecording(botDeps, input)),
    requestMeetingTranscript: (input: BotRecording) => vendorCall(() => bots.requestMeetingTranscript(botDeps, input)),
    ingestMeetingTranscript: (input: BotTranscript) => vendorCall(() => bots.ingestMeetingTranscript(botDeps, input)),
  };
}
