import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { articleText, type Article } from './retrieval-set';

// The exact-term retrieval set under bench/retrieval/ (a fictional tool distributor's knowledge base,
// CC0): near-duplicate articles that differ in an identifier, a name or a phrase, and questions that
// name it. Its rules are checked here; `half` keeps the questions the ranking may be tuned on apart from
// the held-out ones that only measure it.

export const EXACT_KINDS = ['code', 'code-variant', 'name', 'name-variant', 'phrase'] as const;
export type ExactKind = (typeof EXACT_KINDS)[number];
export const HALVES = ['tune', 'held-out'] as const;
export type Half = (typeof HALVES)[number];

export interface ExactQuestion {
  id: string;
  kind: ExactKind;
  half: Half;
  text: string;
  answers: string[];
  /** What the question names, as the question writes it. */
  term: string;
}
export interface ExactSet {
  name: string;
  licence: string;
  articles: Article[];
  questions: ExactQuestion[];
}

export const EXACT_SET_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'retrieval', 'exact-terms.json');

export function loadExactSet(file = EXACT_SET_FILE): ExactSet {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ExactSet;
}

/**
 * Text as the set's rules compare it: lower case, without accents (decomposed, marks dropped, and the
 * letters that do not decompose spelled out), every run of characters other than letters and digits a
 * single space, and a space between letters and digits, so "SKU-4471", "sku 4471" and "SKU4471" read
 * alike, as do "Zoë Müller" and "ZOE MULLER".
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/æ/g, 'ae')
    .replace(/œ/g, 'oe')
    .replace(/þ/g, 'th')
    .replace(/[øłđðħı]/g, (c) => ({ ø: 'o', ł: 'l', đ: 'd', ð: 'd', ħ: 'h', ı: 'i' })[c]!)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/(\p{L})(\p{N})/gu, '$1 $2')
    .replace(/(\p{N})(\p{L})/gu, '$1 $2')
    .trim();
}

const holds = (text: string, term: string) => ` ${foldText(text)} `.includes(` ${foldText(term)} `);
const wordsOf = (text: string) => new Set(foldText(text).split(' '));

/** Share of the article's folded words another article also has (1: every word). */
export function sharedWords(article: Article, other: Article): number {
  const own = wordsOf(articleText(article));
  const theirs = wordsOf(articleText(other));
  return [...own].filter((w) => theirs.has(w)).length / own.size;
}

/** An answer's near-duplicate shares at least this share of its words. */
export const NEAR_DUPLICATE_SHARE = 0.6;

/**
 * What is wrong with the set, one line each (empty: nothing). Sizes: 40 articles, 60 questions, 10 of
 * each kind, 4 of each kind in each half. The question holds its term; the term (folded) is in its
 * answer and in no other article; `code`, `name` and `phrase` questions write it as the answer does
 * (case and accents included), `*-variant` ones do not; a `phrase` question quotes it. Every answer has a
 * near-duplicate sharing at least 60% of its words.
 */
export function checkExactSet(set: ExactSet): string[] {
  const problems: string[] = [];
  const byId = new Map(set.articles.map((a) => [a.id, a]));
  if (byId.size !== set.articles.length) problems.push('article ids are not unique');
  if (new Set(set.questions.map((q) => q.id)).size !== set.questions.length) problems.push('question ids are not unique');
  if (set.articles.length < 40) problems.push(`${set.articles.length} articles, fewer than 40`);
  if (set.questions.length < 60) problems.push(`${set.questions.length} questions, fewer than 60`);
  for (const kind of EXACT_KINDS) {
    const of = set.questions.filter((q) => q.kind === kind);
    if (of.length < 10) problems.push(`${of.length} ${kind} questions, fewer than 10`);
    for (const half of HALVES) {
      const n = of.filter((q) => q.half === half).length;
      if (n < 4) problems.push(`${n} ${kind} questions in the ${half} half, fewer than 4`);
    }
  }
  for (const q of set.questions) {
    if (!EXACT_KINDS.includes(q.kind)) problems.push(`${q.id}: unknown kind ${q.kind}`);
    if (!HALVES.includes(q.half)) problems.push(`${q.id}: unknown half ${q.half}`);
    const answers = q.answers.map((a) => byId.get(a));
    if (answers.length === 0 || answers.some((a) => !a)) {
      problems.push(`${q.id}: an answer names no article`);
      continue;
    }
    if (!q.term || !q.text.includes(q.term)) problems.push(`${q.id}: the question does not hold its term ${q.term}`);
    const holders = set.articles.filter((a) => holds(articleText(a), q.term)).map((a) => a.id);
    if (holders.length !== q.answers.length || !q.answers.every((a) => holders.includes(a)))
      problems.push(`${q.id}: term ${q.term} is in ${holders.join(', ') || 'no article'}, not only in its answer`);
    const verbatim = answers.every((a) => articleText(a!).includes(q.term));
    if (q.kind.endsWith('-variant') ? verbatim : !verbatim)
      problems.push(`${q.id}: a ${q.kind} question ${verbatim ? 'writes its term as the answer does' : 'writes its term otherwise'}`);
    if (q.kind === 'phrase' && !/["“«„]/.test(q.text.slice(Math.max(0, q.text.indexOf(q.term) - 1), q.text.indexOf(q.term))))
      problems.push(`${q.id}: a phrase question quotes its term`);
    for (const a of answers) {
      const near = set.articles.filter((o) => o.id !== a!.id).some((o) => sharedWords(a!, o) >= NEAR_DUPLICATE_SHARE);
      if (!near) problems.push(`${q.id}: ${a!.id} has no near-duplicate sharing ${NEAR_DUPLICATE_SHARE * 100}% of its words`);
    }
  }
  return problems;
}
