import { z } from 'zod';
import { MESSAGE_ID_PATTERN, WEBHOOK_EVENT_NAMES } from '../../domain/webhooks';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Uuid, cappedLimit } from './common';

// Webhooks to integrators: endpoints, the event type catalog, messages, deliveries and attempts.

const EventType = z.enum(WEBHOOK_EVENT_NAMES);
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d\\d|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}|0)';
/**
 * An http(s) URL without credentials: a host name whose last label begins with a letter, or a dotted IPv4
 * address; an optional port; then any printable ASCII. The pattern is the whole rule. Whether the host may be
 * called is decided at each attempt by the guarded client (public addresses only).
 */
const URL_PATTERN = `^https?://(?:(?:[A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*|${OCTET}(?:\\.${OCTET}){3})(?::${PORT})?(?:[/?#][\\x21-\\x7E]*)?$`;

const EndpointUrl = z.string().max(2048).regex(new RegExp(URL_PATTERN), 'must be an http(s) URL without credentials').openapi({
  example: 'https://hooks.example.com/voice-crm',
  description: 'Where messages are POSTed; http or https, at most 2048 characters',
});

const EventTypes = z
  .array(EventType)
  .min(1)
  .max(WEBHOOK_EVENT_NAMES.length)
  .nullable()
  .openapi({ description: 'The event types sent to the endpoint (listed once each); null or absent: every type, present and future' });

const Description = z.string().max(1000).openapi({ description: 'Free text, at most 1000 characters' });

export const CreateEndpointBody = z
  .object({
    url: EndpointUrl,
    description: Description.optional(),
    event_types: EventTypes.optional(),
    enabled: z.boolean().optional().openapi({ description: 'Default true' }),
  })
  .strict()
  .openapi('WebhookEndpointCreate');

export const PatchEndpointBody = z
  .object({
    url: EndpointUrl.optional(),
    description: Description.optional(),
    event_types: EventTypes.optional(),
    enabled: z
      .boolean()
      .optional()
      .openapi({ description: 'false stops deliveries (they wait); true resumes them and clears a failure streak' }),
  })
  .strict()
  // An empty body is 400 (nothing to update): the document states that a field is needed.
  .openapi('WebhookEndpointPatch', { minProperties: 1 });

export const Endpoint = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    url: z.string(),
    description: z.string(),
    event_types: z.array(EventType).nullable(),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(['manual', 'failing'])
      .nullable()
      .openapi({ description: 'manual: a person disabled it; failing: every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS' }),
    disabled_at: z.string().nullable(),
    failing_since: z.string().nullable().openapi({ description: 'The first failed attempt since the last success' }),
    last_success_at: z.string().nullable(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .openapi({ description: 'After a rotation: until when the previous secret still signs (a second v1 signature)' }),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: z.string(),
    modified_by: z.string(),
  })
  .openapi('WebhookEndpoint');

export const EndpointWithSecret = Endpoint.extend({
  secret: z.string().openapi({
    description: 'The signing secret, whsec_ and base64: shown in this answer only',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
}).openapi('WebhookEndpointWithSecret');

export const EndpointList = z.object({ data: z.array(Endpoint), pagination: CursorPagination }).openapi('WebhookEndpointList');

export const EndpointParams = z.object({ endpoint_id: Uuid });

const MessageId = z.string().regex(MESSAGE_ID_PATTERN).openapi({
  description: 'msg_ and 32 hex digits: the webhook-id header of its deliveries',
  example: 'msg_0190f3c2a1b27c3d8e4f5a6b7c8d9e0f',
});

export const MessageParams = z.object({ message_id: MessageId });
export const EndpointMessageParams = z.object({ endpoint_id: Uuid, message_id: MessageId });

const Limit = cappedLimit(50, 250);
const Cursor = cursorQuery(CreatedCursor);

export const EndpointListQuery = z.object({
  limit: Limit,
  cursor: Cursor,
  enabled: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});

export const EventTypeList = z
  .object({
    data: z.array(
      z.object({
        event_type: z.string(),
        category: z.string(),
        description: z.string(),
        source: z.enum(['notification', 'webhook']).openapi({ description: 'Also a notification, or sent to webhooks only' }),
      }),
    ),
  })
  .openapi('WebhookEventTypeList');

const Message = z
  .object({
    id: z.string().openapi({ description: 'msg_…: the webhook-id of its deliveries' }),
    event_type: z.string(),
    timestamp: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('WebhookMessage', { description: 'What every endpoint receives as the body: {id, type, timestamp, data}' });

export const MessageListQuery = z.object({ limit: Limit, cursor: Cursor, event_type: EventType.optional() });
export const MessageList = z.object({ data: z.array(Message), pagination: CursorPagination }).openapi('WebhookMessageList');

const DeliveryStatus = z
  .enum(['pending', 'succeeded', 'failed'])
  .openapi({ description: 'pending: an attempt is due at next_attempt_at; failed: the retry schedule is spent' });

const Delivery = z
  .object({
    endpoint_id: Uuid,
    message_id: z.string(),
    status: DeliveryStatus,
    attempts: z.number().int().openapi({ description: 'Attempts of the current schedule (a resend starts a new one)' }),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    last_status_code: z.number().int().nullable(),
    created_at: z.string(),
  })
  .openapi('WebhookDelivery');

export const DeliveryWithUrl = Delivery.extend({ url: z.string() });
export const MessageDetail = Message.extend({ deliveries: z.array(DeliveryWithUrl) }).openapi('WebhookMessageDetail');

export const EndpointMessagesQuery = z.object({ limit: Limit, cursor: Cursor, status: DeliveryStatus.optional() });
export const EndpointMessageList = z
  .object({ data: z.array(Delivery.extend({ event_type: z.string() })), pagination: CursorPagination })
  .openapi('WebhookEndpointMessageList');

const AttemptStatus = z.enum(['succeeded', 'failed']);
const Attempt = z
  .object({
    id: Uuid,
    endpoint_id: Uuid,
    message_id: z.string(),
    url: z.string(),
    trigger: z.enum(['scheduled', 'manual']).openapi({ description: 'manual: the first attempt after a resend' }),
    status: AttemptStatus,
    response_status_code: z.number().int().nullable().openapi({ description: 'null when no answer came (timeout, refused connection)' }),
    response_body: z.string().openapi({ description: 'The first 1024 bytes of the answer' }),
    error: z.string().nullable(),
    latency_ms: z.number().int(),
    created_at: z.string(),
  })
  .openapi('WebhookAttempt');

export const AttemptList = z.object({ data: z.array(Attempt), pagination: CursorPagination }).openapi('WebhookAttemptList');
export const EndpointAttemptsQuery = z.object({
  limit: Limit,
  cursor: Cursor,
  status: AttemptStatus.optional(),
  message_id: MessageId.optional(),
});
export const MessageAttemptsQuery = z.object({
  limit: Limit,
  cursor: Cursor,
  status: AttemptStatus.optional(),
  endpoint_id: Uuid.optional(),
});

export const ResendAnswer = z
  .object({ message_id: z.string(), endpoint_ids: z.array(Uuid).openapi({ description: 'The endpoints it is sent to again' }) })
  .openapi('WebhookResend');
