import { sameResult } from './golden-set';

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

/**
 * An answer holds the gold when some of its columns, as many as the gold has, give the gold's rows (an answer
 * may show more than was asked, e.g. the value beside a name); nothing found and a lone zero or null say the same.
 */
export function answers(rows: unknown[][], gold: unknown[][]): boolean {
  const nothing = (r: unknown[][]) =>
    r.length === 0 || (r.length === 1 && r[0]!.length >= 1 && r[0]!.every((v) => v === null || Number(v) === 0));
  if (gold.length === 0 || (gold.length === 1 && gold[0]!.length === 1 && nothing(gold))) return nothing(rows);
  if (rows.length !== gold.length) return false;
  const width = gold[0]?.length ?? 0;
  const columns = rows[0]?.length ?? 0;
  if (columns < width) return false;
  for (const pick of combinations(columns, width))
    if (
      sameResult(
        rows.map((row) => pick.map((i) => row[i])),
        gold,
      )
    )
      return true;
  return false;
}

function* combinations(n: number, k: number, start = 0, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === k) {
    yield prefix;
    return;
  }
  for (let i = start; i < n; i++) yield* combinations(n, k, i + 1, [...prefix, i]);
}
