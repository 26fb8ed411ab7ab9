import { condition, continueAsNew, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { OutreachActivities } from '../activities/outreach';
import { wakeSequenceSignal, type SequenceSenderInput } from './outreach-messages';

const { runSequenceCycle } = proxyActivities<OutreachActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * The sender of one sequence (`outreach-sequence:<id>`), running while the sequence is active. Each
 * cycle is one activity that sends the due steps (mailbox limits, windows and rotation are decided in
 * Postgres, in the transaction that reserves each send) and answers when to look again. Between
 * cycles it sleeps until then, a wake-up signal, or the poll interval. It ends when the sequence is no
 * longer active (a wake-up that came meanwhile runs one more cycle first, so a resume is never lost),
 * and continues as new every `cyclesPerRun` cycles, so its history stays bounded however long it runs.
 */
export async function outreachSequenceSender(input: SequenceSenderInput): Promise<'stopped' | 'completed'> {
  const { settings } = input;
  let woken = false;
  setHandler(wakeSequenceSignal, () => {
    woken = true;
  });

  for (let cycle = 0; ; cycle++) {
    woken = false;
    let result: Awaited<ReturnType<typeof runSequenceCycle>>;
    try {
      result = await runSequenceCycle({ orgId: input.orgId, sequenceId: input.sequenceId });
    } catch {
      // Postgres or SMTP down past the activity's retries: try again later rather than give up,
      // within the same bound on history as a cycle that ran.
      await sleep(settings.pollIntervalMs);
      if (cycle + 1 >= settings.cyclesPerRun || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof outreachSequenceSender>(input);
      }
      continue;
    }
    if (result.state !== 'active' && !woken) return result.state === 'completed' ? 'completed' : 'stopped';
    if (cycle + 1 >= settings.cyclesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof outreachSequenceSender>(input);
    }
    if (result.more || woken) continue;
    const waitMs =
      result.nextDueInMs === null ? settings.pollIntervalMs : Math.min(Math.max(result.nextDueInMs, 0), settings.pollIntervalMs);
    if (waitMs > 0) await condition(() => woken, waitMs);
  }
}
