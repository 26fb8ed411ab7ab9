import { fold, words } from './text';

/**
 * Text read by its start or end: "a .fr domain", "emails ending in .de", "names starting with C", "which
 * accounts use a .io domain". Read from the question as typed (the words drop a leading dot), each with the
 * word that names the field, if any, and where it sits among the question's words.
 */

export interface Affix {
  op: 'starts_with' | 'ends_with';
  value: string;
  /** The word naming the field ("domain", "email", "name"), or null: the entity's address field then. */
  fieldWord: string | null;
  start: number;
  end: number;
}

const FIELD = '(domains?|websites?|sites?|urls?|e-?mail address(?:es)?|e-?mails?|address(?:es)?|names?|titles?|phone numbers?|phones?)';
const TLD =
  /(?:^|[\s(])\.([a-z0-9-]{2,24})\b(?:\s+(domains?|websites?|sites?|urls?|e-?mail address(?:es)?|e-?mails?|address(?:es)?|extensions?))?/g;
const ENDS = new RegExp(
  `\\b${FIELD}\\s+(?:that\\s+|which\\s+)?(?:is\\s+|are\\s+)?(?:ends?|ending|ended)\\s+(?:with|in|on)\\s+["'“‘]?([^\\s"'”’?!,]+)`,
  'g',
);
const STARTS = new RegExp(
  `\\b(?:${FIELD}\\s+)?(?:that\\s+|which\\s+|whose\\s+names?\\s+)?(?:starts?|starting|begins?|beginning|started)\\s+with\\s+(?:the\\s+letter\\s+|an?\\s+)?["'“‘]?([^\\s"'”’?!,]+)`,
  'g',
);

export function textAffixes(question: string): Affix[] {
  const text = fold(question);
  const out: Affix[] = [];
  const at = (index: number, said: string) => {
    const start = words(text.slice(0, index)).length;
    return { start, end: start + words(said).length };
  };
  for (const m of text.matchAll(ENDS)) {
    const value = m[2]!.replace(/[.]+$/, '');
    out.push({ op: 'ends_with', value, fieldWord: m[1]!, ...at(m.index ?? 0, m[0]) });
  }
  // Without a field's word, a start is the name's ("companies starting with W").
  for (const m of text.matchAll(STARTS))
    out.push({ op: 'starts_with', value: m[2]!, fieldWord: m[1] ?? 'name', ...at(m.index ?? 0, m[0]) });
  for (const m of text.matchAll(TLD)) {
    const index = (m.index ?? 0) + (m[0].startsWith('.') ? 0 : 1);
    const said = m[0].trimStart().replace(/^\(/, '');
    const span = at(index, said);
    if (out.some((a) => a.start <= span.start && span.start < a.end)) continue;
    out.push({ op: 'ends_with', value: `.${m[1]!}`, fieldWord: m[2] ?? null, ...span });
  }
  return out;
}
