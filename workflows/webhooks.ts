import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { type WebhookActorInput, webhookActorStatusQuery, webhookWakeSignal } from './webhooks-messages';

/**
 * One endpoint's delivery actor (`webhook-endpoint:<endpoint_id>`), started by the relay's
 * signal-with-start. Its state is in Postgres: each step is one activity that claims the endpoint's due
 * deliveries, sends them and records the attempts with their next due time on the retry schedule.
 * Between steps it sleeps until the next delivery falls due or the relay wakes it. One actor per
 * endpoint, so a down or slow endpoint holds back only its own deliveries. It ends when the endpoint is
 * deleted or disabled, or after an idle wait with nothing pending, and continues as new past its
 * history limit.
 */
export async function webhookEndpointActor(input: WebhookActorInput): Promise<string> {
  const { orgId, endpointId, settings } = input;
  const { deliverWebhooks } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: settings.stepTimeoutMs,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 },
  });
  let woken = false;
  let steps = 0;
  let delivered = 0;
  let failed = 0;
  let failures = 0;
  setHandler(webhookWakeSignal, () => {
    woken = true;
  });
  setHandler(webhookActorStatusQuery, () => ({ steps, delivered, failed }));

  for (;;) {
    woken = false;
    let step: Awaited<ReturnType<typeof deliverWebhooks>>;
    try {
      step = await deliverWebhooks({ orgId, endpointId });
      failures = 0;
    } catch {
      // Postgres is down beyond the activity's retries: the deliveries stay in their table; try again later.
      failures += 1;
      await sleep(Math.min(300_000, 1000 * 2 ** failures));
      continue;
    }
    steps += 1;
    delivered += step.delivered;
    failed += step.failed;
    if (step.state !== 'active') return step.state;

    if (!step.more) {
      const idle = step.nextDueInMs === null;
      const waited = await condition(() => woken, idle ? settings.idleMs : Math.max(1, step.nextDueInMs!));
      if (!waited && idle) return 'idle';
    }

    const info = workflowInfo();
    if (info.historyLength >= settings.historyLimit || info.continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof webhookEndpointActor>(input);
    }
  }
}
