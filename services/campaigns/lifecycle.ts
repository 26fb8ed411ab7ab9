import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import type { CampaignRow } from '../../db/campaigns';
import type { Db } from '../../db/client';
import { membersByExternalIds } from '../../db/notifications';
import { CAMPAIGN_MOVES, COMPLETION, moveRefusal, type CampaignMove, type CampaignStatus } from '../../domain/campaigns';
import { DomainError, conflict } from '../../domain/errors';
import { MOVE_UPDATES, campaignWorkflowId } from '../../workflows/campaign-messages';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';
import { campaignOf, campaignView } from './campaigns';
import { signalDispatcher } from './dispatch';
import { updateWorkflow } from '../workflow-client';
import { startCampaignWorkflow } from './workflow-start';
import { dialsSimulated } from '../integrations/telephony-accounts';

// A campaign's lifecycle: moves asked of its workflow by the API, and the steps its workflow stores
// (open, move, complete).

/** How long a move waits for the campaign's workflow to apply it. */
const MOVE_DEADLINE_MS = 30_000;

/**
 * Asks the campaign's workflow for a move (resume, pause, cancel): the workflow runs one move at a
 * time and answers with the new status or a refusal (409). Bounded: with no worker polling, the
 * caller gets a 503 instead of waiting indefinitely.
 */
export async function moveCampaign(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  campaignId: string,
  move: CampaignMove,
  actor: string,
) {
  const { sql } = deps;
  const row = await campaignOf(sql, orgId, campaignId);
  const refusal = moveRefusal(move, row.status);
  if (refusal) throw conflict(refusal);
  // Its workflow's first step has not run: the start after the create may have been lost (idempotent).
  if (row.workflow_pending_since) await startCampaignWorkflow(deps, orgId, row.id);
  try {
    await updateWorkflow(deps, campaignWorkflowId(row.id), MOVE_UPDATES[move], { actor }, MOVE_DEADLINE_MS);
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw conflict(error.cause?.message ?? `Cannot ${move} this campaign`);
    if (error instanceof WorkflowNotFoundError) throw conflict('The campaign workflow is no longer running');
    throw error;
  }
  return { ...campaignView(await campaignOf(sql, orgId, campaignId)), simulated: await dialsSimulated(deps, orgId) };
}

/**
 * Stores a move, from the campaign's workflow. The row changes only from a status the state table
 * allows for the move; resuming a campaign with no contact left completes it, canceling cancels its
 * pending contacts, and an active campaign wakes the dispatcher.
 */
export async function applyMove(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>,
  orgId: string,
  campaignId: string,
  move: CampaignMove,
  actor: string,
): Promise<CampaignStatus> {
  const { sql } = deps;
  const status = await sql.begin(async (tx) => {
    // Waits out a claim in progress: once a pause or cancel returns, no new call of this campaign starts.
    await campaigns.lockDispatch(tx, orgId, 'shared');
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw new DomainError('not_found', 'Campaign row is gone');
    const refusal = moveRefusal(move, row.status);
    if (refusal) throw new DomainError('conflict', refusal);
    let target = CAMPAIGN_MOVES[move];
    if (target.to === 'active' && (await contacts.countNonFinal(tx, orgId, campaignId)) === 0) target = { ...target, to: 'completed' };
    if (target.to === 'canceled') await contacts.cancelPendingContacts(tx, orgId, campaignId);
    const moved = await campaigns.setCampaignStatus(tx, orgId, campaignId, target, actor);
    if (!moved) throw new DomainError('conflict', `Cannot ${move} a campaign that is ${row.status}`);
    if (moved.status === 'completed') await emitCompleted(tx, orgId, moved);
    return moved.status;
  });
  if (status === 'active') await signalDispatcher(deps, orgId);
  return status;
}

/**
 * `campaign.completed` into the outbox, in the transaction that stored the status. The member who
 * created the campaign (an actor `user:<identity-provider id>`) is its recipient besides subscribers.
 */
async function emitCompleted(tx: Db, orgId: string, row: CampaignRow): Promise<void> {
  const creator = row.created_by.startsWith('user:') ? row.created_by.slice('user:'.length) : null;
  const members = creator ? await membersByExternalIds(tx, orgId, [creator]) : [];
  await emitEvent(tx, orgId, {
    event_type: 'campaign.completed',
    entity_type: 'campaign',
    entity_id: row.id,
    payload: { campaign_id: row.id, name: row.name },
    recipient_user_ids: members.map((m) => m.user_id),
  });
}

/** Completes an active campaign once none of its contacts is left to call; returns the stored status. */
export async function completeIfSettled(deps: Pick<ServiceDeps, 'sql'>, orgId: string, campaignId: string): Promise<CampaignStatus> {
  return deps.sql.begin(async (tx) => {
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw new DomainError('not_found', 'Campaign row is gone');
    if (!COMPLETION.from.includes(row.status) || (await contacts.countNonFinal(tx, orgId, campaignId)) > 0) return row.status;
    const moved = await campaigns.setCampaignStatus(tx, orgId, campaignId, COMPLETION, null);
    if (moved!.status === 'completed') await emitCompleted(tx, orgId, moved!);
    return moved!.status;
  });
}

/**
 * The campaign workflow's first step: the row committed before the workflow started, so it finds it
 * and confirms the start (the sweep leaves the row); null when the row is gone.
 */
export async function openCampaign(deps: Pick<ServiceDeps, 'sql'>, orgId: string, campaignId: string): Promise<CampaignStatus | null> {
  return (await campaigns.confirmWorkflowStarted(deps.sql, orgId, campaignId))?.status ?? null;
}
