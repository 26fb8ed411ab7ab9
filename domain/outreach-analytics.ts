// A sequence's figures: counts of sent steps and what came of them, with rates to four decimals.
// The bounce rate is over sent messages; the others are over delivered ones (sent minus bounced), since
// a bounced message could not be answered. A rate without a denominator is null, never 0.

export interface Counts {
  sent: number;
  bounced: number;
  replied: number;
  interested: number;
  not_interested: number;
  auto_replied: number;
  unsubscribed: number;
}

const ZERO: Counts = { sent: 0, bounced: 0, replied: 0, interested: 0, not_interested: 0, auto_replied: 0, unsubscribed: 0 };

export const rate = (n: number, of: number): number | null => (of > 0 ? Math.round((n / of) * 10_000) / 10_000 : null);

export function sumCounts(rows: readonly Counts[]): Counts {
  const total = { ...ZERO };
  for (const r of rows) for (const k of Object.keys(ZERO) as (keyof Counts)[]) total[k] += r[k];
  return total;
}

/** The counts with delivered and the rates. */
export function figures(c: Counts) {
  const delivered = c.sent - c.bounced;
  return {
    sent: c.sent,
    delivered,
    bounced: c.bounced,
    replied: c.replied,
    interested: c.interested,
    not_interested: c.not_interested,
    auto_replies: c.auto_replied,
    unsubscribed: c.unsubscribed,
    rates: {
      delivery: rate(delivered, c.sent),
      bounce: rate(c.bounced, c.sent),
      reply: rate(c.replied, delivered),
      interested: rate(c.interested, delivered),
      unsubscribe: rate(c.unsubscribed, delivered),
    },
  };
}
