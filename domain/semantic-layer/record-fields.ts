import type { Catalog, EntityDef } from './catalog';
import type { Mention } from './mentions';
import type { Plan } from './plan';
import type { WordUse } from './reading';
import type { ValueMatch } from './values';

/**
 * What a list shows: the fields named before the entity ("emails of contacts") or after "their" / "with";
 * fields of a joined record ("each won deal with its contact's name", "open deals with their account's
 * industry"); and, for one record named ("what industry is Fabrikam in", "who is the contact on the X deal"),
 * every field the question names. The entity's name when nothing else is asked.
 */
export function listFields(input: {
  catalog: Catalog;
  def: EntityDef;
  tokens: string[];
  fields: Mention[];
  entities: Mention[];
  entity: string;
  matches: ValueMatch[];
  text: string;
  plan: Plan;
  pathOf: (owner: string, field: string) => string | null;
  use: WordUse;
}): string[] {
  const { catalog, def, tokens, fields, entities, entity, matches, text, plan, pathOf, use } = input;
  // A field the question filters on ("with status completed") is a condition, not a column asked for.
  const filtered = new Set(plan.filters.flatMap((f) => ('field' in f ? [f.field] : [])));
  if (def.fields.first_name && /\bfirst (?:name )?and last names?\b/.test(text)) {
    const m = text.match(/\bfirst (?:name )?and last names?\b/)!;
    const start = (text.slice(0, m.index).match(/ /g) ?? []).length;
    use.use(start, start + m[0].split(' ').length, 'fields first_name, last_name');
    return ['first_name', 'last_name'];
  }
  const own = entities.find((m) => m.entity === entity);
  const valueWords = new Set(matches.flatMap((m) => Array.from({ length: m.end - m.start }, (_, i) => m.start + i)));
  // One record named by its name: a question about its details.
  const pinned = plan.filters.some((f) => f.op === 'eq' && (f.field === def.label || f.field === 'name'));
  const lead = (start: number) => {
    const before = tokens.slice(Math.max(0, start - 3), start);
    return before.some((t) => ['their', 'its', 'his', 'her', 'with', 'and', 'plus', 'including', 'showing'].includes(t));
  };
  const out: { path: string; start: number; end: number }[] = [];
  const taken = new Set<number>();
  // A joined record, with the field of it named next ("its contact's name", "their account industry"), else its name.
  for (const j of entities) {
    if (j.entity === entity || valueWords.has(j.start)) continue;
    const join = Object.entries(def.joins).find(([, x]) => x.entity === j.entity);
    if (!join || !(pinned || lead(j.start))) continue;
    const next = fields.find((m) => m.start === j.end && m.entity === j.entity);
    const path = next ? pathOf(j.entity, next.field!) : pathOf(j.entity, catalog[j.entity]!.label);
    if (!path) continue;
    out.push({ path, start: j.start, end: next ? next.end : j.end });
    for (let i = j.start; i < (next ? next.end : j.end); i++) taken.add(i);
  }
  for (const m of fields) {
    if (taken.has(m.start) || valueWords.has(m.start)) continue;
    const path = pathOf(m.entity, m.field!);
    if (!path || filtered.has(path)) continue;
    // A word naming fields of several entities is read once, as the entity's own when it has it.
    if (m.entity !== entity && fields.some((o) => o.start === m.start && o.entity === entity)) continue;
    const joined = path.includes('.');
    const type = joined ? undefined : def.fields[m.field!]?.type;
    const shownType = !type || !(['date', 'money', 'number'] as string[]).includes(type);
    const before = own ? m.start < own.start : false;
    const their = ['their', 'and', 'with', 'its'].includes(tokens[m.start - 1] ?? '');
    if (pinned || (shownType && (before || their)) || (joined && lead(m.start))) {
      out.push({ path, start: m.start, end: m.end });
      for (let i = m.start; i < m.end; i++) taken.add(i);
    }
  }
  for (const f of out) use.use(f.start, f.end, `field ${f.path}`);
  const names = [...new Set(out.map((f) => f.path))];
  if (names.length === 0) return [def.label];
  if (pinned || out.some((f) => f.path.includes('.'))) return names.includes(def.label) ? names : [def.label, ...names];
  if (names.length > 1 || names[0] !== def.label) {
    const mentionsName = tokens.some((t) => t === 'name' || t === 'names');
    return mentionsName && !names.includes(def.label) ? [def.label, ...names] : names;
  }
  return names;
}
