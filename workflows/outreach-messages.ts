import { defineSignal } from '@temporalio/workflow';
import type { SequenceStatus } from '../domain/outreach/sequences';
import type { outreachImapPoller } from './outreach-imap';
import type { outreachSequenceSender } from './outreach-sequences';
import { workflowRef } from './workflow-ref';

// Names and shapes of the outreach workflows' messages, shared with their services and activities.

export const sequenceWorkflowId = (sequenceId: string) => `outreach-sequence:${sequenceId}`;
export const imapPollerWorkflowId = (mailboxId: string) => `outreach-imap:${mailboxId}`;
export const outreachSequenceSenderWorkflow = workflowRef<typeof outreachSequenceSender>('outreachSequenceSender');
export const outreachImapPollerWorkflow = workflowRef<typeof outreachImapPoller>('outreachImapPoller');

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

export interface SequenceCycleInput {
  orgId: string;
  sequenceId: string;
}

export interface CycleResult {
  state: SequenceStatus | 'missing';
  sent: number;
  /** The batch filled while mailboxes had room: run again at once. */
  more: boolean;
  /** When something may next be sendable, in ms from now; null when only a wake-up can tell. */
  nextDueInMs: number | null;
}

export interface ImapPollerInput {
  orgId: string;
  mailboxId: string;
  intervalMs: number;
  cyclesPerRun: number;
}

export interface ImapPollInput {
  orgId: string;
  mailboxId: string;
}

export interface ImapPollResult {
  /** The mailbox is gone or has no IMAP settings: the poller ends. */
  stop: boolean;
  received: number;
  /** The batch was full: poll again at once. */
  more: boolean;
}

/** Something changed (enrollments added, the sequence resumed or paused): run a cycle now. */
export const wakeSequenceSignal = defineSignal('outreachWakeSequence');
