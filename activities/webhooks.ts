import { deliverDue } from '../services/webhooks/delivery';
import type { DeliverWebhooksInput, DeliverWebhooksResult } from '../workflows/webhooks-messages';
import type { ActivityDeps } from './deps';

/** An endpoint actor's step. Retrying it is safe: deliveries are claimed in Postgres, and a receiver deduplicates by webhook-id. */
export function createWebhookActivities(deps: ActivityDeps) {
  return {
    deliverWebhooks: (input: DeliverWebhooksInput): Promise<DeliverWebhooksResult> => deliverDue(deps, input.orgId, input.endpointId),
  };
}

/** What the webhook workflows may call: their `proxyActivities<WebhookActivities>` type. */
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
