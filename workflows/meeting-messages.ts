import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { BotHistoryEntry, BotStatus, VendorEvent } from '../domain/meetings';
import type { meetingBotWorkflow } from './meetings';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the meeting-bot workflow, its activities and the services that wake it.

export const botWorkflowId = (botId: string) => `meeting-bot:${botId}`;
export const meetingBotWorkflowRef = workflowRef<typeof meetingBotWorkflow>('meetingBotWorkflow');

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

/** The bot a step works on. */
export interface BotRef {
  orgId: string;
  botId: string;
}

/** The bot as its create committed it. */
export interface OpenedBot {
  status: BotStatus;
  join_at: string | null;
  leave_requested: boolean;
}

export interface BotEvents extends BotRef {
  status: BotStatus;
  history: BotHistoryEntry[];
}

export interface BotEnding extends BotRef {
  status: 'failed' | 'canceled';
  reason: string;
  history: BotHistoryEntry[];
}

export interface BotRecording extends BotRef {
  recordingId: string;
}

export interface BotTranscript extends BotRecording {
  transcriptId: string;
}

/** A bot at the vendor, by the vendor's id (activities that call the vendor). */
export interface VendorBotRef {
  vendorBotId: string;
}
