// Campaign rules shared by every layer (workflows included, so nothing here touches I/O or time zones).

export const CAMPAIGN_STATUSES = ['paused', 'active', 'completed', 'canceled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const FINAL_CAMPAIGN_STATUSES: readonly CampaignStatus[] = ['completed', 'canceled'];
export const isFinalCampaignStatus = (status: CampaignStatus): boolean => FINAL_CAMPAIGN_STATUSES.includes(status);

export type CampaignMove = 'resume' | 'pause' | 'cancel';

/**
 * The state table. The moves a caller may ask for, from the statuses each is allowed in; `active →
 * completed` happens by itself once every contact is final (COMPLETION).
 */
export const CAMPAIGN_MOVES: Record<CampaignMove, { from: readonly CampaignStatus[]; to: CampaignStatus }> = {
  resume: { from: ['paused'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  cancel: { from: ['paused', 'active'], to: 'canceled' },
};
export const COMPLETION: { from: readonly CampaignStatus[]; to: CampaignStatus } = { from: ['active'], to: 'completed' };

/** Why `move` is refused in `status`, or null when the table allows it. */
export const moveRefusal = (move: CampaignMove, status: CampaignStatus): string | null =>
  CAMPAIGN_MOVES[move].from.includes(status) ? null : `Cannot ${move} a campaign that is ${status}`;

/** True when the table has a move (or completion) from `from` to `to`. */
export const isAllowedTransition = (from: CampaignStatus, to: CampaignStatus): boolean =>
  [...Object.values(CAMPAIGN_MOVES), COMPLETION].some((m) => m.to === to && m.from.includes(from));

/** Contacts can be added while a campaign is paused or active. */
export const ACCEPTS_CONTACTS: readonly CampaignStatus[] = ['paused', 'active'];

export const CONTACT_STATES = ['pending', 'calling', 'completed', 'failed', 'canceled'] as const;
export type ContactState = (typeof CONTACT_STATES)[number];

export const CALL_STATUSES = ['ringing', 'in_progress', 'completed', 'no_answer', 'busy', 'failed', 'canceled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const FINAL_CALL_STATUSES: readonly CallStatus[] = ['completed', 'no_answer', 'busy', 'failed', 'canceled'];
export const isFinalCallStatus = (status: string): boolean => (FINAL_CALL_STATUSES as readonly string[]).includes(status);
export type CallOutcome = 'completed' | 'no_answer' | 'busy' | 'failed' | 'canceled';

/** Progress or outcome of one call, as a provider reports it. */
export interface CallEvent {
  idempotency_key: string;
  status: CallStatus;
  provider_call_id?: string;
  started_at?: string;
  ended_at?: string;
  duration_seconds?: number;
  outcome?: Record<string, unknown>;
}

/** The failure type a refused move carries from the workflow to the API (409). */
export const INVALID_MOVE = 'InvalidCampaignMove';
