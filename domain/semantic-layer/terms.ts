import type { Catalog } from './catalog';
import { singular, words } from './text';

/**
 * The catalog's words (entity and field synonyms) as terms an unknown word of a question can be read as.
 * The rules know every term exactly; a word they do not know ("headcounts", "signups", "verticals") is
 * looked up by meaning (the embedder) and, when one term is clearly nearest, read as that term.
 */

export interface CatalogTerm {
  term: string;
  /** What the term names: `deals`, or `accounts.industry`; two terms of one target are one choice. */
  target: string;
}

/** Every entity and field synonym of the catalog, once per (term, target). */
export function catalogTerms(catalog: Catalog): CatalogTerm[] {
  const seen = new Set<string>();
  const terms: CatalogTerm[] = [];
  const add = (term: string, target: string) => {
    const key = `${term}\u0000${target}`;
    if (seen.has(key)) return;
    seen.add(key);
    terms.push({ term, target });
  };
  for (const def of Object.values(catalog)) {
    for (const s of def.synonyms) add(s, def.name);
    for (const [name, field] of Object.entries(def.fields)) for (const s of field.synonyms) add(s, `${def.name}.${name}`);
  }
  return terms;
}

/**
 * The words of a question that nothing reads: letters only, four or more, neither a word of the catalog
 * or of the parser's vocabulary (`known`, also in the singular) nor of the organization's values (`isValue`).
 */
export function unknownWords(question: string, known: ReadonlySet<string>, isValue: (word: string) => boolean): string[] {
  const out = new Set<string>();
  for (const word of words(question)) {
    if (!/^\p{L}{4,}$/u.test(word)) continue;
    if (known.has(word) || known.has(singular(word)) || isValue(word)) continue;
    out.add(word);
  }
  return [...out];
}

/** A nearest term per word: the best score, and the best score of any other target. */
export interface Nearest {
  word: string;
  term: CatalogTerm;
  score: number;
  runnerUp: number;
  /** The nearest term of each of the three nearest targets, nearest first (what a chooser picks among). */
  options: { term: CatalogTerm; score: number }[];
}

/** The term nearest each word by cosine similarity of their vectors, with the runner-up of another target. */
export function nearestTerms(wordsAsked: string[], wordVectors: number[][], terms: CatalogTerm[], termVectors: number[][]): Nearest[] {
  return wordsAsked.map((word, i) => {
    const byTarget = new Map<string, { term: CatalogTerm; score: number }>();
    for (const [j, term] of terms.entries()) {
      const score = cosine(wordVectors[i]!, termVectors[j]!);
      if (score > (byTarget.get(term.target)?.score ?? -1)) byTarget.set(term.target, { term, score });
    }
    const ranked = [...byTarget.values()].sort((a, b) => b.score - a.score);
    const [first, second] = ranked;
    return { word, term: first!.term, score: first!.score, runnerUp: second?.score ?? -1, options: ranked.slice(0, 3) };
  });
}

/**
 * How near is near enough. Measured on multilingual-e5-small: a word and its own inflection or a close
 * synonym score 0.95-0.99 ("signup" / "signed up" 0.97, "employer" / "employees" 0.95 too, which is why the
 * margin matters), while unrelated words still reach 0.85-0.91 ("banana" / "money" 0.89), so only a clear
 * winner is taken.
 */
export const TERM_MIN_SCORE = 0.95;
export const TERM_MIN_MARGIN = 0.03;
/** Below a clear winner but this near: ambiguous, for a chooser (the local model) to settle among the options. */
export const TERM_AMBIGUOUS_SCORE = 0.92;

/** Whether the embedder alone reads the word as its nearest term. */
export const clearlyNearest = (n: Nearest) => n.score >= TERM_MIN_SCORE && n.score - n.runnerUp >= TERM_MIN_MARGIN;

/** The question with each word read replaced by its term. */
export function readAsTerms(question: string, read: Nearest[]): string {
  let rewritten = question;
  for (const n of read) {
    rewritten = rewritten.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(n.word)}(?![\\p{L}\\p{N}])`, 'giu'), n.term.term);
  }
  return rewritten;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
