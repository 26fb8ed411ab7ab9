import * as db from '../../db/notifications';
import { invalid, notFound } from '../../domain/errors';
import { type NOTIFICATION_EVENTS, SUBSCRIBABLE_EVENTS, findEventDefinition } from '../../domain/notification-events';
import type { ServiceDeps } from '../deps';
import { emitEvent } from './emit';

// The event catalog users subscribe to, and the API's manual emission of deal events.

export const catalogEntry = (e: (typeof NOTIFICATION_EVENTS)[number]) => ({
  event_type: e.event_type,
  category: e.category,
  label: e.label,
  description: e.description,
  default_in_app: e.default_in_app,
  default_cadence: e.default_cadence,
});

export const eventCatalog = () => ({ events: SUBSCRIBABLE_EVENTS.map(catalogEntry) });

export interface ManualEventInput {
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
}

/**
 * POST /notifications/events: deal events only, registered types only, the deal's stored facts
 * overwrite the caller's, and the event is queued (outbox) rather than delivered. A failure to queue
 * is answered `accepted: false`, never an error.
 */
export async function emitManualEvent(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  orgId: string,
  actorUserId: string | null,
  input: ManualEventInput,
): Promise<{ accepted: boolean }> {
  if (input.entity_type !== 'deal') throw invalid(`Unsupported entity_type '${input.entity_type}': only 'deal' is accepted`);
  if (!findEventDefinition(input.event_type)) throw invalid(`Unregistered event_type '${input.event_type}'`);
  const deal = await db.dealFacts(deps.sql, orgId, input.entity_id);
  if (!deal) throw notFound('Deal not found');
  const payload = {
    ...input.payload,
    deal_id: deal.id,
    deal_name: deal.name,
    value: deal.value === null ? null : Number(deal.value),
    currency: deal.currency,
    owner_id: deal.owner_id,
    new_owner_id: deal.owner_id,
  };
  try {
    await emitEvent(deps.sql, orgId, {
      event_type: input.event_type,
      entity_type: 'deal',
      entity_id: deal.id,
      payload,
      actor_user_id: actorUserId,
    });
    return { accepted: true };
  } catch (error) {
    deps.logger.warn({ err: error, orgId, eventType: input.event_type }, 'notification event dropped: the outbox write failed');
    return { accepted: false };
  }
}
