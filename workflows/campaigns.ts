import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { Mutex } from 'async-mutex';
import type { CampaignActivities } from '../activities/campaigns';
import {
  CAMPAIGN_MOVES,
  INVALID_MOVE,
  isFinalCampaignStatus,
  moveRefusal,
  type CampaignMove,
  type CampaignStatus,
} from '../domain/campaigns';
import { MOVE_UPDATES, campaignStatusQuery, contactsSettledSignal, type CampaignWorkflowInput, type MoveArgs } from './campaign-messages';

const { openCampaign, moveCampaign, completeCampaignIfSettled } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/**
 * One campaign's lifecycle (`campaign:<id>`): it starts paused and applies every move through
 * updates, so a caller gets the new status back or a refusal (409). Calls are placed by the
 * organization's dispatcher, which tells this workflow when contacts become final.
 *
 * Moves run one at a time under a mutex (Temporal's safe-message-handlers pattern): updates that
 * arrive together (during `openCampaign`, or while another move's activity runs) each take the lock
 * in turn and check the state table against the status the previous one left. A condition alone
 * would wake them all in one pass and let two moves past the check at once.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignStatus | 'missing'> {
  let status: CampaignStatus = input.status ?? 'paused';
  let ready = false;
  let settled = input.status === 'active';
  const lock = new Mutex();

  const refuse = (move: CampaignMove) => {
    const refusal = moveRefusal(move, status);
    if (refusal) throw ApplicationFailure.create({ type: INVALID_MOVE, message: refusal, nonRetryable: true });
  };

  for (const move of Object.keys(CAMPAIGN_MOVES) as CampaignMove[]) {
    setHandler(
      MOVE_UPDATES[move],
      async ({ actor }: MoveArgs) => {
        await condition(() => ready);
        return lock.runExclusive(async () => {
          refuse(move); // again: another move may have run since the validator accepted this one
          try {
            status = await moveCampaign({ campaignId: input.campaignId, orgId: input.orgId, move, actor });
          } catch (error) {
            // The row refused the move (its status is elsewhere than the table allows): say so as a refusal.
            const cause = error instanceof ActivityFailure ? error.cause : undefined;
            if (cause instanceof ApplicationFailure && cause.type === INVALID_MOVE) {
              throw ApplicationFailure.create({ type: INVALID_MOVE, message: cause.message, nonRetryable: true });
            }
            throw error;
          }
          return status;
        });
      },
      { validator: (_args: MoveArgs) => refuse(move) },
    );
  }
  setHandler(contactsSettledSignal, () => {
    settled = true;
  });
  setHandler(campaignStatusQuery, () => status);

  if (!input.status) {
    // The create committed the row before starting this workflow; the first step confirms the start,
    // and a row that is gone ends the workflow quietly.
    const stored = await openCampaign({ campaignId: input.campaignId, orgId: input.orgId });
    if (!stored) return 'missing';
    status = stored;
  }
  ready = true;

  while (!isFinalCampaignStatus(status)) {
    await condition(() => settled || isFinalCampaignStatus(status) || workflowInfo().continueAsNewSuggested);
    if (isFinalCampaignStatus(status)) break;
    if (settled) {
      settled = false;
      await lock.runExclusive(async () => {
        if (status === 'active') status = await completeCampaignIfSettled({ campaignId: input.campaignId, orgId: input.orgId });
      });
      continue;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(() => !lock.isLocked() && allHandlersFinished());
      const next = makeContinueAsNewFunc<typeof campaignWorkflow>({ typedSearchAttributes: workflowInfo().typedSearchAttributes });
      await next({ ...input, status });
    }
  }
  await condition(allHandlersFinished);
  return status;
}
