import type { Db } from '../../db/client';
import * as db from '../../db/webhooks';
import { isWebhookEventType } from '../../domain/webhooks';
import { newId } from '../../platform/core/ids';

// Emission: an event becomes a webhook message, in the caller's transaction, for every enabled endpoint
// of the organization subscribed to its type (none subscribed: nothing is written). Notification events
// come here through services/notifications/emit.ts; webhook-only events from the service that makes the change.

export interface WebhookEventInput {
  event_type: string;
  /** The message's `data`. */
  data: Record<string, unknown>;
}

/** Writes the message and its deliveries; the number of endpoints it goes to. An unknown type is a programming error. */
export async function emitWebhookEvent(tx: Db, orgId: string, event: WebhookEventInput): Promise<number> {
  if (!isWebhookEventType(event.event_type)) throw new Error(`unregistered webhook event_type: ${event.event_type}`);
  return db.insertMessage(tx, orgId, { id: newId(), event_type: event.event_type, payload: event.data });
}

/** A notification event's webhook `data`: its payload, with the entity it concerns. */
export const notificationData = (event: { entity_type: string; entity_id: string; payload: Record<string, unknown> }) => ({
  ...event.payload,
  entity_type: event.entity_type,
  entity_id: event.entity_id,
});
