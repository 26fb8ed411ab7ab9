import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  CAMPAIGN_MOVES,
  FINAL_CAMPAIGN_STATUSES,
  INVALID_MOVE,
  MOVE_UPDATES,
  campaignStatusQuery,
  contactsSettledSignal,
  type CampaignMove,
  type CampaignStatus,
  type CampaignWorkflowInput,
  type MoveArgs,
} from './campaign-messages';

const { openCampaign, moveCampaign, completeCampaignIfSettled } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
});

const isFinal = (status: CampaignStatus) => FINAL_CAMPAIGN_STATUSES.includes(status);

/**
 * One campaign's lifecycle (`campaign:<id>`): it starts paused and serializes every move through
 * updates, so a caller gets the new status back or a refusal (409). Calls are placed by the
 * organization's dispatcher, which tells this workflow when contacts become final.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignStatus | 'missing'> {
  let status: CampaignStatus = input.status ?? 'paused';
  let ready = false;
  let busy = false;
  let settled = input.status === 'active';

  const refuse = (move: CampaignMove) => {
    if (!CAMPAIGN_MOVES[move].from.includes(status)) {
      throw ApplicationFailure.create({ type: INVALID_MOVE, message: `Cannot ${move} a campaign that is ${status}`, nonRetryable: true });
    }
  };

  for (const move of Object.keys(CAMPAIGN_MOVES) as CampaignMove[]) {
    setHandler(
      MOVE_UPDATES[move],
      async ({ actor }: MoveArgs) => {
        await condition(() => ready && !busy);
        refuse(move); // again: another move may have run since the validator accepted this one
        busy = true;
        try {
          status = await moveCampaign({ campaignId: input.campaignId, orgId: input.orgId, to: CAMPAIGN_MOVES[move].to, actor });
        } finally {
          busy = false;
        }
        return status;
      },
      { validator: (_args: MoveArgs) => refuse(move) },
    );
  }
  setHandler(contactsSettledSignal, () => {
    settled = true;
  });
  setHandler(campaignStatusQuery, () => status);

  if (!input.status) {
    // The row is written in the same transaction that started this workflow; a rolled-back create
    // leaves no row, and the workflow ends quietly.
    const stored = await openCampaign({ campaignId: input.campaignId });
    if (!stored) return 'missing';
    status = stored;
  }
  ready = true;

  while (!isFinal(status)) {
    await condition(() => (settled && !busy) || isFinal(status) || workflowInfo().continueAsNewSuggested);
    if (isFinal(status)) break;
    if (settled && !busy) {
      settled = false;
      if (status === 'active') {
        busy = true;
        try {
          status = await completeCampaignIfSettled({ campaignId: input.campaignId });
        } finally {
          busy = false;
        }
      }
      continue;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(() => !busy && allHandlersFinished());
      const next = makeContinueAsNewFunc<typeof campaignWorkflow>({ typedSearchAttributes: workflowInfo().typedSearchAttributes });
      await next({ ...input, status });
    }
  }
  await condition(allHandlersFinished);
  return status;
}
