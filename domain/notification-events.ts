// The registry of every notification event the service knows. Areas emit these through
// services/notifications/emit.ts `emitEvent`; the catalog (GET /notifications/event-catalog) lists the
// subscribable ones, in this order.

export const EMAIL_CADENCES = ['off', 'immediate', 'digest'] as const;
export type EmailCadence = (typeof EMAIL_CADENCES)[number];

export interface NotificationEventDefinition {
  /** `<entity>.<change>` */
  event_type: string;
  category: string;
  label: string;
  description: string;
  default_in_app: boolean;
  default_cadence: EmailCadence;
  /** Operational alerts: delivered in-app and by immediate email whatever the recipient's preferences. */
  always_send: boolean;
}

const event = (
  event_type: string,
  category: string,
  label: string,
  description: string,
  default_in_app: boolean,
  default_cadence: EmailCadence,
  always_send = false,
): NotificationEventDefinition => ({ event_type, category, label, description, default_in_app, default_cadence, always_send });

export const NOTIFICATION_EVENTS: readonly NotificationEventDefinition[] = [
  event('deal.created', 'deals', 'Deal created', 'A deal was created with you as its owner.', true, 'digest'),
  event('deal.stage_changed', 'deals', 'Deal stage changed', 'A deal you own moved to another pipeline stage.', true, 'digest'),
  event('deal.owner_changed', 'deals', 'Deal owner changed', 'A deal was handed to a new owner.', true, 'immediate'),
  event('deal.value_changed', 'deals', 'Deal value changed', "A deal's value or currency changed.", true, 'digest'),
  event('deal.won', 'deals', 'Deal won', 'A deal was closed as won.', true, 'immediate'),
  event('deal.lost', 'deals', 'Deal lost', 'A deal was closed as lost.', true, 'digest'),
  event('contact.assigned', 'contacts', 'Contact assigned', 'A contact was assigned to you.', true, 'digest'),
  event('campaign.completed', 'campaigns', 'Campaign completed', 'An outbound campaign finished calling its contacts.', true, 'immediate'),
  event('agent_version.published', 'agents', 'Agent version published', 'A new version of an agent was published.', true, 'off'),
  event(
    'meeting.transcript_ready',
    'meetings',
    'Meeting transcript ready',
    "A recorded meeting's transcript is available.",
    true,
    'immediate',
  ),
  event(
    'meeting.bot_failed',
    'meetings',
    'Meeting bot failed',
    'The bot sent to record a meeting could not join or record it.',
    true,
    'immediate',
  ),
  event(
    'knowledge_source.ingestion_failed',
    'knowledge',
    'Knowledge source ingestion failed',
    'A knowledge base source could not be ingested.',
    true,
    'immediate',
  ),
  event(
    'outreach.reply_received',
    'outreach',
    'Outreach reply received',
    'A contact answered an outreach email (automatic answers do not count): who, in which sequence and mailbox, with a link to the thread.',
    true,
    'immediate',
  ),
  event(
    'outreach.message_bounced',
    'outreach',
    'Outreach email bounced',
    'An outreach email failed for good (a permanent bounce): who, in which sequence and mailbox; the enrollment stopped and the address is suppressed.',
    true,
    'digest',
  ),
  event(
    'card.lead_submitted',
    'cards',
    'Lead submitted on your card',
    'Someone left their details on your digital business card.',
    true,
    'immediate',
  ),
  event(
    'research_run.completed',
    'intelligence',
    'Research run completed',
    'A company research or ICP-fit scoring run finished.',
    true,
    'off',
  ),
  event(
    'research_run.failed',
    'intelligence',
    'Research run failed',
    'A company research or ICP-fit scoring run failed.',
    true,
    'immediate',
  ),
  event(
    'credential.refresh_failed',
    'operations',
    'Credential refresh failed',
    'A workflow credential could not be refreshed and needs attention.',
    true,
    'immediate',
    true,
  ),
  event(
    'integration.needs_reconnect',
    'operations',
    'Integration needs reconnecting',
    'A connected third-party account lost its authorization.',
    true,
    'immediate',
    true,
  ),
  event(
    'webhook_endpoint.disabled',
    'operations',
    'Webhook endpoint disabled',
    'A webhook endpoint failed every delivery attempt for too long and was disabled; its messages wait for it to be enabled again.',
    true,
    'immediate',
    true,
  ),
];

const BY_TYPE = new Map(NOTIFICATION_EVENTS.map((e) => [e.event_type, e]));

export const findEventDefinition = (eventType: string): NotificationEventDefinition | undefined => BY_TYPE.get(eventType);

/** What users may subscribe to and set preferences for: everything but the always-send alerts. */
export const SUBSCRIBABLE_EVENTS: readonly NotificationEventDefinition[] = NOTIFICATION_EVENTS.filter((e) => !e.always_send);

export const isSubscribable = (eventType: string): boolean => BY_TYPE.get(eventType)?.always_send === false;
