import type { Mention } from './mentions';
import { AVG_WORDS, MAX_WORDS, MIN_WORDS, SUM_WORDS } from './vocabulary';

/** Numbers in a question: counts in words, comparisons ("more than 10k", "between 5 and 9"), and where aggregate words sit. */

export const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twenty: 20,
};
export const COMPARISON =
  /\b(more than|greater than|over|above|exceeding|exceeds|bigger than|larger than|higher than|at least|no less than|less than|fewer than|under|below|smaller than|lower than|at most|no more than|up to|equal to|equals|exactly|>=|<=|>|<|=)\s*(?:\$|€|£)?\s*(-?\d[\d,]*(?:\.\d+)?)\s*(k|m|thousand|million|%)?/g;
export const BETWEEN =
  /\bbetween\s+(?:\$|€|£)?\s*(\d[\d,]*(?:\.\d+)?)\s*(k|m|thousand|million)?\s+and\s+(?:\$|€|£)?\s*(\d[\d,]*(?:\.\d+)?)\s*(k|m|thousand|million)?/g;
export const OPS: Record<string, 'gt' | 'gte' | 'lt' | 'lte' | 'eq'> = {
  'more than': 'gt',
  'greater than': 'gt',
  over: 'gt',
  above: 'gt',
  exceeding: 'gt',
  exceeds: 'gt',
  'bigger than': 'gt',
  'larger than': 'gt',
  'higher than': 'gt',
  '>': 'gt',
  'at least': 'gte',
  'no less than': 'gte',
  '>=': 'gte',
  'less than': 'lt',
  'fewer than': 'lt',
  under: 'lt',
  below: 'lt',
  'smaller than': 'lt',
  'lower than': 'lt',
  '<': 'lt',
  'at most': 'lte',
  'no more than': 'lte',
  'up to': 'lte',
  '<=': 'lte',
  'equal to': 'eq',
  equals: 'eq',
  exactly: 'eq',
  '=': 'eq',
};
export const scale = (n: string, unit?: string) =>
  Number(n.replace(/,/g, '')) * (unit === 'k' || unit === 'thousand' ? 1000 : unit === 'm' || unit === 'million' ? 1_000_000 : 1);

export function nearestNumeric(mentions: Mention[], start: number, end: number): Mention | null {
  let best: Mention | null = null;
  let distance = Number.POSITIVE_INFINITY;
  for (const m of mentions) {
    const d = m.start > end ? m.start - end : start - m.end + 0.5;
    if (d >= 0 && d < distance && d <= 6) {
      best = m;
      distance = d;
    }
  }
  return best;
}

export function aggregateWord(text: string): { sum?: number; avg?: number; min?: number; max?: number } {
  const pos = (re: RegExp) => {
    const m = text.match(re);
    return m ? (text.slice(0, m.index).match(/ /g) ?? []).length : undefined;
  };
  return { sum: pos(SUM_WORDS), avg: pos(AVG_WORDS), min: pos(MIN_WORDS), max: pos(MAX_WORDS) };
}

export function charToToken(text: string) {
  return (index: number) => (text.slice(0, index).match(/ /g) ?? []).length;
}
