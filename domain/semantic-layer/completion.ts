import type { Catalog, EntityDef } from './catalog';
import type { Plan } from './plan';
import { carriesNothing, isPlace, type WordReading } from './reading';
import { words } from './text';

/**
 * What a model may complete when the rules leave words of a question unread: each run of adjacent unread
 * words names at most one field of the entity the question is about (or of a record it joins). Only that:
 * a word of logic or comparison ("not", "without", "more"), a place or a number changes what is asked,
 * and the question stays a sentence of what was not understood.
 */

/** A run of adjacent unread words, by token positions [start, end). */
export interface UnreadPhrase {
  text: string;
  start: number;
  end: number;
}

/** One field the phrase may name: the words the parser reads for it, and its path. */
export interface FieldOption {
  term: string;
  path: string;
}

const LOGIC =
  /^(not|no|non|none|nor|never|without|except|excluding|exclude|but|other|others|else|neither|more|most|less|least|fewer|fewest|greater|greatest|bigger|biggest|smaller|smallest|larger|largest|higher|highest|lower|lowest|above|below|over|under|between|than|top|bottom|first|last|only|all|every|each|same|different|both|either|average|sum|count|total|per|versus|vs)$/;

/** The unread words as phrases, or none when one of them is not a field's name to complete. */
export function unreadPhrases(readings: readonly WordReading[]): UnreadPhrase[] | null {
  const phrases: UnreadPhrase[] = [];
  for (const [i, r] of readings.entries()) {
    if (r.as !== null || carriesNothing(r.word)) continue;
    if (!/^\p{L}+$/u.test(r.word) || LOGIC.test(r.word) || isPlace(r.word)) return null;
    const last = phrases.at(-1);
    // Words read as nothing between two unread ones ("date of the close") stay in one phrase.
    if (last && readings.slice(last.end, i).every((x) => x.as === null)) {
      last.end = i + 1;
      last.text = readings
        .slice(last.start, last.end)
        .map((x) => x.word)
        .join(' ');
    } else phrases.push({ text: r.word, start: i, end: i + 1 });
  }
  return phrases;
}

/**
 * The fields a phrase of a question about `plan.entity` may name: the entity's own (by their first
 * synonym) and those of the records it joins ("account industry"), one option per field.
 */
export function fieldOptions(catalog: Catalog, plan: Plan): FieldOption[] {
  const def = catalog[plan.entity];
  if (!def) return [];
  // A record's fields by their first synonym, ids left out; a joined record's said and reached through its join.
  const fieldsOf = (entity: EntityDef, join?: string): FieldOption[] =>
    Object.entries(entity.fields).flatMap(([name, field]) => {
      const term = field.synonyms[0];
      if (!term || field.type === 'id') return [];
      return [join ? { term: `${join.replace(/_/g, ' ')} ${term}`, path: `${join}.${name}` } : { term, path: name }];
    });
  const options = [
    ...fieldsOf(def),
    ...Object.entries(def.joins).flatMap(([join, { entity }]) => (catalog[entity] ? fieldsOf(catalog[entity], join) : [])),
  ];
  const seen = new Set<string>();
  return options.filter((o) => !seen.has(o.term) && seen.add(o.term));
}

/**
 * The question with each completed phrase said as its field's words: the tokens as written (names keep
 * their capitals), the phrase's span replaced.
 */
export function withPhrasesRead(question: string, read: readonly { phrase: UnreadPhrase; option: FieldOption }[]): string {
  const cased = words(question, true);
  const out: string[] = [];
  for (let i = 0; i < cased.length; i++) {
    const hit = read.find((r) => r.phrase.start === i);
    if (hit) {
      out.push(hit.option.term);
      i = hit.phrase.end - 1;
    } else out.push(cased[i]!);
  }
  return out.join(' ');
}
