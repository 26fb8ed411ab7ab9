import { sequenceCounts, type StepVariantCounts } from '../../db/outreach/analytics';
import * as seqs from '../../db/outreach/sequences';
import { ZERO_COUNTS, figures, sumCounts } from '../../domain/outreach/analytics';
import { notFound } from '../../domain/errors';
import type { ServiceDeps } from '../deps';

// Analytics of a sequence: the whole, each step, each A/B variant of a step (0 is the step's own text).
// Every step and variant of the sequence is listed, sent or not.

export async function sequenceAnalytics(deps: Pick<ServiceDeps, 'sql'>, orgId: string, sequenceId: string) {
  const sequence = await seqs.getSequence(deps.sql, orgId, sequenceId);
  if (!sequence) throw notFound('Sequence not found');
  const rows = await sequenceCounts(deps.sql, orgId, sequenceId);
  const at = (step: number, variant: number): StepVariantCounts =>
    rows.find((r) => r.step === step && r.variant === variant) ?? { step, variant, ...ZERO_COUNTS };
  // Steps removed after they were sent still count in the whole and keep their rows.
  const stepCount = Math.max(sequence.steps.length, ...rows.map((r) => r.step + 1));
  const steps = Array.from({ length: stepCount }, (_, step) => {
    const variantCount = Math.max(
      1 + (sequence.steps[step]?.variants.length ?? 0),
      ...rows.filter((r) => r.step === step).map((r) => r.variant + 1),
    );
    const variants = Array.from({ length: variantCount }, (_, variant) => at(step, variant));
    return { step, ...figures(sumCounts(variants)), variants: variants.map((v) => ({ variant: v.variant, ...figures(v) })) };
  });
  return { sequence_id: sequenceId, ...figures(sumCounts(rows)), steps };
}
