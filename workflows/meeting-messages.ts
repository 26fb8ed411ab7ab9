import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { BotStatus, VendorEvent } from '../domain/meetings';

// Names and shapes shared by the meeting-bot workflow, its activities and the services that wake it.

export interface MeetingBotLimits {
  /** From the vendor bot's creation until it is in the call. */
  joinTimeoutMs: number;
  /** From joining until the recording is ready. */
  maxDurationMs: number;
  /** From the transcript request until the transcript is ready. */
  transcriptTimeoutMs: number;
}

export interface MeetingBotInput {
  botId: string;
  orgId: string;
  limits: MeetingBotLimits;
}

/** One verified event of the vendor's stream, from the capture webhook. */
export const vendorEventSignal = defineSignal<[VendorEvent]>('meetingVendorEvent');
/** Leave the call (or never join): DELETE /meetings/bots/{bot_id}. */
export const leaveMeetingSignal = defineSignal('leaveMeeting');
export const meetingBotStatusQuery = defineQuery<BotStatus>('meetingBotStatus');
