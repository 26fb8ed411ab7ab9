import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { INVALID_MOVE } from '../domain/campaigns';
import { createDispatchCycle } from '../services/campaigns/dispatch';
import { applyMove, completeIfSettled, openCampaign } from '../services/campaigns/lifecycle';
import type { CampaignStepInput, DispatchCycleInput, MoveCampaignInput } from '../workflows/campaign-messages';
import type { ActivityDeps } from './deps';
import { classified, onDomain } from './failures';

/** A refused move or a missing row cannot change on retry: the activity fails for good. */
const MOVE_FAILURES = [onDomain('conflict', INVALID_MOVE), onDomain('not_found', 'CampaignMissing')];

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
      classified(MOVE_FAILURES, () => applyMove({ ...deps, temporal: temporal() }, input.orgId, input.campaignId, input.move, input.actor)),

    completeCampaignIfSettled: ({ campaignId, orgId }: CampaignStepInput) =>
      classified(MOVE_FAILURES, () => completeIfSettled(deps, orgId, campaignId)),

    /** One turn of the organization's dispatcher (services/campaigns/dispatch.ts); it heartbeats while dialing. */
    runDispatchCycle: (input: DispatchCycleInput) => {
      const ctx = Context.current();
      temporal();
      return runDispatchCycle(input, () => ctx.heartbeat());
    },
  };
}

/** What the campaigns workflows may call: their `proxyActivities<CampaignActivities>` type. */
export type CampaignActivities = ReturnType<typeof createCampaignActivities>;
