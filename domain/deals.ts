/** The pipeline, in order; the two closed_* stages are terminal and stamp closed_at. */
export const DEAL_STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'] as const;
export type DealStage = (typeof DEAL_STAGES)[number];

export const CLOSED_DEAL_STAGES: readonly DealStage[] = ['closed_won', 'closed_lost'];

export const isClosedStage = (stage: string): boolean => (CLOSED_DEAL_STAGES as readonly string[]).includes(stage);

/** The currency of a deal created without one. */
export const DEFAULT_CURRENCY = 'USD';
