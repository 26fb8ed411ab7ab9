import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns';
import type { CallEvent } from '../domain/campaigns';
import {
  callEventsSignal,
  campaignWorkflowId,
  contactsSettledSignal,
  wakeDispatcherSignal,
  type DispatcherInput,
} from './campaign-messages';

const { runDispatchCycle } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 8 },
});

/** Call events handed to one cycle at most, so an activity's input stays small. */
const MAX_EVENTS_PER_CYCLE = 1000;

/**
 * The organization's dispatcher (`campaign-dispatcher:<org_id>`), the single owner of its call slots.
 * Each cycle is one activity that records the call events received since the last one, sweeps for
 * lost reports now and then, and fills the free slots from the active campaigns' due contacts, read
 * from Postgres one page at a time. Between cycles it sleeps until an event, a wake-up, the next
 * due contact or the next sweep. It ends when nothing is in flight or due, is started again by the
 * next signal-with-start, and continues as new past its history limit.
 */
export async function campaignDispatcher(input: DispatcherInput): Promise<void> {
  const { orgId, settings } = input;
  const pending: CallEvent[] = [...(input.pending ?? [])];
  let wake = true;
  let lastSweepAt = input.lastSweepAt ?? 0;
  let failures = 0;

  setHandler(callEventsSignal, (events) => {
    pending.push(...events);
  });
  setHandler(wakeDispatcherSignal, () => {
    wake = true;
  });

  for (;;) {
    const events = pending.splice(0, MAX_EVENTS_PER_CYCLE);
    wake = false;
    const sweep = Date.now() - lastSweepAt >= settings.sweepIntervalMs;
    let result: Awaited<ReturnType<typeof runDispatchCycle>>;
    try {
      result = await runDispatchCycle({ orgId, events, sweep });
    } catch {
      // Postgres or the dialer is down beyond the activity's retries: keep the events, try later.
      pending.unshift(...events);
      wake = true;
      failures += 1;
      await sleep(Math.min(60_000, 1000 * 2 ** failures));
      continue;
    }
    failures = 0;
    if (sweep) lastSweepAt = Date.now();

    for (const campaignId of result.settledCampaigns) {
      // A campaign whose workflow has ended (canceled) has nothing left to learn.
      await getExternalWorkflowHandle(campaignWorkflowId(campaignId))
        .signal(contactsSettledSignal)
        .catch(() => undefined);
    }

    const info = workflowInfo();
    if (info.historyLength >= settings.historyLimit || info.continueAsNewSuggested) {
      await condition(allHandlersFinished);
      const next = makeContinueAsNewFunc<typeof campaignDispatcher>({ typedSearchAttributes: info.typedSearchAttributes });
      await next({ orgId, settings, pending, lastSweepAt });
    }

    if (result.more || pending.length > 0 || wake) continue;
    if (result.idle) return; // a signal that arrives now makes the server hand the task back, so it is not lost

    const now = Date.now();
    let wakeAt = Infinity;
    // A contact due now that the cycle left behind (rows locked elsewhere) is retried a second later.
    if (result.nextDueAt !== null && result.freeSlots > 0) wakeAt = Math.max(result.nextDueAt, result.nextDueAt <= now ? now + 1000 : now);
    if (result.inFlight > 0 || (result.nextDueAt !== null && result.freeSlots === 0))
      wakeAt = Math.min(wakeAt, lastSweepAt + settings.sweepIntervalMs);
    const timeout = wakeAt === Infinity ? undefined : Math.max(1, wakeAt - now);
    if (timeout === undefined) await condition(() => pending.length > 0 || wake);
    else await condition(() => pending.length > 0 || wake, timeout);
  }
}
