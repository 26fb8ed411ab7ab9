import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import * as campaigns from '../../db/campaigns';
import { campaignWorkflowId, campaignWorkflowRef } from '../../workflows/campaign-messages';
import type { ServiceDeps } from '../deps';
import { startWorkflow } from '../workflow-client';

// A campaign's workflow starts after its row commits, outside the create's request: the API starts it
// right after the commit, a move starts it when its first step has not run yet, and every worker sweeps
// for rows whose start was never confirmed (Temporal unreachable, or the API process gone in between).
// Idempotent by construction: one workflow id per campaign, and Temporal refuses a second start of it,
// running or closed (docs/decisions/campaigns.md, "Row first, then its workflow").

type StartDeps = Pick<ServiceDeps, 'temporal' | 'config'>;

/** Starts the campaign's workflow; one that exists already (running or closed) is an answer, not an error. */
export async function startCampaignWorkflow(deps: StartDeps, orgId: string, campaignId: string): Promise<void> {
  try {
    await startWorkflow(deps, campaignWorkflowRef, orgId, {
      workflowId: campaignWorkflowId(campaignId),
      args: [{ campaignId, orgId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** How many pending campaigns one sweep reads at a time. */
const SWEEP_BATCH = 100;

/**
 * Starts the workflows of campaigns whose start has not been confirmed for a sweep interval, oldest first,
 * batch after batch, and confirms each (its workflow exists now; its first step would confirm it too).
 * Stops at the first start that fails (Temporal still unreachable): the next sweep tries again. Returns how many.
 */
export async function sweepPendingStarts(deps: StartDeps & Pick<ServiceDeps, 'sql' | 'logger'>): Promise<number> {
  let started = 0;
  try {
    for (;;) {
      const pending = await campaigns.pendingWorkflowStarts(deps.sql, deps.config.CAMPAIGN_START_SWEEP_SECONDS, SWEEP_BATCH);
      for (const { org_id: orgId, id } of pending) {
        try {
          await startCampaignWorkflow(deps, orgId, id);
        } catch (error) {
          deps.logger.warn({ err: error, orgId, campaignId: id }, 'campaign workflow not started; the next sweep retries');
          return started;
        }
        await campaigns.confirmWorkflowStarted(deps.sql, orgId, id);
        started += 1;
      }
      if (pending.length < SWEEP_BATCH) return started;
    }
  } finally {
    if (started) deps.logger.info({ started }, 'campaign workflows started by the sweep');
  }
}

/** Every CAMPAIGN_START_SWEEP_SECONDS in each worker; one sweep at a time. */
export function startPendingStartSweep(deps: Parameters<typeof sweepPendingStarts>[0]): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    running ??= sweepPendingStarts(deps)
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'campaign start sweep failed'))
      .finally(() => {
        running = null;
      });
  }, deps.config.CAMPAIGN_START_SWEEP_SECONDS * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
