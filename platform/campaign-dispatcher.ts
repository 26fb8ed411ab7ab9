import type { Client } from '@temporalio/client';
import type { campaignDispatcher } from '../workflows/campaign-dispatch';
import { callEventsSignal, dispatcherWorkflowId, wakeDispatcherSignal, type DispatcherInput } from '../workflows/campaign-messages';
import type { Config } from './config';
import type { CallEvent } from './dialer';
import { organizationAttribute } from './temporal';

type DispatcherConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'CAMPAIGN_SWEEP_INTERVAL_SECONDS' | 'CAMPAIGN_HISTORY_LIMIT'>;

export function dispatcherInput(config: DispatcherConfig, orgId: string): DispatcherInput {
  return {
    orgId,
    settings: { sweepIntervalMs: config.CAMPAIGN_SWEEP_INTERVAL_SECONDS * 1000, historyLimit: config.CAMPAIGN_HISTORY_LIMIT },
  };
}

/**
 * Hands call events (or, without events, a wake-up) to the organization's dispatcher, starting it
 * when it is not running: the signal is in its history once this returns.
 */
export async function signalDispatcher(client: Client, config: DispatcherConfig, orgId: string, events?: CallEvent[]): Promise<void> {
  const options = {
    workflowId: dispatcherWorkflowId(orgId),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [dispatcherInput(config, orgId)] as [DispatcherInput],
    typedSearchAttributes: organizationAttribute(orgId),
  };
  if (events) {
    await client.workflow.signalWithStart<typeof campaignDispatcher, [CallEvent[]]>('campaignDispatcher', {
      ...options,
      signal: callEventsSignal,
      signalArgs: [events],
    });
  } else {
    await client.workflow.signalWithStart<typeof campaignDispatcher, []>('campaignDispatcher', { ...options, signal: wakeDispatcherSignal, signalArgs: [] });
  }
}
