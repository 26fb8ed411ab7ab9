import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CallEvent, CampaignMove, CampaignStatus } from '../domain/campaigns';
import type { campaignDispatcher } from './campaign-dispatch';
import type { campaignWorkflow } from './campaigns';
import { workflowRef } from './workflow-ref';

// Names and shapes of the messages of the campaign workflows, shared with their activities and services.

export const campaignWorkflowId = (campaignId: string) => `campaign:${campaignId}`;
export const dispatcherWorkflowId = (orgId: string) => `campaign-dispatcher:${orgId}`;
export const campaignWorkflowRef = workflowRef<typeof campaignWorkflow>('campaignWorkflow');
export const campaignDispatcherRef = workflowRef<typeof campaignDispatcher>('campaignDispatcher');

export interface CampaignWorkflowInput {
  campaignId: string;
  orgId: string;
  /** Set when the workflow continues as new. */
  status?: CampaignStatus;
}

export interface DispatcherSettings {
  /** How often the dispatcher looks for lost or overdue call reports while calls are in flight. */
  sweepIntervalMs: number;
  /** History length past which the dispatcher continues as new. */
  historyLimit: number;
}

export interface DispatcherInput {
  orgId: string;
  settings: DispatcherSettings;
  /** Carried over continue-as-new: call events received but not yet recorded. */
  pending?: CallEvent[];
  lastSweepAt?: number;
}

export interface MoveArgs {
  actor: string;
}

export const resumeCampaignUpdate = defineUpdate<CampaignStatus, [MoveArgs]>('resumeCampaign');
export const pauseCampaignUpdate = defineUpdate<CampaignStatus, [MoveArgs]>('pauseCampaign');
export const cancelCampaignUpdate = defineUpdate<CampaignStatus, [MoveArgs]>('cancelCampaign');
export const MOVE_UPDATES = { resume: resumeCampaignUpdate, pause: pauseCampaignUpdate, cancel: cancelCampaignUpdate } as const;

export const campaignStatusQuery = defineQuery<CampaignStatus>('campaignStatus');
/** From the dispatcher: some contacts of the campaign became final; it may be complete. */
export const contactsSettledSignal = defineSignal('contactsSettled');

/** Progress and outcomes of calls, from the dialer or the signed callback. */
export const callEventsSignal = defineSignal<[CallEvent[]]>('callEvents');
/** Something changed (a campaign resumed, contacts added, the limit raised): look for calls to place. */
export const wakeDispatcherSignal = defineSignal('wakeDispatcher');

// ---- activity inputs and results ----

/** The campaign an activity of its workflow works on. */
export interface CampaignStepInput {
  campaignId: string;
  orgId: string;
}

export interface MoveCampaignInput extends CampaignStepInput {
  move: CampaignMove;
  actor: string;
}

export interface DispatchCycleInput {
  orgId: string;
  /** Call events received by the dispatcher since its last cycle. */
  events: CallEvent[];
  /** Also look for calls whose report was lost or never came. */
  sweep: boolean;
}

export interface DispatchCycleResult {
  dispatched: number;
  inFlight: number;
  freeSlots: number;
  /** Epoch ms of the earliest waiting contact of an active campaign, or null. */
  nextDueAt: number | null;
  /** The page filled while slots remained: run again at once. */
  more: boolean;
  idle: boolean;
  /** Active campaigns left without a contact to call: their workflows may complete them. */
  settledCampaigns: string[];
}
