import type { Db } from '../../db/client';
import * as db from '../../db/notifications';
import { findEventDefinition } from '../../domain/notification-events';
import { dealChangeEvents, type DealSnapshot } from '../../domain/notifications';
import { emitWebhookEvent, notificationData } from '../webhooks/emit';

// Emission: what every area calls, inside its own transaction, to have its users notified.

export interface NotificationEventInput {
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
  actor_user_id?: string | null;
  recipient_user_ids?: string[];
}

/**
 * Writes the event into the outbox inside the caller's transaction (db may be sql or a tx), so the
 * change and its event commit together; the relay hands it to the organization's actor after commit.
 * `recipient_user_ids` are service user ids (users.id) the event must reach besides those the actor
 * resolves. An unregistered event_type is a programming error of the caller.
 */
export async function emitEvent(db_: Db, orgId: string, event: NotificationEventInput): Promise<void> {
  if (!findEventDefinition(event.event_type)) throw new Error(`unregistered notification event_type: ${event.event_type}`);
  const write = async (tx: Db) => {
    await db.insertOutboxEvent(tx, orgId, {
      event_type: event.event_type,
      entity_type: event.entity_type,
      entity_id: event.entity_id,
      payload: event.payload,
      actor_user_id: event.actor_user_id ?? null,
      recipient_user_ids: [...new Set(event.recipient_user_ids ?? [])],
    });
    // Every notification event is also a webhook message for the endpoints subscribed to it (services/webhooks).
    await emitWebhookEvent(tx, orgId, { event_type: event.event_type, data: notificationData(event) });
  };
  // The two rows commit together: a caller outside a transaction gets one of its own.
  if ('savepoint' in db_) await write(db_);
  else await db_.begin(write);
}

/**
 * Emits the events of a deal write (domain/notifications.ts `dealChangeEvents`) into the outbox, in
 * the caller's transaction. `before` is null for a create.
 */
export async function emitDealEvents(
  tx: Db,
  orgId: string,
  before: DealSnapshot | null,
  after: DealSnapshot,
  actorUserId: string | null,
): Promise<void> {
  for (const e of dealChangeEvents(before, after)) {
    await emitEvent(tx, orgId, {
      event_type: e.event_type,
      entity_type: 'deal',
      entity_id: after.id,
      payload: e.payload,
      actor_user_id: actorUserId,
    });
  }
}

/** A deal row as notifications see it (value as a number). */
export const dealSnapshot = (row: {
  id: string;
  name: string;
  stage: string;
  value: string | number | null;
  currency: string | null;
  owner_id: string | null;
}): DealSnapshot => ({
  id: row.id,
  name: row.name,
  stage: row.stage,
  value: row.value === null ? null : Number(row.value),
  currency: row.currency,
  owner_id: row.owner_id,
});
