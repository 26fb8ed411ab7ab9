import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { INVALID_MOVE } from '../domain/campaigns';
import { isDomainError } from '../domain/errors';
import { createDispatchCycle } from '../services/campaigns/dispatch';
import { applyMove, completeIfSettled, openCampaign } from '../services/campaigns/lifecycle';
import type { CampaignStepInput, DispatchCycleInput, MoveCampaignInput } from '../workflows/campaign-messages';
import type { ActivityDeps } from './deps';

/** A refused move or a missing row cannot change on retry: fail the activity for good. */
async function nonRetryableDomain<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isDomainError(error, 'conflict')) throw ApplicationFailure.nonRetryable(error.detail, INVALID_MOVE);
    if (isDomainError(error, 'not_found')) throw ApplicationFailure.nonRetryable(error.detail, 'CampaignMissing');
    throw error;
  }
}

export function createCampaignActivities(deps: ActivityDeps) {
  // The worker's own client, taken from the first activity that runs; the simulated dialer reports
  // through it from its timers.
  let client: Client | undefined;
  const temporal = (): Client => (client ??= Context.current().client);
  const runDispatchCycle = createDispatchCycle(deps, () => client);

  return {
    /** The campaign workflow's first step: the stored status once the create transaction ended, null when it rolled back. */
    openCampaign: ({ campaignId, orgId }: CampaignStepInput) => openCampaign(deps, orgId, campaignId),

    /** Stores a move the workflow accepted; a row elsewhere than the table allows refuses it for good. */
    moveCampaign: (input: MoveCampaignInput) =>
      nonRetryableDomain(() => applyMove({ ...deps, temporal: temporal() }, input.orgId, input.campaignId, input.move, input.actor)),

    completeCampaignIfSettled: ({ campaignId, orgId }: CampaignStepInput) =>
      nonRetryableDomain(() => completeIfSettled(deps, orgId, campaignId)),

    /** One turn of the organization's dispatcher (services/campaigns/dispatch.ts); it heartbeats while dialing. */
    runDispatchCycle: (input: DispatchCycleInput) => {
      const ctx = Context.current();
      temporal();
      return runDispatchCycle(input, () => ctx.heartbeat());
    },
  };
}
