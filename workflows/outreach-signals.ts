import { defineSignal } from '@temporalio/workflow';

// Names and shapes of the outreach workflows' messages, shared with their services and activities.

export const sequenceWorkflowId = (sequenceId: string) => `outreach-sequence:${sequenceId}`;
export const imapPollerWorkflowId = (mailboxId: string) => `outreach-imap:${mailboxId}`;

export interface SequenceSenderSettings {
  /** Longest sleep between cycles: a new due time written straight to Postgres is seen within it. */
  pollIntervalMs: number;
  /** Cycles past which the sender continues as new (its history stays bounded). */
  cyclesPerRun: number;
}

export interface SequenceSenderInput {
  orgId: string;
  sequenceId: string;
  settings: SequenceSenderSettings;
}

export interface ImapPollerInput {
  orgId: string;
  mailboxId: string;
  intervalMs: number;
  cyclesPerRun: number;
}

/** Something changed (enrollments added, the sequence resumed or paused): run a cycle now. */
export const wakeSequenceSignal = defineSignal('outreachWakeSequence');
