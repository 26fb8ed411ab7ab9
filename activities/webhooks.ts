import { UnknownKeyError } from '../platform/core/secrets';
import { deliverDue } from '../services/webhooks/delivery';
import type { DeliverWebhooksInput, DeliverWebhooksResult } from '../workflows/webhooks-messages';
import type { ActivityDeps } from './deps';
import { classified, onError } from './failures';

/** A secret sealed under a key no longer configured: no retry opens it (the actor waits, then tries again). */
const SECRET_UNREADABLE = onError(UnknownKeyError, 'WebhookSecretUnreadable');

/** An endpoint actor's step. Retrying it is safe: deliveries are claimed in Postgres, and a receiver deduplicates by webhook-id. */
export function createWebhookActivities(deps: ActivityDeps) {
  return {
    deliverWebhooks: (input: DeliverWebhooksInput): Promise<DeliverWebhooksResult> =>
      classified([SECRET_UNREADABLE], () => deliverDue(deps, input.orgId, input.endpointId)),
  };
}

/** What the webhook workflows may call: their `proxyActivities<WebhookActivities>` type. */
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
