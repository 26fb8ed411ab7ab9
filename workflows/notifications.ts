import { allHandlersFinished, condition, continueAsNew, log, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications';
import { nextDigestAt, type NotificationEvent } from '../domain/notifications';
import { notificationActorStatusQuery, notificationEventsSignal, type NotificationActorInput } from './notification-messages';

const { deliverNotificationEvents, buildNotificationDigests } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const { sendNotificationEmails } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** Event ids remembered for deduplication (the database's keys catch anything older). */
const SEEN_LIMIT = 5000;

/**
 * The organization's notification actor (`notifications:<org_id>`), started by the outbox relay's
 * signal-with-start. It takes events in batches, has them delivered (recipients, preferences, in-app
 * items, queued emails and digest entries, in one activity), sends immediate emails, and sends the
 * digests when their window closes. It never ends on its own; it continues as new past its history
 * limit, carrying what it has not delivered yet.
 */
export async function notificationActor(input: NotificationActorInput): Promise<void> {
  const { orgId, settings } = input;
  const pending: NotificationEvent[] = [...(input.pending ?? [])];
  const seenOrder: string[] = [...(input.seen ?? [])];
  const seen = new Set(seenOrder);
  let digestDueAt: number | null = input.digestDueAt ?? null;
  let delivered = 0;
  let failures = 0;

  const remember = (id: string) => {
    seen.add(id);
    seenOrder.push(id);
    if (seenOrder.length > SEEN_LIMIT * 2) for (const old of seenOrder.splice(0, seenOrder.length - SEEN_LIMIT)) seen.delete(old);
  };

  setHandler(notificationEventsSignal, (events) => {
    for (const event of events) {
      if (seen.has(event.id)) continue;
      remember(event.id);
      pending.push(event);
    }
  });
  setHandler(notificationActorStatusQuery, () => ({
    delivered,
    pending: pending.length,
    digestDueAt,
    historyLength: workflowInfo().historyLength,
  }));

  const backOff = async () => {
    failures += 1;
    await sleep(Math.min(60_000, 1000 * 2 ** failures));
  };

  for (;;) {
    if (pending.length === 0) {
      if (digestDueAt === null) await condition(() => pending.length > 0);
      else if (digestDueAt > Date.now()) await condition(() => pending.length > 0, digestDueAt - Date.now());
    }

    if (pending.length > 0) {
      const batch = pending.splice(0, settings.batchSize);
      try {
        const result = await deliverNotificationEvents({ orgId, events: batch });
        failures = 0;
        delivered += batch.length;
        if (result.digestEntries > 0 && digestDueAt === null) digestDueAt = nextDigestAt(Date.now(), settings.digest);
        if (result.emails > 0) await sendNotificationEmails({ orgId }).catch(() => log.warn('notification emails left queued'));
      } catch {
        // Postgres is down beyond the activity's retries: keep the events and try again later.
        pending.unshift(...batch);
        await backOff();
        continue;
      }
    }

    if (digestDueAt !== null && Date.now() >= digestDueAt) {
      try {
        const { digests, pending: more } = await buildNotificationDigests({ orgId, until: new Date(digestDueAt).toISOString() });
        if (digests > 0) await sendNotificationEmails({ orgId }).catch(() => log.warn('digest emails left queued'));
        digestDueAt = more ? nextDigestAt(Date.now(), settings.digest) : null;
      } catch {
        await backOff();
        continue;
      }
    }

    const info = workflowInfo();
    // A flood is drained first, so the next run's input stays small.
    if ((info.historyLength >= settings.historyLimit || info.continueAsNewSuggested) && pending.length <= settings.batchSize * 5) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof notificationActor>({
        orgId,
        settings,
        pending,
        seen: seenOrder.slice(-SEEN_LIMIT),
        digestDueAt,
      });
    }
  }
}
