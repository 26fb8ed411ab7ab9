import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { DigestSchedule, NotificationEvent } from '../domain/notifications';
import type { notificationActor } from './notifications';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by the organization's notification actor, its activities and the outbox relay.

export const notificationActorId = (orgId: string) => `notifications:${orgId}`;
export const notificationActorWorkflow = workflowRef<typeof notificationActor>('notificationActor');

export interface NotificationActorSettings {
  digest: DigestSchedule;
  /** History length past which the actor continues as new. */
  historyLimit: number;
  /** Events handed to one delivery activity at most. */
  batchSize: number;
}

export interface NotificationActorInput {
  orgId: string;
  settings: NotificationActorSettings;
  /** Carried over continue-as-new: events received but not yet delivered. */
  pending?: NotificationEvent[];
  /** Carried over continue-as-new: ids of the most recent events delivered, for deduplication. */
  seen?: string[];
  /** Carried over continue-as-new: when the next digest is due (epoch ms), if any entry waits. */
  digestDueAt?: number | null;
}

export interface NotificationActorStatus {
  delivered: number;
  pending: number;
  digestDueAt: number | null;
  historyLength: number;
}

/** Events from the outbox relay, oldest first. */
export const notificationEventsSignal = defineSignal<[NotificationEvent[]]>('notificationEvents');
export const notificationActorStatusQuery = defineQuery<NotificationActorStatus>('notificationActorStatus');

/** The actor's activities: a batch of events to deliver, the queued emails to send, the digests of a window. */
export interface DeliverEventsInput {
  orgId: string;
  events: NotificationEvent[];
}

export interface DeliveryResult {
  items: number;
  emails: number;
  digestEntries: number;
}

export interface SendEmailsInput {
  orgId: string;
}

export interface SendEmailsResult {
  sent: number;
  failed: number;
}

export interface BuildDigestsInput {
  orgId: string;
  /** The end of the digest window (ISO 8601). */
  until: string;
}

export interface BuildDigestsResult {
  digests: number;
  /** Entries are still waiting for a digest (created after `until`): another one is due. */
  pending: boolean;
}
