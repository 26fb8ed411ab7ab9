import type { Catalog, EntityDef, Grain } from './catalog';
import { singular } from './text';

/** Where a question names an entity or a field of the catalog, and the words that say which date or grain it means. */

/** An entity (no field) or a field of one, named by the words [start, end) of a question. */
export interface Mention {
  entity: string;
  field?: string;
  start: number;
  end: number;
  word: string;
}

/** Where an entity or a field is named, longest phrase first. */
export function findMentions(tokens: string[], skip: ReadonlySet<number>, catalog: Catalog): Mention[] {
  const phrases: { words: string[]; entity: string; field?: string }[] = [];
  for (const def of Object.values(catalog)) {
    for (const s of def.synonyms) phrases.push({ words: s.split(' '), entity: def.name });
    for (const [name, f] of Object.entries(def.fields))
      for (const s of f.synonyms) phrases.push({ words: s.split(' '), entity: def.name, field: name });
  }
  phrases.sort((a, b) => b.words.length - a.words.length);
  const taken = new Set(skip);
  const out: Mention[] = [];
  let length = phrases[0]?.words.length ?? 0;
  for (const p of phrases) {
    // Words are taken once a longer phrase read them; phrases of one length all read (several entities share words).
    if (p.words.length !== length) {
      for (const m of out) for (let i = m.start; i < m.end; i++) taken.add(i);
      length = p.words.length;
    }
    for (let s = 0; s + p.words.length <= tokens.length; s++) {
      let ok = true;
      for (let i = 0; i < p.words.length; i++) {
        const t = tokens[s + i]!;
        if (taken.has(s + i) || (t !== p.words[i] && singular(t) !== p.words[i] && t !== `${p.words[i]}s`)) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      // The same words name fields of several entities: keep every reading, the caller picks by entity.
      out.push({
        entity: p.entity,
        field: p.field,
        start: s,
        end: s + p.words.length,
        word: tokens.slice(s, s + p.words.length).join(' '),
      });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

export function entityOfWord(word: string, catalog: Catalog): string | null {
  for (const def of Object.values(catalog)) if (def.synonyms.includes(word) || def.synonyms.includes(singular(word))) return def.name;
  return null;
}

export function fieldOfWord(def: EntityDef, word: string): string | null {
  for (const [name, f] of Object.entries(def.fields)) if (f.synonyms.includes(word) || f.synonyms.includes(singular(word))) return name;
  return null;
}

export function grainAt(tokens: string[], start: number): Grain | null {
  const word = singular(tokens[start] ?? '');
  return (['day', 'week', 'month', 'quarter', 'year'] as Grain[]).find((g) => g === word) ?? null;
}

/** The date a time question means: one its words name ("closed", "created", "close date"), else the entity's default. */
export function dateFieldOf(def: EntityDef, text: string): string | null {
  let best: { name: string; length: number } | null = null;
  for (const [name, f] of Object.entries(def.fields)) {
    if (f.type !== 'date') continue;
    for (const s of f.synonyms) {
      if (new RegExp(`\\b${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(text) && (!best || s.length > best.length))
        best = { name, length: s.length };
    }
  }
  return best?.name ?? def.defaultDate ?? null;
}

/** "Which account …" asks for one; "which accounts …" for several. */
export function singularHead(mentions: Mention[], target: Mention | undefined): boolean {
  const head = target ?? mentions[0];
  return Boolean(head && singular(head.word) === head.word && !/s$/.test(head.word));
}

export const joinsTo = (def: EntityDef, others: string[]) => Object.values(def.joins).some((j) => others.includes(j.entity));

export const CRM = ['accounts', 'contacts', 'deals', 'activities', 'tags', 'campaigns', 'campaign_contacts', 'conversations'];
export const charOf = (text: string, token: number) => text.split(' ').slice(0, token).join(' ').length + (token > 0 ? 1 : 0);
