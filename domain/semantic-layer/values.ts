import { phrase, similarity, singular } from './text';

/**
 * The organization's own values (account and contact names, stages, industries, tags, titles, domains,
 * sources, custom-table text), and how a question's words are matched against them: whole phrases
 * first, accent- and case-insensitive; then a distinctive word of a longer name; then trigram
 * similarity for a near miss. A word that names two records is reported as ambiguous, never guessed.
 */

export interface ValueEntry {
  entity: string;
  field: string;
  /** As stored. */
  value: string;
}

export interface ValueMatch extends ValueEntry {
  /** Token positions [start, end) in the question's words. */
  start: number;
  end: number;
  how: 'exact' | 'word' | 'near';
  /** The same value in other fields of equal rank ("completed" of campaigns and of campaign contacts): the plan's entity picks. */
  others?: ValueEntry[];
}

export interface AmbiguousMatch {
  start: number;
  end: number;
  said: string;
  candidates: ValueEntry[];
}

/** Fields whose values are names of records: a single word of them may identify one. */
const NAME_FIELDS = new Set(['name', 'first_name', 'last_name', 'company']);
/** Fields of a closed or short set of values: a common word ("open", "calls") may still be one of them; not a title ("Owner"). */
const KIND_FIELDS = new Set(['stage', 'status', 'type', 'industry', 'tags', 'currency', 'source', 'direction', 'email_domain', 'domain']);

/** The order in which a phrase found under several fields is read (a stage before a deal named like it). */
const FIELD_RANK: Record<string, number> = {
  stage: 0,
  status: 0,
  type: 1,
  industry: 2,
  tags: 3,
  currency: 3,
  source: 4,
  title: 5,
  name: 6,
  domain: 7,
  email_domain: 7,
  owner_id: 8,
};
const rank = (e: ValueEntry) => (FIELD_RANK[e.field] ?? 9) + (e.entity === 'accounts' ? 0 : 0.5);

export class ValueIndex {
  private readonly exact = new Map<string, ValueEntry[]>();
  private readonly byWord = new Map<string, ValueEntry[]>();
  private readonly names: { key: string; entry: ValueEntry }[] = [];

  constructor(
    readonly entries: ValueEntry[],
    /** Words that never identify a record alone (the catalog's vocabulary, common words). */
    private readonly common: ReadonlySet<string>,
    /** Other words for a value: "won" for the stage closed_won. */
    aliases: [string, ValueEntry][] = [],
  ) {
    const labels: [string, ValueEntry][] = [];
    for (const entry of entries) {
      const key = phrase(entry.value);
      if (!key) continue;
      push(this.exact, key, entry);
      // Stored in snake case ("financial_services"), said in words.
      if (key.includes('_')) push(this.exact, key.replace(/_/g, ' '), entry);
      const plural = key.split(' ').map(singular).join(' ');
      if (plural !== key) push(this.exact, plural, entry);
      if (entry.field === 'email_domain' && /^[a-z0-9-]{4,}\./.test(key)) labels.push([key.split('.')[0]!, entry]);
      // Industries are matched near too ("retailers" for Retail); other names also by a word of theirs.
      if (entry.field === 'industry') this.names.push({ key, entry });
      if (NAME_FIELDS.has(entry.field)) {
        this.names.push({ key, entry });
        const parts = key.split(' ');
        if (parts.length > 1) for (const word of parts) if (word.length >= 3 && !common.has(word)) push(this.byWord, word, entry);
      }
    }
    // Other words for values come after the organization's own: "software" as the data writes it ("Software") first.
    for (const [key, entry] of aliases) push(this.exact, phrase(key), entry);
    // A mail domain by its name alone ("gmail" for gmail.com), unless that word names a record.
    for (const [label, entry] of labels) if (!this.byWord.has(label) && !this.exact.has(label)) push(this.exact, label, entry);
  }

  /** Whether a word is, or is a word of, one of the organization's values (or near one): not a word to look up. */
  holds(word: string): boolean {
    const key = phrase(word);
    if (this.exact.has(key) || this.exact.has(singular(key)) || this.byWord.has(key)) return true;
    return this.names.some((n) => n.key.split(' ').some((w) => similarity(w, key) >= 0.5));
  }

  /**
   * Matches over the question's words, longest phrases first; `skip` marks words already read as
   * something else (dates, numbers). Exact phrases, then a word of a name, then near misses.
   */
  match(tokens: string[], skip: ReadonlySet<number>): { matches: ValueMatch[]; ambiguous: AmbiguousMatch[] } {
    const taken = new Set(skip);
    const matches: ValueMatch[] = [];
    const ambiguous: AmbiguousMatch[] = [];
    const free = (s: number, e: number) => {
      for (let i = s; i < e; i++) if (taken.has(i)) return false;
      return true;
    };
    const claim = (s: number, e: number) => {
      for (let i = s; i < e; i++) taken.add(i);
    };
    for (let size = Math.min(6, tokens.length); size >= 1; size--) {
      for (let s = 0; s + size <= tokens.length; s++) {
        if (!free(s, s + size)) continue;
        const said = tokens.slice(s, s + size).join(' ');
        let found =
          this.exact.get(said) ??
          this.exact.get(
            tokens
              .slice(s, s + size)
              .map(singular)
              .join(' '),
          );
        // A common word ("sales", "new", "owner") names a record or a title only as part of a longer name.
        if (found && size === 1 && this.common.has(said)) found = found.filter((e) => KIND_FIELDS.has(e.field));
        if (!found?.length) continue;
        const best = pickBest(found);
        if (distinctValues(best) > 1) ambiguous.push({ start: s, end: s + size, said, candidates: best });
        else matches.push({ ...best[0]!, start: s, end: s + size, how: 'exact', ...others(best) });
        claim(s, s + size);
      }
    }
    for (let s = 0; s < tokens.length; s++) {
      const word = tokens[s]!;
      if (taken.has(s) || word.length < 3 || this.common.has(word)) continue;
      const found = this.byWord.get(word);
      if (found) {
        const best = pickBest(found);
        if (distinctValues(best) > 1) ambiguous.push({ start: s, end: s + 1, said: word, candidates: best });
        else matches.push({ ...best[0]!, start: s, end: s + 1, how: 'word', ...others(best) });
        claim(s, s + 1);
        continue;
      }
      if (word.length < 5 || /\d/.test(word)) continue;
      let near: { score: number; entries: ValueEntry[] } = { score: 0, entries: [] };
      for (const { key, entry } of this.names) {
        for (const part of key.split(' ')) {
          if (part.length < 4) continue;
          const score = similarity(word, part);
          if (score > near.score + 1e-9) near = { score, entries: [entry] };
          else if (Math.abs(score - near.score) < 1e-9 && !near.entries.includes(entry)) near.entries.push(entry);
        }
      }
      if (near.score >= 0.4) {
        const best = pickBest(near.entries);
        if (distinctValues(best) > 1) ambiguous.push({ start: s, end: s + 1, said: word, candidates: best });
        else matches.push({ ...best[0]!, start: s, end: s + 1, how: 'near', ...others(best) });
        claim(s, s + 1);
      }
    }
    return { matches, ambiguous };
  }
}

function push(map: Map<string, ValueEntry[]>, key: string, entry: ValueEntry) {
  const list = map.get(key) ?? [];
  const same = (e: ValueEntry) =>
    e.entity === entry.entity && e.field === entry.field && e.value.toLowerCase() === entry.value.toLowerCase();
  if (!list.some(same)) list.push(entry);
  map.set(key, list);
}

/** Two readings are a question to ask only when they are different values (one value of two entities is one reading). */
const distinctValues = (entries: ValueEntry[]) => new Set(entries.map((e) => e.value.toLowerCase())).size;
const others = (entries: ValueEntry[]) => (entries.length > 1 ? { others: entries.slice(1) } : {});

/** The entries of the best-ranked field; several of them (two accounts named alike) are an ambiguity. */
function pickBest(entries: ValueEntry[]): ValueEntry[] {
  const top = Math.min(...entries.map(rank));
  const best = entries.filter((e) => rank(e) === top);
  const distinct = new Map(best.map((e) => [`${e.entity}.${e.field}.${e.value}`, e]));
  return [...distinct.values()];
}
