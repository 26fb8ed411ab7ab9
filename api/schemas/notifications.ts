import { z } from 'zod';
import { CreatedCursor, cursorQuery } from '../pagination';
import { EMAIL_CADENCES, NOTIFICATION_EVENTS, SUBSCRIBABLE_EVENTS } from '../../domain/notification-events';
import { Timestamp, Uuid } from './common';

export const FEED_DEFAULT = 50;
export const FEED_MAX = 200;
/** A manual event's payload, serialized, at most this many characters. */
export const PAYLOAD_MAX_CHARS = 16_384;

const Cadence = z.enum(EMAIL_CADENCES);

export const CatalogEntry = z
  .object({
    event_type: z.string(),
    category: z.string(),
    label: z.string(),
    description: z.string(),
    default_in_app: z.boolean(),
    default_cadence: Cadence,
  })
  .openapi('NotificationEventCatalogEntry');

export const EventCatalog = z.object({ events: z.array(CatalogEntry) }).openapi('NotificationEventCatalog');

export const EmitEventBody = z
  .strictObject({
    event_type: z
      .string()
      .min(1)
      .max(100)
      .openapi({
        description: 'A registered event type, e.g. deal.stage_changed; any other is 400',
        example: 'deal.stage_changed',
        // The document states the registered types; the route still answers any other string 400, as the contract says.
        enum: NOTIFICATION_EVENTS.map((e) => e.event_type),
      }),
    entity_type: z
      .string()
      .min(1)
      .max(100)
      .openapi({ description: 'Only `deal` is accepted; anything else is 400', example: 'deal', enum: ['deal'] }),
    entity_id: Uuid.openapi({ description: "The deal, in the caller's organization" }),
    payload: z
      .record(z.string(), z.unknown())
      .refine((p) => JSON.stringify(p).length <= PAYLOAD_MAX_CHARS, { message: `payload larger than ${PAYLOAD_MAX_CHARS} characters` })
      .default({})
      .openapi({
        description: `Hints kept as sent (field, old, new, stage names...); deal_id, deal_name, value, currency, owner_id and new_owner_id are overwritten with the stored deal's. At most ${PAYLOAD_MAX_CHARS} characters as JSON.`,
      }),
  })
  .openapi('NotificationEventEmit');

export const EmitEventResult = z
  .object({ accepted: z.boolean().openapi({ description: 'false when the event was dropped (it could not be queued)' }) })
  .openapi('NotificationEventAccepted');

export const NotificationItem = z
  .object({
    id: Uuid,
    event_id: Uuid,
    event_type: z.string(),
    category: z.string(),
    entity_type: z.string(),
    entity_id: z.string(),
    title: z.string(),
    body: z.string(),
    payload: z.record(z.string(), z.unknown()),
    read: z.boolean(),
    read_at: Timestamp.nullable(),
    archived_at: Timestamp.nullable(),
    created_at: Timestamp.openapi({ description: 'When the event happened' }),
  })
  .openapi('NotificationItem');

export const NotificationFeed = z
  .object({
    data: z.array(NotificationItem),
    pagination: z.object({
      limit: z.number().int(),
      next_cursor: z.string().nullable(),
      total: z.number().int().openapi({ description: 'Items matching the filter (archived ones excluded)' }),
      offset: z.number().int(),
    }),
  })
  .openapi('NotificationFeed');

export const FeedQuery = z.object({
  unread: z.enum(['true', 'false']).default('false').openapi({ description: 'true lists unread items only' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(FEED_MAX)
    .default(FEED_DEFAULT)
    .openapi({ description: `Page size, default ${FEED_DEFAULT}` }),
  cursor: cursorQuery(CreatedCursor),
});

export const UnreadCount = z.object({ unread: z.number().int() }).openapi('NotificationUnreadCount');
export const ReadAllResult = z.object({ updated: z.number().int() }).openapi('NotificationReadAll');

export const NotificationParams = z.object({ notification_id: Uuid });

export const Preference = z
  .object({
    event_type: z.string(),
    category: z.string(),
    label: z.string(),
    in_app: z.boolean(),
    email_cadence: Cadence,
    subscribed: z
      .boolean()
      .openapi({ description: 'true: notified of every event of this type in the organization, not only those concerning you' }),
    customized: z.boolean().openapi({ description: 'false while in_app and email_cadence follow the catalog defaults' }),
  })
  .openapi('NotificationPreference');

export const PreferenceList = z.object({ preferences: z.array(Preference) }).openapi('NotificationPreferenceList');

export const PreferenceParams = z.object({
  event_type: z
    .string()
    .min(1)
    .max(100)
    .openapi({
      description:
        'A subscribable event type of GET /notifications/event-catalog; any other is 400 (unregistered, or an always-send alert)',
      enum: SUBSCRIBABLE_EVENTS.map((e) => e.event_type),
    }),
});

export const PreferencePatch = z
  .strictObject({
    in_app: z.boolean().nullable().openapi({ description: 'null returns to the catalog default' }),
    email_cadence: Cadence.nullable().openapi({ description: 'null returns to the catalog default' }),
    subscribed: z.boolean(),
  })
  .partial()
  .openapi('NotificationPreferencePatch');
