// Exact terms of a knowledge-base query: what a caller names and a passage must hold as written (an
// identifier, a person's or place's name, a quoted phrase), found by shape alone. Pure: no I/O. The
// database compares them without case, accents or separators (kb_fold, migration 0062).

/** Terms a query contributes at most (phrases first, then names and codes in order). */
export const EXACT_TERMS_MAX = 8;
/** Other words a query contributes at most, looked up by their folded spelling when full text finds none. */
export const EXACT_WORDS_MAX = 16;
const PHRASE_MAX = 200;

/** Postgres's English stop words (the `english` configuration full text uses), plus sentence openers. */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself
  they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having
  do does did doing a an the and but if or because as until while of at by for with about against between into through during
  before after above below to from up down in out on off over under again further then once here there when where why how all any
  both each few more most other some such no nor not only own same so than too very s t can will just don should now
  could would may might must shall please tell show find give list explain describe help get send call let hi hello hey thanks`.split(
    /\s+/,
  ),
);
/** Lower-case particles inside a name ("São José dos Campos", "Luis de la Fuente"). */
const NAME_PARTICLES = new Set([
  'de',
  'da',
  'do',
  'dos',
  'das',
  'del',
  'della',
  'di',
  'du',
  'la',
  'le',
  'van',
  'von',
  'der',
  'den',
  'ter',
  'al',
  'bin',
]);

const QUOTED =
  /"([^"]{1,200})"|“([^”]{1,200})”|„([^“”]{1,200})[“”]|«([^»]{1,200})»|‘([^’]{1,200})’|(?<![\p{L}\p{N}])'([^']{1,200})'(?![\p{L}\p{N}])/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
/** Letters a decomposition does not strip but that still carry an accent or a special form. */
const SPECIAL_LETTERS = /[øØłŁđĐðÐħĦıßæÆœŒþÞ]/u;

interface Token {
  text: string;
  /** Punctuation after the token ends a run (a comma, a full stop, a bracket). */
  breaksAfter: boolean;
  sentenceStart: boolean;
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  let sentenceStart = true;
  for (const raw of text.split(/\s+/)) {
    if (!raw) continue;
    const core = raw
      .replace(/^[^\p{L}\p{N}]+/u, '')
      .replace(/[^\p{L}\p{N}]+$/u, '')
      .replace(/['’]s$/u, '');
    const lead = raw.slice(0, raw.length - raw.replace(/^[^\p{L}\p{N}]+/u, '').length);
    const tail = raw.slice(raw.replace(/[^\p{L}\p{N}]+$/u, '').length);
    if (lead && out.length) out[out.length - 1]!.breaksAfter = true;
    if (!core) {
      if (out.length) out[out.length - 1]!.breaksAfter = true;
      sentenceStart ||= /[.!?:;|]/.test(raw);
      continue;
    }
    out.push({ text: core, breaksAfter: /[.,;:!?()[\]{}|"“”«»„]/.test(tail), sentenceStart });
    sentenceStart = /[.!?:;|]/.test(tail);
  }
  return out;
}

/** Holds a digit, and letters or at least three digits or digits joined by a separator: SKU-4471, W-9, 4071, 88.301.21, x-3. */
const isCode = (t: string) =>
  DIGIT.test(t) && (LETTER.test(t) || (t.match(/\p{N}/gu)?.length ?? 0) >= 3 || /\p{N}[^\p{L}\p{N}]+\p{N}/u.test(t));
const isDigits = (t: string) => /^\p{N}+$/u.test(t);
const hasAccent = (t: string) => t.normalize('NFD') !== t.normalize('NFC') || SPECIAL_LETTERS.test(t);

/**
 * The exact terms of a query, and its other words.
 *
 * Terms: quoted phrases ("…", “…”, „…“, «…», ‘…’, '…'); runs of adjacent name-like or code-like words
 * (a capitalized word that does not open a sentence, an inner capital as in MacAllister or ProLine, a
 * word written with accents, a code: letters and digits as in SKU-4471, W9 or x-3, or a number of three
 * digits or more), lower-case particles allowed inside a name, a word opening a sentence joining a run
 * when it is not a stop word; and, within a run of several words, each code and each word with accents
 * on its own (and a run opened by a sentence's first word, without that word). When no word of the query has a lower-case letter, case tells nothing and only codes,
 * accents and quotes count. Words: the query's other words (no stop words), which the ranking looks up by
 * their folded spelling only when full text finds none of them (an accent the caller left out).
 */
export function exactTerms(query: string): { terms: string[]; words: string[] } {
  const phrases: string[] = [];
  const rest = query.replace(QUOTED, (...m: unknown[]) => {
    const phrase = (m.slice(1, 7).find((g) => typeof g === 'string') as string).trim();
    if (HAS_WORD.test(phrase) && phrase.length <= PHRASE_MAX) phrases.push(phrase);
    return ' | ';
  });
  const words = tokens(rest);
  const caseTells = words.some((w) => /\p{Ll}/u.test(w.text));
  const stop = (w: Token) => STOP_WORDS.has(w.text.toLowerCase());
  const capitalized = (w: Token) => caseTells && /^\p{Lu}(?:\p{Ll}|$)/u.test(w.text) && !stop(w);
  const innerCapital = (w: Token) => caseTells && /^.+\p{Lu}/u.test(w.text) && (w.text.match(/\p{L}/gu)?.length ?? 0) >= 2;
  const strong = (w: Token) => isCode(w.text) || hasAccent(w.text) || innerCapital(w);
  const nameLike = (w: Token) => strong(w) || (capitalized(w) && !w.sentenceStart);
  const runs: Token[][] = [];
  let run: Token[] = [];
  const close = () => {
    while (run.length && NAME_PARTICLES.has(run[run.length - 1]!.text)) run.pop();
    if (run.length) runs.push(run);
    run = [];
  };
  // The next word after i that is not a particle, when no punctuation comes between.
  const nextName = (i: number) => {
    for (let j = i; j < words.length - 1 && !words[j]!.breaksAfter; j++) if (!NAME_PARTICLES.has(words[j + 1]!.text)) return words[j + 1];
    return undefined;
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const next = nextName(i);
    const joins =
      nameLike(w) ||
      // a capitalized word opening a sentence, when a name-like word follows it
      (capitalized(w) && w.sentenceStart && next !== undefined && nameLike(next)) ||
      // a particle or a short number inside a run ("dos", the 3 of "TA 3")
      (run.length > 0 && (NAME_PARTICLES.has(w.text) || isDigits(w.text)));
    if (joins && !(w.sentenceStart && run.length)) run.push(w);
    else if (joins) {
      close();
      run.push(w);
    } else close();
    if (w.breaksAfter) close();
  }
  close();
  const terms: string[] = [...phrases];
  const inTerms = new Set<string>();
  const text = (r: Token[]) => r.map((w) => w.text).join(' ');
  for (const r of runs) {
    if (r.length === 1 && !nameLike(r[0]!)) continue;
    terms.push(text(r));
    // A sentence's first word may be the name's or not ("Extension José Alves"): the run without it too.
    if (r.length > 1 && r[0]!.sentenceStart && !strong(r[0]!)) {
      const tail = r.slice(1);
      while (tail.length && NAME_PARTICLES.has(tail[0]!.text)) tail.shift();
      if (tail.length) terms.push(text(tail));
    }
    if (r.length > 1) for (const w of r) if (strong(w) && !isDigits(w.text)) terms.push(w.text);
    for (const w of r) inTerms.add(w.text);
  }
  const unique = [...new Set(terms)].slice(0, EXACT_TERMS_MAX);
  const others = words.filter((w) => !inTerms.has(w.text) && !stop(w) && LETTER.test(w.text) && w.text.length > 1).map((w) => w.text);
  return { terms: unique, words: [...new Set(others)].slice(0, EXACT_WORDS_MAX) };
}
