import type { Catalog } from './catalog';
import type { Mention } from './mentions';
import type { Plan } from './plan';
import { isPlace, type WordUse } from './reading';
import { ASC_WORDS, AVG_WORDS, COUNT_WORDS, DESC_WORDS, DISTINCT_WORDS, MAX_WORDS, MIN_WORDS, SUM_WORDS } from './vocabulary';

/**
 * The second half of the word account: the words the plan used through its shape rather than one rule
 * (the entity, the fields its paths name, counting and ranking words when it counts or ranks), and the
 * sentence for the words nothing used.
 */
export function accountPlanWords(input: {
  tokens: string[];
  text: string;
  at: (index: number) => number;
  plan: Plan;
  use: WordUse;
  mentions: Mention[];
  catalog: Catalog;
  limit: number | undefined;
  limitSpan: [number, number] | null;
  rateSpans: Record<string, [number, number]>;
  superlative: string | undefined;
  groupLeads: [number, number][];
}): void {
  const { tokens, text, at, plan, use, mentions, catalog, limit, limitSpan, rateSpans } = input;
  const def = catalog[plan.entity]!;
  const paths = pathsOf(plan);
  const joined = new Map(Object.entries(def.joins).map(([name, j]) => [name, j.entity]));
  const usedJoins = new Set([...paths].filter((p) => p.includes('.')).map((p) => joined.get(p.split('.')[0]!)));
  for (const m of mentions) {
    if (!m.field) {
      if (m.entity === plan.entity) use.use(m.start, m.end, `entity ${m.entity}`);
      else if (usedJoins.has(m.entity)) use.use(m.start, m.end, `entity ${m.entity} (joined)`);
      continue;
    }
    if (m.entity === plan.entity && paths.has(m.field)) use.use(m.start, m.end, `field ${m.field}`);
    else
      for (const [name, other] of joined)
        if (other === m.entity && paths.has(`${name}.${m.field}`)) use.use(m.start, m.end, `field ${name}.${m.field}`);
  }
  const counts = plan.measures.length > 0 || plan.having.length > 0;
  const ranks = plan.order.length > 0;
  const mark = (pattern: RegExp, as: string) => {
    for (const m of text.matchAll(new RegExp(pattern.source, 'g'))) use.use(at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1, as);
  };
  if (counts || ranks || plan.fields.some((f) => ['number', 'money'].includes(fieldType(catalog, plan.entity, f) ?? ''))) {
    mark(COUNT_WORDS, 'measure');
    mark(SUM_WORDS, 'measure');
  }
  if (plan.measures.some((m) => m.startsWith('avg:'))) mark(AVG_WORDS, 'measure average');
  if (plan.measures.some((m) => m.startsWith('count_distinct:'))) mark(DISTINCT_WORDS, 'measure distinct');
  if (ranks || plan.measures.some((m) => /^(min|max):/.test(m))) {
    mark(DESC_WORDS, 'order');
    mark(ASC_WORDS, 'order');
    mark(MAX_WORDS, 'order');
    mark(MIN_WORDS, 'order');
    mark(/\b(sorted|ordered|ranked|sort|order|rank|ranking|by)\b/, 'order');
    for (const [start, end] of input.groupLeads) use.use(start, end, 'order');
    if (input.superlative) mark(new RegExp(`\\b${input.superlative}\\b`), 'order');
  }
  if (plan.measures.some((m) => /^(min|max):/.test(m))) {
    mark(MAX_WORDS, 'measure');
    mark(MIN_WORDS, 'measure');
  }
  if (plan.having.length > 0)
    mark(/\b(in total|total|combined|altogether|overall|spent|sum|add up|adds up|added up)\b/, 'condition on totals');
  if (plan.dimensions.length > 0)
    mark(/\b(per|by|each|every|across|grouped|broken down|breakdown|split|separately|individually)\b/, 'group');
  // A rate said as a share of won out of closed, as a percentage.
  if (plan.measures.some((m) => m.endsWith('_rate')))
    mark(/\b(out of|divided by|over|plus|share|ratio|percentage|percent|proportion)\b/, 'measure rate');
  // The web domain and the website say where an account is on the web.
  if ([...paths].some((p) => /(^|\.)(domain|website)$/.test(p)))
    mark(/\b(website|websites|site|sites|web|url|domain|domains)\b/, 'field domain');
  for (const [key, span] of Object.entries(rateSpans)) {
    const name = key.split(':')[0]!;
    if (plan.measures.includes(name)) use.use(span[0], span[1], `measure ${name}`);
  }
  if (counts || ranks) mark(/\b(numbers?|counts?|amounts?|small|big|large|high|low|long|short|much|many)\b/, 'measure');
  // A number said in general words ("order value", "worth") is the one the plan totals, averages or ranks by.
  const numeric = [...plan.measures.filter((m) => m.includes(':')).map((m) => m.split(':')[1]!), ...plan.order.map((o) => o.by)].some((p) =>
    ['number', 'money'].includes(fieldType(catalog, plan.entity, p) ?? ''),
  );
  if (numeric) mark(/\b(value|values|amount|amounts|worth|size|sizes|revenue|money|sums?|totals?)\b/, 'measure');
  if (plan.dimensions.some((d) => d.grain))
    mark(/\b(days?|weeks?|months?|quarters?|years?|dates?|daily|weekly|monthly|quarterly|yearly|annually)\b/, 'group by period');
  // A yes/no field grouped by is its "status" or "flag".
  if (plan.dimensions.some((d) => fieldType(catalog, plan.entity, d.field) === 'bool')) mark(/\b(status|flag|flags|yes|no)\b/, 'group');
  // An address said of a mail filter or field ("a gmail address", "gmail emails").
  if ([...paths].some((p) => /(^|\.)(email|email_domain)$/.test(p))) mark(/\b(address|addresses|e-?mails?|mail)\b/, 'field email');
  // Formatting asked for ("rounded to 2 decimals") and "whatever their status": nothing to filter on.
  mark(
    /\b(?:(?:rounded|round|to|with|in)\s+)?(?:\d+|one|two|three|four)\s+(?:decimals?|decimal places|places|digits)\b|\b(?:as an?|in|as)\s+(?:percentage|percent)\b|\brounded\b/,
    'format',
  );
  mark(/\b(whatever|regardless of|irrespective of) (?:their |its |the )?[a-z]+\b/, 'all values');
  // The records' own name ("customers" of an orders table whose label is its customer column) names what is counted.
  for (const m of mentions)
    if (m.field && m.entity === plan.entity && m.field === def.label) use.use(m.start, m.end, `entity ${plan.entity}`);
  if (limitSpan && plan.limit !== undefined && plan.limit === limit) use.use(limitSpan[0], limitSpan[1], `limit ${limit}`);
  void tokens;
}

/** Every field path a plan names, with the measures' fields. */
function pathsOf(plan: Plan): Set<string> {
  const out = new Set<string>();
  for (const d of plan.dimensions) out.add(d.field);
  for (const f of plan.fields) out.add(f);
  for (const o of plan.order) out.add(o.by.includes(':') ? o.by.split(':')[1]! : o.by);
  for (const m of [...plan.measures, ...plan.having.map((h) => h.measure)]) if (m.includes(':')) out.add(m.split(':')[1]!);
  for (const f of plan.filters) if ('field' in f) out.add(f.field);
  return out;
}

function fieldType(catalog: Catalog, entity: string, path: string): string | undefined {
  const def = catalog[entity]!;
  if (!path.includes('.')) return def.fields[path]?.type;
  const [join, field] = path.split('.') as [string, string];
  return catalog[def.joins[join]?.entity ?? '']?.fields[field]?.type;
}

/** A field's name in words: its first synonym ("employees", "health score"). */
const fieldWord = (name: string, synonyms: readonly string[]) => synonyms[0] ?? name.replace(/_/g, ' ');

/** What the entity's records hold, in words: what a question about them can name. */
export function fieldsInWords(catalog: Catalog, entity: string): string {
  const def = catalog[entity]!;
  return Object.entries(def.fields)
    .filter(([name]) => name !== 'id')
    .map(([name, f]) => fieldWord(name, f.synonyms))
    .join(', ');
}

/**
 * The answer when words were not understood: which ones, what was understood, and what the records asked
 * about hold. Never a silent drop: a broader question is not answered in place of the one asked.
 */
export function notUnderstood(left: { word: string }[], plan: Plan, catalog: Catalog, read: string[]): string {
  const def = catalog[plan.entity]!;
  const said = [...new Set(left.map((w) => w.word))].map((w) => `"${w}"`).join(', ');
  const place = left.some((w) => isPlace(w.word));
  const what = `${def.singular}s`.replace(/ss$/, 's');
  const understood = [plan.entity.replace(/_/g, ' '), ...plan.measures, ...plan.dimensions.map((d) => `by ${d.field}`), ...read].join('; ');
  const reason = place
    ? `the CRM records no place for ${what} (no country, city or address)`
    : `I do not know what ${said} means for ${what}`;
  return `I cannot answer this as asked: ${reason}${place ? ` (${said})` : ''}; I understood ${understood}. ${capital(what)} have: ${fieldsInWords(catalog, plan.entity)}.`;
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
