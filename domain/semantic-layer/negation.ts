import type { ValueMatch } from './values';

/**
 * Negated values: "not won or lost", "neither won nor lost", "not in the software industry", "not owned by
 * maya", "other than calls". A negation word before a value (or a list of values of one field joined by
 * or / and / nor) negates the whole list, so it becomes NOT IN rather than being dropped or inverted.
 */

const CUES = new Set([
  'not',
  "isn't",
  "aren't",
  "wasn't",
  "weren't",
  "doesn't",
  "don't",
  "didn't",
  'isnt',
  'arent',
  'neither',
  'except',
  'excluding',
  'exclude',
  'besides',
  'non',
  'outside',
  'excluding',
]);
/** Two-word cues, by their second word. */
const PAIRS: Record<string, string> = { than: 'other', from: 'apart' };
/** Words that may sit between a negation and its value ("not in the", "not owned by", "is not a"). */
const BRIDGE = new Set([
  'in',
  'the',
  'a',
  'an',
  'by',
  'owned',
  'is',
  'are',
  'be',
  'been',
  'of',
  'as',
  'at',
  'from',
  'tagged',
  'labelled',
  'labeled',
  'yet',
  'marked',
  'with',
  'any',
]);
const JOINERS = new Set(['or', 'and', 'nor', ',']);

export interface Negation {
  /** The matches negated, each chain of one field together. */
  matches: ValueMatch[];
  /** Where its negation word(s) sit, [start, end). */
  cue: [number, number];
}

/**
 * The negated chains of value matches. `fieldWords` holds token positions that name a field ("industry",
 * "stage"): they may sit between a negation and its value too ("title is not CEO" has none, "not in the
 * proposal stage" has them after).
 */
export function negatedValues(tokens: readonly string[], matches: readonly ValueMatch[], fieldWords: ReadonlySet<number>): Negation[] {
  const sorted = [...matches].sort((a, b) => a.start - b.start);
  const chains: ValueMatch[][] = [];
  for (const m of sorted) {
    const last = chains[chains.length - 1];
    const previous = last?.[last.length - 1];
    const between = previous ? tokens.slice(previous.end, m.start) : [];
    if (previous && previous.field === m.field && between.length <= 2 && between.every((t) => JOINERS.has(t) || t === 'either'))
      last!.push(m);
    else chains.push([m]);
  }
  const out: Negation[] = [];
  for (const chain of chains) {
    let i = chain[0]!.start - 1;
    let steps = 0;
    while (i >= 0 && steps < 5 && (BRIDGE.has(tokens[i]!) || fieldWords.has(i))) {
      i--;
      steps++;
    }
    if (i < 0) continue;
    const word = tokens[i]!;
    if (CUES.has(word)) out.push({ matches: chain, cue: [i, i + 1] });
    else if (PAIRS[word] && tokens[i - 1] === PAIRS[word]) out.push({ matches: chain, cue: [i - 1, i + 1] });
  }
  return out;
}
