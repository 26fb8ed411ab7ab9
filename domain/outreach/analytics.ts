// A sequence's figures: counts of sent steps and what came of them, with rates to four decimals.
// The bounce rate is over sent messages; the others are over delivered ones (sent minus bounced), since
// a bounced message could not be answered. Open and click rates are over the delivered messages that
// were sent tracked (an untracked message can show no open), and count people only: opens and clicks
// by machines (Apple Mail Privacy Protection, prefetching, link scanners, bots) are counted apart. A
// message a person clicked counts as opened (its images may have stayed blocked). A rate without a
// denominator is null, never 0.

export interface Counts {
  sent: number;
  bounced: number;
  replied: number;
  interested: number;
  not_interested: number;
  auto_replied: number;
  unsubscribed: number;
  /** Delivered messages sent with the pixel and rewritten links. */
  tracked: number;
  /** Pixel loads by people; unique: messages opened (or clicked) by a person. */
  opens: number;
  unique_opens: number;
  /** Link clicks by people; unique: messages with a person's click. */
  clicks: number;
  unique_clicks: number;
  /** Pixel loads and clicks by machines, counted apart. */
  machine_opens: number;
  machine_clicks: number;
}

export const ZERO_COUNTS: Counts = {
  sent: 0,
  bounced: 0,
  replied: 0,
  interested: 0,
  not_interested: 0,
  auto_replied: 0,
  unsubscribed: 0,
  tracked: 0,
  opens: 0,
  unique_opens: 0,
  clicks: 0,
  unique_clicks: 0,
  machine_opens: 0,
  machine_clicks: 0,
};
const ZERO = ZERO_COUNTS;

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
    tracked: c.tracked,
    opens: c.opens,
    unique_opens: c.unique_opens,
    clicks: c.clicks,
    unique_clicks: c.unique_clicks,
    machine_opens: c.machine_opens,
    machine_clicks: c.machine_clicks,
    rates: {
      delivery: rate(delivered, c.sent),
      bounce: rate(c.bounced, c.sent),
      reply: rate(c.replied, delivered),
      interested: rate(c.interested, delivered),
      unsubscribe: rate(c.unsubscribed, delivered),
      open: rate(c.unique_opens, c.tracked),
      click: rate(c.unique_clicks, c.tracked),
    },
  };
}
