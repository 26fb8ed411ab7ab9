/** One judged answer of an accuracy bench: right or not, and how long it took. */
export interface Judged {
  ok: boolean;
  ms: number;
}

/** The share of right answers among the rows a filter keeps, in percent to one decimal. */
export function accuracyOf<T extends Judged>(results: T[], filter: (r: T) => boolean = () => true) {
  const rows = results.filter(filter);
  return { asked: rows.length, correct_pct: Math.round((1000 * rows.filter((r) => r.ok).length) / Math.max(1, rows.length)) / 10 };
}

/** The p-th quantile (0..1) of the answers' times, in ms to one decimal. */
export function timeQuantile(results: Judged[], p: number): number {
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  return Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]! * 10) / 10;
}
