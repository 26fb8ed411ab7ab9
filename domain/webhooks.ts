import { NOTIFICATION_EVENTS } from './notification-events';

// Pure rules of webhooks to integrators: the event types an endpoint subscribes to, message ids, the
// retry schedule, when a failing endpoint is disabled, and what an attempt keeps of the answer.

export interface WebhookEventType {
  /** `<entity>.<change>` */
  event_type: string;
  category: string;
  description: string;
  /** Also a notification (domain/notification-events.ts), or sent to webhooks only. */
  source: 'notification' | 'webhook';
}

/**
 * Events sent to webhooks only: what integrators need that notifies no one in the product. Each is
 * written by the service that makes the change, in its transaction.
 */
const WEBHOOK_ONLY: readonly WebhookEventType[] = [
  {
    event_type: 'call.ended',
    category: 'campaigns',
    description:
      "A campaign's call ended: its status (completed, no_answer, busy, failed), the outcome the provider reported, the duration, and links to the recording and transcript when the provider gave them.",
    source: 'webhook',
  },
  {
    event_type: 'knowledge_source.ingested',
    category: 'knowledge',
    description: 'A knowledge base source was ingested: its new content is what queries now see.',
    source: 'webhook',
  },
];

/** Every event type an endpoint may subscribe to: the notification catalog's, then the webhook-only ones. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  ...NOTIFICATION_EVENTS.map((e) => ({
    event_type: e.event_type,
    category: e.category,
    description: e.description,
    source: 'notification' as const,
  })),
  ...WEBHOOK_ONLY,
];

export const WEBHOOK_EVENT_NAMES = WEBHOOK_EVENT_TYPES.map((e) => e.event_type) as [string, ...string[]];

const KNOWN = new Set(WEBHOOK_EVENT_NAMES);
export const isWebhookEventType = (eventType: string): boolean => KNOWN.has(eventType);

/** `msg_` and the 32 hex digits of a UUIDv7: unique, time-ordered, the same for every endpoint and retry. */
export const MESSAGE_ID_PATTERN = /^msg_[0-9a-f]{32}$/;
export const messageIdFrom = (uuid: string): string => `msg_${uuid.replaceAll('-', '').toLowerCase()}`;
/** The uuid a message id spells (the caller checked MESSAGE_ID_PATTERN). */
export function uuidFromMessageId(id: string): string {
  const h = id.slice(4);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The body every endpoint receives (the Standard Webhooks shape, with the message id). */
export interface WebhookBody {
  id: string;
  type: string;
  /** ISO 8601: when the event happened (its transaction). */
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The default delays, in seconds, between an attempt that failed and the next (Svix's schedule:
 * immediately, 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h until about three days have passed).
 */
export const DEFAULT_RETRY_DELAYS_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, ...Array<number>(7).fill(36_000)];

/** Milliseconds until the next attempt after `attemptsMade` attempts of a schedule failed; null once it is spent. */
export function retryDelayMs(delaysSeconds: readonly number[], attemptsMade: number): number | null {
  const delay = delaysSeconds[attemptsMade - 1];
  return delay === undefined ? null : Math.round(delay * 1000);
}

/** True when an endpoint that has failed every attempt since `failingSince` has failed long enough to be disabled. */
export function failedLongEnough(failingSince: Date | null, now: Date, disableAfterSeconds: number): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= disableAfterSeconds * 1000;
}

/** What an attempt keeps of an answer's body: its first bytes, as text. */
export const RESPONSE_KEPT_BYTES = 1024;

/** 2xx is a delivery; any other status (3xx too: redirects are not followed) is a failed attempt. */
export const isDelivered = (status: number): boolean => status >= 200 && status < 300;

/** `whsec_` and the base64 of 32 random bytes, as Standard Webhooks and Svix spell secrets. */
export const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;
