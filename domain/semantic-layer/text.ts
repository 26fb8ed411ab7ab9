/**
 * Text as the question parser compares it: lower case, accents removed, punctuation as spaces (but the
 * characters of emails, domains and numbers kept), and trigram similarity for near misses.
 */

/** Lower case without accents: "Société Générale" → "societe generale". */
export const fold = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();

/**
 * The words of a text, folded; `.`, `@`, `-`, `_` and `'` stay inside a word (acme.com, a@b.co, closed_won).
 * `keepCase`: the same words with their capitals ("Initech"), one for one, to tell a name from a common word.
 */
export function words(text: string, keepCase = false): string[] {
  return (
    (keepCase ? text.normalize('NFKD').replace(/\p{M}+/gu, '') : fold(text))
      .replace(/(\d),(?=\d{3}\b)/g, '$1')
      .replace(/[’`]/g, "'")
      .replace(/[^\p{L}\p{N}.@_\-'$€£%]+/gu, ' ')
      .split(' ')
      // A hyphen joins words ("partner-tagged"), except inside an address or a domain.
      .flatMap((w) => (/\p{L}-\p{L}/u.test(w) && !/[.@]/.test(w) ? w.split('-') : [w]))
      .map((w) => w.replace(/^['.\-@]+|['.\-?!,]+$/g, '').replace(/'s$/, ''))
      .filter(Boolean)
  );
}

/** One folded phrase: the words joined by single spaces. */
export const phrase = (text: string) => words(text).join(' ');

function trigrams(text: string): Set<string> {
  const grams = new Set<string>();
  for (const word of text.split(' ')) {
    const padded = `  ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3));
  }
  return grams;
}

/** pg_trgm's similarity: shared trigrams over all trigrams of both (0..1). */
export function similarity(a: string, b: string): number {
  const x = trigrams(a);
  const y = trigrams(b);
  let shared = 0;
  for (const g of x) if (y.has(g)) shared++;
  const all = x.size + y.size - shared;
  return all === 0 ? 0 : shared / all;
}

/** Simple English plural and singular forms, for matching "industries" with "industry". */
export function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(ses|xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}
