import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { webhookEndpointActor } from './webhooks';
import { workflowRef } from './workflow-ref';

// Names and shapes shared by an endpoint's delivery actor, its activity and the relay that wakes it.

export const webhookEndpointActorId = (endpointId: string) => `webhook-endpoint:${endpointId}`;
export const webhookEndpointActorWorkflow = workflowRef<typeof webhookEndpointActor>('webhookEndpointActor');

export interface WebhookActorSettings {
  /** How long one delivery step may take (its batch in waves of the endpoint's concurrency, and the recording). */
  stepTimeoutMs: number;
  /** How long the actor waits with nothing pending before it ends (the next delivery starts it again). */
  idleMs: number;
  /** History length past which it continues as new. */
  historyLimit: number;
}

export interface WebhookActorInput {
  orgId: string;
  endpointId: string;
  settings: WebhookActorSettings;
}

export interface WebhookActorStatus {
  steps: number;
  delivered: number;
  failed: number;
}

/** New or resent deliveries are due: the relay's wake-up (the deliveries themselves are read from Postgres). */
export const webhookWakeSignal = defineSignal<[]>('webhookWake');
export const webhookActorStatusQuery = defineQuery<WebhookActorStatus>('webhookActorStatus');

export interface DeliverWebhooksInput {
  orgId: string;
  endpointId: string;
}

/** What became of a step (services/webhooks/delivery.ts `DeliveryStep`). */
export interface DeliverWebhooksResult {
  state: 'active' | 'disabled' | 'gone';
  delivered: number;
  failed: number;
  more: boolean;
  nextDueInMs: number | null;
}
