import { type Catalog, CLOSED_STAGES, type EntityDef } from './catalog';
import { entityOfWord } from './mentions';
import type { Filter } from './plan';
import { singular } from './text';
import type { ValueMatch } from './values';
import { ACTIVITY_VERBS } from './vocabulary';

/**
 * "Without" and "with" said of related records: "accounts without an open deal" (no deal whose stage is not
 * closed), "contacts never called" (no call activity), "accounts that never had a meeting", "accounts with no
 * contacts at all", "contacts without an account" (the join finds nothing), "accounts with no website" (the
 * field is empty). `span` is where the words sit; `childValues` the values said of child records ("won").
 */
export function childFilter(input: {
  op: 'with' | 'without';
  word: string;
  span: [number, number];
  tokens: readonly string[];
  def: EntityDef;
  catalog: Catalog;
  childValues: ValueMatch[];
}): { filter: Filter; read: string; values: ValueMatch[] } | null {
  const { op, word, span, tokens, def, catalog, childValues } = input;
  const said = tokens.slice(span[0], span[1]);
  const activity = ACTIVITY_VERBS[word] ?? activityType(word);
  const child = activity ? 'activities' : entityOfWord(word, catalog);
  if (child && def.children[child]) {
    const values = childValues.filter((v) => v.entity === child);
    const where: { field: string; op?: 'in' | 'not_in'; values: string[] }[] = [];
    const byField = new Map<string, string[]>();
    for (const v of values) byField.set(v.field, [...new Set([...(byField.get(v.field) ?? []), v.value])]);
    if (activity) byField.set('type', [...new Set([...(byField.get('type') ?? []), activity])]);
    for (const [field, list] of byField) where.push({ field, values: list });
    // "an open deal": one whose stage is not a closed one.
    if (child === 'deals' && said.some((t) => t === 'open' || t === 'active') && !byField.has('stage'))
      where.push({ field: 'stage', op: 'not_in', values: [...CLOSED_STAGES] });
    const narrowed = where.map((w) => `${w.field} ${w.op === 'not_in' ? 'not in' : 'in'} ${w.values.join(', ')}`).join('; ');
    return {
      filter: { op, entity: child, ...(where.length ? { where } : {}) },
      read: `${op} ${child}${narrowed ? ` (${narrowed})` : ''}`,
      values,
    };
  }
  // "contacts without an account": the join finds nothing.
  const parent = child ? Object.entries(def.joins).find(([, j]) => j.entity === child)?.[0] : undefined;
  if (parent && catalog[child!]!.fields.id)
    return { filter: { op: op === 'without' ? 'is_null' : 'not_null', field: `${parent}.id` }, read: `${op} ${parent}`, values: [] };
  const field = Object.entries(def.fields).find(([, f]) => f.synonyms.includes(word) || f.synonyms.includes(singular(word)));
  if (field)
    return {
      filter: { op: op === 'without' ? 'is_null' : 'not_null', field: field[0] },
      read: `${field[0]} ${op === 'without' ? 'empty' : 'given'}`,
      values: [],
    };
  return null;
}

const TYPES: Record<string, string> = {
  call: 'call',
  calls: 'call',
  email: 'email',
  emails: 'email',
  meeting: 'meeting',
  meetings: 'meeting',
  note: 'note',
  notes: 'note',
  task: 'task',
  tasks: 'task',
};
const activityType = (word: string) => TYPES[word];
