import { type Catalog, CLOSED_STAGES, type EntityDef, type FieldDef } from './catalog';
import { chooseEntity } from './entity-choice';
import { CRM, type Mention, dateFieldOf, entityOfWord, fieldOfWord, findMentions, grainAt, singularHead } from './mentions';
import { BETWEEN, COMPARISON, NUMBER_WORDS, OPS, aggregateWord, charToToken, nearestNumeric, scale } from './numbers';
import { dateRangeOf } from './dates';
import { textAffixes } from './affixes';
import { childFilter } from './children';
import { negatedValues } from './negation';
import type { Plan } from './plan';
import { WordUse, type WordReading, carriesNothing } from './reading';
import { listFields } from './record-fields';
import { valueSlots } from './slots';
import { words } from './text';
import type { ValueEntry, ValueIndex, ValueMatch } from './values';
import { accountPlanWords, notUnderstood } from './word-account';
import {
  ASC_WORDS,
  CLOSED_DEALS,
  CONVERSION_RATE,
  COUNT_WORDS,
  DESC_WORDS,
  DISTINCT_WORDS,
  FORECAST,
  GRAIN_WORDS,
  GROUP_LEAD,
  NEGATED_CHILD,
  OPEN_DEALS,
  NOT_CLOSED,
  PARSER_WORDS,
  OFF_TOPIC,
  SUPERLATIVES,
  WIN_RATE,
  WITH_CHILD,
  WRITE_REQUEST,
} from './vocabulary';

/**
 * The question parser: a question in plain words to a plan over the semantic layer, by rule. Values are
 * matched against the organization's own data, periods read by `dates.ts`, numbers, comparisons and
 * top-N by pattern; the entity, measure and dimensions from the catalog's words (and, when no word names
 * an entity, from the embedder's nearest example, given as `entityHint`). What it cannot tell apart it
 * asks about; a request to change data it declines.
 */

export interface ParseContext {
  catalog: Catalog;
  index: ValueIndex;
  /** The currencies the organization's deals carry: sums of money are split by currency when there are several. */
  currencies: string[];
  today: Date;
  /** The entity whose example questions are nearest to this one (the embedder's choice), used when no word names one. */
  entityHint?: string | null;
}

export type Understanding =
  | { kind: 'plan'; plan: Plan; read: string[]; words: WordReading[] }
  | { kind: 'clarify'; text: string; options: string[] }
  | {
      kind: 'refuse';
      text: string;
      reason: 'write' | 'unknown';
      words?: WordReading[];
      /** The plan as far as the words read went, when some words were not: what a completer may finish. */
      partial?: { plan: Plan; read: string[] };
    };

export const CAPABILITIES =
  'I answer questions about your CRM data: counts, totals, averages, minimums and maximums of accounts, contacts, deals, activities, campaigns and your custom tables, grouped by stage, industry, owner, tag, account, title, source, status or period, filtered by values, amounts and dates, with rankings (top 5), win rate and conversion rate.';

export function parseQuestion(question: string, ctx: ParseContext): Understanding {
  const tokens = words(question);
  const text = tokens.join(' ');
  if (tokens.length === 0) return { kind: 'refuse', text: CAPABILITIES, reason: 'unknown' };
  if (OFF_TOPIC.test(text)) return { kind: 'refuse', reason: 'unknown', text: `That is outside the CRM. ${CAPABILITIES}` };
  if (WRITE_REQUEST.test(text))
    return { kind: 'refuse', reason: 'write', text: `I only read the CRM: I cannot change, send or delete anything. ${CAPABILITIES}` };
  if (FORECAST.test(text))
    return {
      kind: 'refuse',
      reason: 'unknown',
      text: `I answer from the records as they are and cannot forecast what will be. ${CAPABILITIES}`,
    };

  const cased = words(question, true);
  const use = new WordUse(tokens);
  const at = charToToken(text);
  const skip = new Set<number>();
  const mark = (from: number, to: number) => {
    for (let i = at(from); i <= at(Math.max(from, to - 1)); i++) skip.add(i);
  };
  const read: string[] = [];

  // Periods, then numbers: their words are not values.
  const range = dateRangeOf(text, ctx.today);
  const periodTokens: number[] = [];
  if (range) for (const piece of range.text.split(' ').filter(Boolean)) periodTokens.push(markWord(tokens, piece, skip));
  const comparisons: {
    op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq';
    value: number;
    token: number;
    end: number;
    percent: boolean;
    last: number;
  }[] = [];
  for (const m of text.matchAll(BETWEEN)) {
    const index = m.index ?? 0;
    const last = at(index + m[0].length - 1);
    comparisons.push({ op: 'gte', value: scale(m[1]!, m[2]), token: at(index), end: last, percent: false, last });
    comparisons.push({ op: 'lte', value: scale(m[3]!, m[4]), token: at(index), end: last, percent: false, last });
    mark(index, index + m[0].length);
  }
  for (const m of text.matchAll(COMPARISON)) {
    const index = m.index ?? 0;
    if ([...skip].includes(at(index + m[0].length - 1))) continue;
    if (/^(19|20)\d\d$/.test(m[2]!) && range) continue;
    comparisons.push({
      op: OPS[m[1]!]!,
      value: scale(m[2]!, m[3]),
      token: at(index),
      end: at(index + m[0].length - 1),
      percent: m[3] === '%',
      last: at(index + m[0].length - 1),
    });
    mark(index, index + m[0].length);
  }
  let limit: number | undefined;
  let limitSpan: [number, number] | null = null;
  const top =
    text.match(/\b(?:top|first|bottom|best|worst|leading)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty)\b/) ??
    text.match(
      /\b(\d+|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+(?:largest|biggest|highest|best|top|most|smallest|lowest|least|worst|fewest|leading|greatest|richest)\b/,
    ) ??
    text.match(
      /\b(?:which|what|the|list|show|name)\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+(?!days?|weeks?|months?|quarters?|years?)(?=[a-z])/,
    );
  if (top) {
    limit = NUMBER_WORDS[top[1]!] ?? Number(top[1]);
    mark(top.index ?? 0, (top.index ?? 0) + top[0].length);
    limitSpan = [at(top.index ?? 0), at((top.index ?? 0) + top[0].length - 1) + 1];
  }
  const rateSpans: Record<string, [number, number]> = {};
  for (const [name, rate] of [
    ['win_rate', WIN_RATE],
    ['conversion_rate', CONVERSION_RATE],
  ] as const) {
    for (const m of text.matchAll(new RegExp(rate.source, 'g'))) {
      mark(m.index ?? 0, (m.index ?? 0) + m[0].length);
      rateSpans[`${name}:${m.index}`] = [at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1];
    }
  }
  // Text by its start or end ("a .fr domain"): its words are not values.
  const affixes = textAffixes(question);
  for (const a of affixes) for (let i = a.start; i < a.end; i++) skip.add(i);

  // Field names of several words ("email domain", "employee count") are read before values and counting words.
  const phrases = findMentions(tokens, skip, ctx.catalog).filter((m) => m.end - m.start > 1 && m.field);
  const valueSkip = new Set(skip);
  for (const m of phrases) for (let i = m.start; i < m.end; i++) valueSkip.add(i);
  // A piece of text asked for inside a field ("whose name contains renewal") is that text, not a record's value.
  const containing = containsSpan(question, text);
  if (containing) for (let i = containing.start; i < containing.end; i++) valueSkip.add(i);
  const bare = tokens.filter((_, i) => !valueSkip.has(i) || skip.has(i)).join(' ');

  // The organization's values.
  const { matches, ambiguous } = ctx.index.match(tokens, valueSkip);
  if (ambiguous.length > 0) {
    const first = ambiguous[0]!;
    const options = [...new Set(first.candidates.map((c) => c.value))].sort();
    const kind = ctx.catalog[first.candidates[0]!.entity]?.singular ?? 'record';
    return {
      kind: 'clarify',
      options,
      text: `"${first.said}" matches more than one ${kind}: ${options.join(', ')}. Which one do you mean?`,
    };
  }
  // "new" is a stage only when the question speaks of stages ("in the new stage"); otherwise it means recently created.
  const stageWords = /\b(stage|stages|status|funnel)\b/.test(text);
  const mailDomain = matches.some((m) => m.field === 'email_domain');
  // "the email of Anna Acme": said of a contact named, "email" and "call" are its fields, not activities.
  const personNamed = matches.some((m) => m.entity === 'contacts' && m.field === 'name');
  const notClosed = NOT_CLOSED.test(text);
  // "new or contacted": a list of stages names "new" as a stage too.
  const stageList =
    matches.filter((m) => m.field === 'stage' && m.value !== 'new').length > 0 &&
    tokens.some(
      (t, i) =>
        t === 'new' &&
        [tokens[i + 1], tokens[i + 2], tokens[i - 1], tokens[i - 2]].some((n) =>
          matches.some((m) => m.field === 'stage' && m.value !== 'new' && tokens[m.start] === n),
        ),
    );
  const kept = matches.filter(
    (m) =>
      !(m.field === 'stage' && m.value === 'new' && !stageWords && !stageList) &&
      // "an email at gmail.com" speaks of addresses, not of email activities.
      !((mailDomain || personNamed) && m.entity === 'activities' && m.field === 'type' && m.value === 'email') &&
      !(notClosed && m.field === 'stage' && (m.value === 'closed_won' || m.value === 'closed_lost')),
  );
  matches.length = 0;
  matches.push(...kept);
  for (const m of matches) for (let i = m.start; i < m.end; i++) skip.add(i);

  const notClosedSpan = spanOf(text, NOT_CLOSED, at);

  // Entities and fields named by words.
  const mentions = findMentions(tokens, skip, ctx.catalog);
  const entityMentions = mentions.filter((m) => !m.field);
  const fieldMentions = mentions.filter((m) => m.field);
  // Negated values ("not won or lost", "not in the software industry"): NOT IN, never dropped nor inverted.
  const fieldWords = new Set(fieldMentions.flatMap((m) => positions(m.start, m.end)));
  const negations = negatedValues(tokens, matches, fieldWords);
  const negated = new Set(negations.flatMap((n) => n.matches));

  // The measure's words.
  const winRate = WIN_RATE.test(text);
  const conversion = CONVERSION_RATE.test(text) && !winRate;
  const wantsCount = COUNT_WORDS.test(bare);
  const agg = aggregateWord(text);

  let entity = chooseEntity({ text, tokens, ctx, entityMentions, fieldMentions, matches, winRate, conversion, agg });
  if (!entity) return { kind: 'refuse', reason: 'unknown', text: `I could not tell what this asks about. ${CAPABILITIES}` };
  // A question about one record's detail ("who is the contact on the X deal") is about that record.
  const pinned = matches.filter((m) => m.field === 'name' && m.how !== 'near' && !negated.has(m));
  const asksAggregate = wantsCount || winRate || conversion || Object.values(agg).some((v) => v !== undefined) || Boolean(limit);
  if (
    pinned.length === 1 &&
    !asksAggregate &&
    pinned[0]!.entity !== entity &&
    Object.values(ctx.catalog[pinned[0]!.entity]!.joins).some((j) => j.entity === entity)
  )
    entity = pinned[0]!.entity;
  // "contacts of the spring campaign", "which campaign has the most contacts": the campaign's contacts, an entity of their own.
  for (const other of [...matches.map((m) => m.entity), ...entityMentions.map((m) => m.entity)]) {
    const bridge = bridgeEntity(ctx.catalog, entity, other) ?? bridgeEntity(ctx.catalog, other, entity);
    if (bridge) {
      entity = bridge;
      break;
    }
  }
  const def = ctx.catalog[entity]!;
  const plan: Plan = { entity, measures: [], dimensions: [], fields: [], filters: [], having: [], order: [] };
  for (const m of entityMentions) if (m.entity === entity) use.use(m.start, m.end, `entity ${entity}`);
  // The records a bridging entity is made of ("contacts", "people" of a campaign) name it too.
  const base = entityOfWord(def.synonyms[0]!.split(' ').pop()!, ctx.catalog);
  if (base && base !== entity && !CRM_BASES.has(entity))
    for (const m of entityMentions) if (m.entity === base) use.use(m.start, m.end, `entity ${entity}`);
  // A campaign calls: "call" said of its contacts is what it does, not an activity.
  if (['campaigns', 'campaign_contacts', 'conversations'].includes(entity))
    for (const m of matches) if (m.entity === 'activities' && m.value === 'call') use.use(m.start, m.end, 'verb');

  /** A field of the entity, or one join away, as a plan path. */
  const pathOf = (owner: string, field: string): string | null => {
    if (owner === entity) return def.fields[field] ? field : null;
    for (const [name, join] of Object.entries(def.joins))
      if (join.entity === owner && ctx.catalog[owner]!.fields[field]) return `${name}.${field}`;
    return null;
  };
  const fieldDef = (path: string): FieldDef | undefined => {
    if (!path.includes('.')) return def.fields[path];
    const [join, field] = path.split('.') as [string, string];
    return ctx.catalog[def.joins[join]!.entity]!.fields[field];
  };
  const joinedLabel = (other: string): string | null => {
    for (const [name, join] of Object.entries(def.joins)) if (join.entity === other) return `${name}.${ctx.catalog[other]!.label}`;
    return null;
  };

  /** The dimension named at a word: a field of the entity, "account owner" (a joined entity's field), a joined entity (its name), a tag. */
  const dimensionAt = (start: number): { path: string; length: number } | null => {
    const here = mentions.filter((m) => m.start === start);
    const next = mentions.filter((m) => m.start === (here[0]?.end ?? start + 1) && m.field);
    const joined = here.find((m) => !m.field && m.entity !== entity && joinedLabel(m.entity));
    if (joined) {
      const field = next.find((m) => m.entity === joined.entity);
      const path = field ? pathOf(joined.entity, field.field!) : null;
      if (path) return { path, length: field!.end - start };
    }
    const own = here.find((m) => !m.field && m.entity === entity);
    if (own) {
      const field = next.find((m) => m.entity === entity);
      if (field) return { path: field.field!, length: field.end - start };
    }
    if (here.some((m) => m.entity === 'tags' || m.field === 'tags') && def.fields.tags) return { path: 'tags', length: 1 };
    const ownField = here.find((m) => m.field && m.entity === entity);
    if (ownField) return { path: ownField.field!, length: ownField.end - start };
    const sameName = here.find((m) => m.field && def.fields[m.field]);
    if (sameName) return { path: sameName.field!, length: sameName.end - start };
    const viaJoin = here.find((m) => m.field && pathOf(m.entity, m.field));
    if (viaJoin) return { path: pathOf(viaJoin.entity, viaJoin.field!)!, length: viaJoin.end - start };
    if (joined) return { path: joinedLabel(joined.entity)!, length: joined.end - start };
    return null;
  };

  // Dimensions: "per stage", "by industry", "for each account", "monthly".
  const dimensionTokens = new Set<number>();
  const groupLeads: [number, number][] = [];
  /** The number "by" names ("top 3 companies by deal value"): what a ranking of groups totals. */
  let leadNumber: string | null = null;
  for (const lead of text.matchAll(GROUP_LEAD)) {
    const index = (lead.index ?? 0) + lead[0].length;
    const before = text.slice(0, lead.index ?? 0);
    if (
      /\b(owned|sorted|ordered|ranked|created|logged|closed|added|made|run|led|managed|divided|grouped|split)\s*$/.test(before) &&
      /^by/.test(lead[0])
    )
      continue;
    const start = at(index);
    if (start >= tokens.length) continue;
    const leadSpan: [number, number] = [at(lead.index ?? 0), start];
    const grain = grainAt(tokens, start);
    if (grain) {
      const dateField = dateFieldOf(def, text);
      if (dateField && !plan.dimensions.some((d) => d.grain)) {
        plan.dimensions.push({ field: dateField, grain });
        dimensionTokens.add(start);
        use.use(leadSpan[0], start + 1, `group by ${grain} of ${dateField}`);
      }
      continue;
    }
    const found = dimensionAt(start);
    // "by headcount", "by deal value": a number ranks or totals, it is not something to group by.
    if (found && ['number', 'money'].includes(fieldDef(found.path)?.type ?? '')) {
      groupLeads.push(leadSpan);
      leadNumber ??= found.path;
      continue;
    }
    if (found && !plan.dimensions.some((d) => d.field === found.path)) {
      plan.dimensions.push({ field: found.path });
      for (let i = start; i < start + found.length; i++) dimensionTokens.add(i);
      use.use(leadSpan[0], start + found.length, `group by ${found.path}`);
    }
  }
  // "industry breakdown", "owner-wise".
  for (const m of text.matchAll(/\b([a-z]+(?: [a-z]+)?) (breakdown|split|wise|distribution|mix)\b/g)) {
    const start = at((m.index ?? 0) + m[1]!.length) - (m[1]!.includes(' ') ? 1 : 0);
    for (const from of [start, start - 1].filter((n) => n >= 0)) {
      const found = dimensionAt(from);
      if (found && !plan.dimensions.some((d) => d.field === found.path)) {
        plan.dimensions.push({ field: found.path });
        use.use(from, from + found.length, `group by ${found.path}`);
        use.use(at((m.index ?? 0) + m[1]!.length + 1), at((m.index ?? 0) + m[1]!.length + 1) + 1, `group by ${found.path}`);
        break;
      }
    }
  }
  if (!plan.dimensions.some((d) => d.grain)) {
    for (const [pattern, grain] of GRAIN_WORDS) {
      if (
        !/\b(monthly|weekly|daily|quarterly|yearly|annually|per (day|week|month|quarter|year)|by (day|week|month|quarter|year)|each (day|week|month|quarter|year)|every (day|week|month|quarter|year))\b/.test(
          text,
        )
      )
        break;
      const m = text.match(pattern);
      if (m) {
        const dateField = dateFieldOf(def, text);
        if (dateField) {
          plan.dimensions.push({ field: dateField, grain });
          use.use(at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1, `group by ${grain} of ${dateField}`);
        }
        break;
      }
    }
  }

  // Filters from the organization's values.
  const byField = new Map<string, { path: string; values: string[]; negated: boolean; spans: [number, number][] }>();
  /** Values of a child entity ("won" deals of accounts): they narrow a with/without condition. */
  const childValues: ValueMatch[] = [];
  for (const m of matches) {
    const path = ofTheAccount(m, tokens) ? pathOf('accounts', m.field === 'name' ? 'tags' : m.field) : valuePath(m, entity, def, pathOf);
    if (!path) {
      const child = [m, ...(m.others ?? [])].find((e) => def.children[e.entity]);
      if (child) childValues.push({ ...m, ...child });
      continue;
    }
    // A rate counts its own stages: "won divided by won plus lost" names them, it does not filter on them.
    if ((winRate || conversion) && path === 'stage') {
      use.use(m.start, m.end, `measure ${winRate ? 'win_rate' : 'conversion_rate'}`);
      continue;
    }
    if (plan.dimensions.some((d) => d.field === path) && m.how !== 'exact') continue;
    const isNegated = negated.has(m);
    const key = `${isNegated ? '!' : ''}${path}`;
    const entry = byField.get(key) ?? { path, values: [], negated: isNegated, spans: [] };
    if (!entry.values.includes(m.value)) entry.values.push(m.value);
    entry.spans.push([m.start, m.end]);
    byField.set(key, entry);
  }
  for (const { path, values, negated: not, spans } of byField.values()) {
    const filter: Plan['filters'][number] = not
      ? values.length === 1
        ? { op: 'neq', field: path, value: values[0]! }
        : { op: 'not_in', field: path, values }
      : values.length === 1
        ? { op: 'eq', field: path, value: values[0]! }
        : { op: 'in', field: path, values };
    plan.filters.push(filter);
    const said = `${path} ${not ? 'not ' : ''}${values.length === 1 ? `= ${values[0]}` : `in ${values.join(', ')}`}`;
    read.push(said);
    for (const [start, end] of spans) use.use(start, end, `value ${said}`);
    if (not)
      for (const n of negations.filter((x) => x.matches.some((m) => spans.some(([s]) => s === m.start))))
        use.use(n.cue[0], n.cue[1], `operator not (${path})`);
  }
  const positiveStage = [...byField.values()].some((e) => e.path === 'stage' && !e.negated);
  const anyStage = [...byField.values()].some((e) => e.path === 'stage');
  if (entity === 'deals' && !positiveStage) {
    const open = spanOf(text, OPEN_DEALS, at);
    const closed = spanOf(text, CLOSED_DEALS, at);
    if (open || notClosedSpan) {
      plan.filters.push({ op: 'not_in', field: 'stage', values: [...CLOSED_STAGES] });
      read.push('stage open');
      for (const pattern of [OPEN_DEALS, NOT_CLOSED])
        for (const m of text.matchAll(new RegExp(pattern.source, 'g')))
          use.use(at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1, 'value stage open');
    } else if (closed && !range && !anyStage) {
      plan.filters.push({ op: 'in', field: 'stage', values: [...CLOSED_STAGES] });
      read.push('stage closed');
      use.use(closed[0], closed[1], 'value stage closed');
    }
  }

  // "paid orders", "unpaid orders".
  for (const m of fieldMentions) {
    if (m.entity !== entity || def.fields[m.field!]?.type !== 'bool' || dimensionTokens.has(m.start)) continue;
    const negatedBool = /^(un|not |non)/.test(tokens[m.start - 1] === 'not' ? 'not ' : m.word) || tokens[m.start - 1] === 'not';
    plan.filters.push({ op: 'eq', field: m.field!, value: !negatedBool });
    use.use(tokens[m.start - 1] === 'not' ? m.start - 1 : m.start, m.end, `value ${m.field} = ${!negatedBool}`);
  }
  for (const m of text.matchAll(/\b(?:un|non-?)([a-z]+)\b/g)) {
    const field = Object.entries(def.fields).find(([name, f]) => f.type === 'bool' && f.synonyms.includes(m[1]!) && name);
    if (field && !plan.filters.some((f) => 'field' in f && f.field === field[0])) {
      plan.filters.push({ op: 'eq', field: field[0], value: false });
      use.use(at(m.index ?? 0), at(m.index ?? 0) + 1, `value ${field[0]} = false`);
    }
  }

  // "without any deals", "never called", "with no website", "that have at least one open deal".
  for (const [pattern, op] of [
    [NEGATED_CHILD, 'without'],
    [WITH_CHILD, 'with'],
  ] as const) {
    for (const m of text.matchAll(pattern)) {
      const span: [number, number] = [at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1];
      const found = childFilter({ op, word: m[1]!, span, tokens, def, catalog: ctx.catalog, childValues });
      if (!found) continue;
      plan.filters.push(found.filter);
      read.push(found.read);
      use.use(span[0], span[1], found.read);
      for (const v of found.values) use.use(v.start, v.end, found.read);
    }
  }

  // "whose name contains 'tech'".
  const inField = text.match(
    /\b(?:with|having|has|have)\s+["']?([a-z0-9][\w.@]*)["']?\s+in\s+(?:the|their|its|his|her)\s+([a-z]+(?: [a-z]+)?)/,
  );
  if (inField && (fieldOfWord(def, inField[2]!) || fieldOfWord(def, inField[2]!.split(' ').pop()!))) {
    const field = fieldOfWord(def, inField[2]!) ?? fieldOfWord(def, inField[2]!.split(' ').pop()!)!;
    plan.filters.push({ op: 'contains', field, value: inField[1]! });
    read.push(`${field} contains ${inField[1]}`);
    use.use(at(inField.index ?? 0), at((inField.index ?? 0) + inField[0].length - 1) + 1, `value ${field} contains ${inField[1]}`);
  } else if (containing) {
    const field =
      [...tokens.slice(0, containing.lead)]
        .reverse()
        .map((w) => fieldOfWord(def, w))
        .find(Boolean) ?? def.label;
    plan.filters.push({ op: 'contains', field, value: containing.value });
    read.push(`${field} contains ${containing.value}`);
    use.use(containing.lead, containing.end, `value ${field} contains ${containing.value}`);
  }
  // "a .fr domain", "names starting with C".
  for (const a of affixes) {
    const field = affixField(def, a.fieldWord);
    if (!field) continue;
    plan.filters.push({ op: a.op, field, value: a.value });
    const said = `${field} ${a.op === 'ends_with' ? 'ends with' : 'starts with'} ${a.value}`;
    read.push(said);
    use.use(a.start, a.end, `value ${said}`);
  }

  // The period, on the date the question means.
  if (range) {
    const dateField = dateFieldOf(def, text);
    if (dateField) {
      if (range.from) plan.filters.push({ op: 'gte', field: dateField, value: range.from });
      if (range.to) plan.filters.push({ op: 'lt', field: dateField, value: range.to });
      read.push(`${dateField} ${range.from ?? '…'} – ${range.to ?? '…'}`);
      for (const i of periodTokens) if (i >= 0) use.use(i, i + 1, `period ${dateField}`);
      usePeriodWords(tokens, use, range.text, dateField);
    }
  }

  // The measure.
  const numericMentions = fieldMentions.filter((m) => {
    const path = pathOf(m.entity, m.field!);
    const f = path ? fieldDef(path) : undefined;
    if (!f || (f.type !== 'number' && f.type !== 'money')) return false;
    // "people" counts contacts, not employees, when it names what is asked about; the entity's own reading of a word wins.
    if (entityMentions.some((e) => e.start === m.start && e.entity === entity)) return false;
    return m.entity === entity || !fieldMentions.some((o) => o.start === m.start && o.entity === entity);
  });
  const listAsked =
    /^(?:which|list|show|who|name|give|display|find|get|what are|what were)\b/.test(text) || /\b(which|who|name of|names of)\b/.test(text);
  const rankingWord = DESC_WORDS.test(text) ? 'desc' : ASC_WORDS.test(text) ? 'asc' : null;
  const howManyNumber = text.match(/\b(?:how many|number of)\s+([a-z]+)/);
  const countsNumber = howManyNumber && numericMentions.some((m) => m.word === howManyNumber[1] && !entityOfWord(m.word, ctx.catalog));
  const defaultNumber = def.defaultNumber && def.fields[def.defaultNumber] ? def.defaultNumber : null;
  const numberNear = (word: number | undefined) => {
    const target =
      (word === undefined ? undefined : numericMentions.find((m) => m.start >= word && m.start <= word + 4)) ?? numericMentions[0];
    return target ? pathOf(target.entity, target.field!) : defaultNumber;
  };
  const explicitExtreme = /\b(maximum|max|minimum|min|highest|lowest|largest|smallest|biggest)\b/.test(text);
  // "which owner has the largest pipeline": a ranking over groups, the group named right after which / who.
  const groupRank = rankingWord ? rankedGroup(text, tokens, at, mentions, entity, def, pathOf, fieldDef) : null;
  let measure: string | null = null;
  if (winRate && entity === 'deals') measure = 'win_rate';
  else if (conversion && entity === 'contacts') measure = 'conversion_rate';
  else if (agg.avg !== undefined) measure = prefixed('avg', numberNear(agg.avg));
  // "maximum order total": the extreme of a number whose name says total, in one phrase ("the five biggest
  // customers, with their totals" ranks by the totals).
  else if (
    explicitExtreme &&
    agg.sum !== undefined &&
    (agg.max ?? agg.min)! < agg.sum &&
    agg.sum - (agg.max ?? agg.min)! <= 3 &&
    !numericMentions.some((m) => m.start > agg.sum!)
  )
    measure = prefixed(agg.max !== undefined ? 'max' : 'min', numberNear(agg.max ?? agg.min));
  else if (countsNumber) measure = prefixed('sum', numberNear(howManyNumber.index === undefined ? undefined : at(howManyNumber.index) + 2));
  else if (agg.sum !== undefined && !(wantsCount && numericMentions.length === 0)) measure = prefixed('sum', numberNear(agg.sum));
  else if (wantsCount) measure = DISTINCT_WORDS.test(text) ? distinctMeasure(fieldMentions, pathOf) : 'count';
  else if (groupRank) measure = groupRank.measure;
  else if (
    (agg.max !== undefined || agg.min !== undefined) &&
    (numericMentions.length > 0 || /\bhow (small|big|large|much|high|low)\b/.test(text)) &&
    (plan.dimensions.length > 0 || (!listAsked && !limit))
  )
    measure = prefixed(agg.max !== undefined ? 'max' : 'min', numberNear(agg.max ?? agg.min));
  else if (rankingWord && leadNumber && (plan.dimensions.length > 0 || (entityMentions[0] && entityMentions[0].entity !== entity)))
    measure = `sum:${leadNumber}`;
  else if (plan.dimensions.length > 0 && numericMentions.length > 0) measure = prefixed('sum', numberNear(undefined));

  // Comparisons: on the numeric field nearest the number (or on a total: a condition on each group).
  const totalWords = /\b(in total|total|combined|altogether|overall|spent|sum|add up|adds up|added up)\b/.test(text);
  for (const c of comparisons) {
    const nearest = nearestNumeric(numericMentions, c.token, c.end);
    const path = nearest ? pathOf(nearest.entity, nearest.field!) : defaultNumber;
    if (!path) continue;
    const grouped =
      plan.dimensions.length > 0 ||
      listAsked ||
      Boolean(fieldMentions.find((m) => m.entity === entity && def.fields[m.field!]?.type === 'text' && !CRM.includes(entity)));
    const said = `${path} ${c.op} ${c.value}`;
    if (totalWords && grouped && fieldDef(path)?.type !== 'date') {
      plan.having.push({ measure: `sum:${path}`, op: c.op, value: c.value });
      if (measure === `sum:${path}`) measure = null;
    } else plan.filters.push({ op: c.op, field: path, value: c.value });
    read.push(said);
    use.use(c.token, c.last + 1, `comparison ${said}`);
  }

  // Rankings: "which account has the most deals", "top 3 accounts by deal value", "top 5 customers" (of orders).
  const head = entityMentions.find((m) => m.entity !== entity) && entityMentions[0];
  const textTarget = fieldMentions.find((m) => m.entity === entity && def.fields[m.field!]?.type === 'text' && !CRM.includes(entity));
  const rankedOther = head && head.entity !== entity && !textTarget ? joinedLabel(head.entity) : null;
  const ranks = Boolean(rankingWord || limit);
  // "which email domains do our contacts use, and how many of each": the count of each group named after which.
  const eachGroup =
    !groupRank && wantsCount && plan.dimensions.length === 0 && /\b(of each|for each|each of them|each one|per each|each)\s*$/.test(text)
      ? whichGroup(text, tokens, at, mentions, entity, def, pathOf, fieldDef)
      : null;
  if (eachGroup) {
    plan.dimensions.push({ field: eachGroup.path });
    use.use(eachGroup.start, eachGroup.end, `group by ${eachGroup.path}`);
    use.use(tokens.length - 2, tokens.length, 'group');
  }
  if (groupRank && !plan.dimensions.some((d) => d.field === groupRank.path)) {
    plan.dimensions.unshift({ field: groupRank.path });
    use.use(groupRank.start, groupRank.end, `group by ${groupRank.path}`);
    measure ??= groupRank.measure;
  } else if (rankedOther && ranks && !plan.dimensions.some((d) => d.field === rankedOther)) {
    plan.dimensions.unshift({ field: rankedOther });
    use.use(head!.start, head!.end, `group by ${rankedOther}`);
    measure ??= 'count';
  } else if (!rankedOther && textTarget && (ranks || plan.having.length) && !plan.dimensions.length) {
    plan.dimensions.push({ field: textTarget.field! });
    if (ranks) measure ??= defaultNumber && !/\b(most|fewest) (orders|rows)\b/.test(text) ? `sum:${defaultNumber}` : 'count';
  }
  if (plan.having.length && plan.dimensions.length === 0) plan.dimensions.push({ field: textTarget?.field ?? def.label });

  if (measure) plan.measures.push(measure);
  const superlative = Object.entries(SUPERLATIVES).find(([word]) => tokens.includes(word));
  // "top 3 companies by headcount": the entity's own rows ranked by its number, not a total.
  const ownNumber = measure?.match(/^(?:sum|max|avg):([a-z_]+)$/)?.[1];
  if (
    limit &&
    ownNumber &&
    plan.dimensions.length === 0 &&
    !plan.having.length &&
    def.fields[ownNumber] &&
    entityMentions.some((m) => m.entity === entity)
  ) {
    plan.measures = [];
    plan.fields = listFields({
      catalog: ctx.catalog,
      def,
      tokens,
      fields: fieldMentions,
      entities: entityMentions,
      entity,
      matches,
      text,
      plan,
      pathOf,
      use,
    });
    plan.order.push({ by: ownNumber, direction: rankingWord ?? 'desc' });
    plan.limit = limit;
  } else if (measure && ranks && plan.dimensions.length > 0) {
    // A ranking over groups shows the number it ranks by beside each group: the answer says how many.
    plan.order.push({ by: measure, direction: rankingWord ?? 'desc' });
    plan.limit = limit ?? (groupRank?.one || singularHead(entityMentions, textTarget) ? 1 : undefined);
  } else if (!measure && plan.dimensions.length === 0) {
    // A list: its fields, ordered by the number the question ranks by.
    plan.fields = listFields({
      catalog: ctx.catalog,
      def,
      tokens,
      fields: fieldMentions,
      entities: entityMentions,
      entity,
      matches,
      text,
      plan,
      pathOf,
      use,
    });
    const by =
      superlative && def.fields[superlative[1].field]
        ? superlative[1].field
        : (numericMentions.find((m) => m.entity === entity)?.field ?? defaultNumber);
    if ((ranks || superlative) && by && def.fields[by]) {
      plan.order.push({ by, direction: superlative ? superlative[1].direction : (rankingWord ?? 'desc') });
      plan.limit = limit ?? (singularHead(entityMentions, undefined) ? 1 : undefined);
    }
  } else if (!measure && plan.dimensions.length > 0 && !plan.having.length) {
    plan.measures.push('count');
  }

  // Values in the place of a value the organization has no record of ("deals with Initech"): a filter that finds nothing.
  const mentioned = new Set(mentions.flatMap((m) => positions(m.start, m.end)));
  const free = (i: number) => !skip.has(i) && !use.has(i) && !mentioned.has(i) && !isPatternWord(tokens[i]!) && !carriesNothing(tokens[i]!);
  const textFields = fieldMentions.filter((m) => {
    const path = pathOf(m.entity, m.field!);
    return path && ['text', 'tags'].includes(fieldDef(path)?.type ?? '');
  });
  const entityWordStarts = new Set(entityMentions.filter((m) => m.entity === entity).map((m) => m.start));
  for (const slot of valueSlots(tokens, cased, free, textFields, entityWordStarts)) {
    const path =
      slot.kind === 'account'
        ? entity === 'accounts'
          ? 'name'
          : pathOf('accounts', 'name')
        : slot.kind === 'label'
          ? def.label
          : slot.kind === 'owner'
            ? pathOf(entity, 'owner_id')
            : pathOf(slot.mention.entity, slot.mention.field!);
    if (!path) continue;
    plan.filters.push({ op: 'eq', field: path, value: slot.value });
    const said = `${path} = ${slot.value}`;
    read.push(said);
    use.use(slot.start, slot.end, `value ${said} (no record has it)`);
    if (slot.kind === 'field') use.use(slot.mention.start, slot.mention.end, `field ${path}`);
    if (plan.fields.length > 1 && plan.fields.includes(path)) plan.fields = plan.fields.filter((f) => f !== path);
  }

  // Money in several currencies is never added up across them.
  const money = plan.measures.some((m) => /^(sum|avg|min|max):/.test(m) && fieldDef(m.split(':')[1]!)?.type === 'money');
  const currencyFixed = plan.filters.some((f) => 'field' in f && f.field === 'currency');
  if (money && !currencyFixed && ctx.currencies.length > 1 && def.fields.currency && !plan.dimensions.some((d) => d.field === 'currency'))
    plan.dimensions.push({ field: 'currency' });

  if (plan.measures.length === 0 && plan.dimensions.length === 0 && plan.fields.length === 0) plan.fields = [def.label];

  // Every word is accounted for: used by the plan, or one that carries nothing; anything else is said, never dropped.
  accountPlanWords({
    tokens,
    text,
    at,
    plan,
    use,
    mentions,
    catalog: ctx.catalog,
    limit,
    limitSpan,
    rateSpans,
    superlative: superlative?.[0],
    groupLeads,
  });
  const left = use.unexplained();
  if (left.length > 0)
    return {
      kind: 'refuse',
      reason: 'unknown',
      text: notUnderstood(left, plan, ctx.catalog, read),
      words: use.readings(),
      partial: { plan, read },
    };
  return { kind: 'plan', plan, read, words: use.readings() };
}
const prefixed = (fn: string, path: string | null) => (path ? `${fn}:${path}` : null);
const positions = (start: number, end: number) => Array.from({ length: Math.max(0, end - start) }, (_, i) => start + i);

/** Marks a period's word as read; its position, or -1. */
function markWord(tokens: string[], piece: string, skip: Set<number>): number {
  const i = tokens.findIndex((t, n) => t === piece && !skip.has(n));
  if (i >= 0) skip.add(i);
  return i;
}

/** The prepositions of a period ("since", "before", "in") belong to it. */
function usePeriodWords(tokens: string[], use: WordUse, said: string, field: string) {
  for (const [i, t] of tokens.entries())
    if (
      /^(since|after|before|until|till|from|between|during|starting|through|prior|earlier|later|than|by|up|to|in|the|of|last|past|this|next|previous)$/.test(
        t,
      ) &&
      said.split(' ').includes(t)
    )
      use.use(i, i + 1, `period ${field}`);
}

/** Where a pattern matches, as words [start, end). */
function spanOf(text: string, pattern: RegExp, at: (index: number) => number): [number, number] | null {
  const m = text.match(new RegExp(pattern.source, pattern.flags.replace('g', '')));
  return m ? [at(m.index ?? 0), at((m.index ?? 0) + m[0].length - 1) + 1] : null;
}

/** A piece of text asked for inside a field: quoted, or after "contains". */
function containsSpan(question: string, text: string): { value: string; lead: number; start: number; end: number } | null {
  const quoted = question.match(
    /(?:contain|contains|containing|including|includes|include|with|like|matching|mention|mentions|mentioning)\s+(?:the\s+(?:word|text)\s+)?["“'‘]([^"”'’]{1,100})["”'’]/i,
  );
  if (quoted) {
    const lead = words(question.slice(0, quoted.index ?? 0)).length;
    const value = quoted[1]!.trim();
    const end = lead + words(quoted[0]).length;
    return { value, lead, start: end - words(value).length, end };
  }
  const bare = text.match(
    /\b(?:contain|contains|containing|includes|including|mentions|mentioning)\s+(?:the\s+(?:word|text)\s+)?([a-z0-9][\w.@]*)/,
  );
  if (!bare) return null;
  const lead = (text.slice(0, bare.index ?? 0).match(/ /g) ?? []).length;
  const end = lead + bare[0].split(' ').length;
  return { value: bare[1]!, lead, start: end - 1, end };
}

/** The entity a question means when it names records of one entity through another ("contacts" of a campaign). */
function bridgeEntity(catalog: Catalog, entity: string, other: string): string | null {
  if (entity === other || Object.values(catalog[entity]!.joins).some((j) => j.entity === other)) return null;
  if (catalog[entity]!.children[other]) return null;
  const said = catalog[other]?.singular;
  for (const def of Object.values(catalog))
    if (
      Object.values(def.joins).some((j) => j.entity === other) &&
      def.synonyms.some((s) => s === `${said} ${entity}` || s === `${said} ${catalog[entity]!.singular}`)
    )
      return def.name;
  return null;
}

/** The field a text affix reads: the one its word names, else the entity's address (domain, email). */
function affixField(def: EntityDef, word: string | null): string | null {
  if (word) {
    const w = word.replace(/-/g, '');
    if (/^(domain|site|website|url)/.test(w))
      return def.fields.domain
        ? /^(website|site|url)/.test(w) && def.fields.website
          ? 'website'
          : 'domain'
        : def.fields.email
          ? 'email'
          : null;
    if (/^(email|address)/.test(w)) return def.fields.email ? 'email' : def.fields.domain ? 'domain' : null;
    if (/^name/.test(w)) return def.fields.name ? 'name' : def.label;
    if (/^title/.test(w)) return def.fields.title ? 'title' : null;
    if (/^phone/.test(w)) return def.fields.phone ? 'phone' : def.fields.phone_number ? 'phone_number' : null;
  }
  return def.fields.domain ? 'domain' : def.fields.email ? 'email' : null;
}

/** Entities that are records of their own, never made of another's. */
const CRM_BASES = new Set(['accounts', 'contacts', 'deals', 'activities', 'tags', 'campaigns']);

const PATTERN_WORDS = new Set([...PARSER_WORDS].filter((w) => !/^[A-Z]/.test(w)));
const isPatternWord = (word: string) => PATTERN_WORDS.has(word) || /^\d/.test(word);

/**
 * A ranking over groups: "which owner has the largest pipeline", "who owns the fewest accounts", "which industry
 * has the most accounts". The group is the field (or joined entity) right after which / what / who; the number is
 * a count of the records after the ranking word, or the total of the number it names ("largest pipeline": value).
 */
function rankedGroup(
  text: string,
  tokens: string[],
  at: (index: number) => number,
  mentions: Mention[],
  entity: string,
  def: EntityDef,
  pathOf: (owner: string, field: string) => string | null,
  fieldDef: (path: string) => FieldDef | undefined,
): { path: string; measure: string; start: number; end: number; one: boolean } | null {
  const group = whichGroup(text, tokens, at, mentions, entity, def, pathOf, fieldDef);
  if (!group) return null;
  const ranked = text.match(
    /\b(most|fewest|least|highest|lowest|largest|smallest|biggest|greatest|best|worst)\s+(?:number of\s+|total\s+|amount of\s+)?([a-z]+(?: [a-z]+)?)/,
  );
  if (!ranked) return null;
  const after = at((ranked.index ?? 0) + ranked[0].length - ranked[2]!.length);
  const numeric = mentions.find(
    (m) =>
      m.start >= after &&
      m.start <= after + 2 &&
      m.field &&
      ['number', 'money'].includes(fieldDef(pathOf(m.entity, m.field) ?? '')?.type ?? ''),
  );
  const counted = mentions.find((m) => m.start === after && !m.field);
  const amountWord = /^(largest|biggest|greatest|smallest)$/.test(ranked[1]!);
  const number = numeric
    ? pathOf(numeric.entity, numeric.field!)
    : amountWord && counted?.entity === entity && def.defaultNumber
      ? def.defaultNumber
      : null;
  return { ...group, measure: number ? `sum:${number}` : 'count' };
}

/** The group a question names right after which / what / who ("which owner", "who owns", "the industry with the most"). */
function whichGroup(
  text: string,
  tokens: string[],
  at: (index: number) => number,
  mentions: Mention[],
  entity: string,
  def: EntityDef,
  pathOf: (owner: string, field: string) => string | null,
  fieldDef: (path: string) => FieldDef | undefined,
): { path: string; start: number; end: number; one: boolean } | null {
  const lead =
    text.match(/\b(which|what|who)\s+(?:(?:is|are)\s+the\s+)?/) ??
    text.match(
      /\b(the)\s+(?=[a-z]+(?: [a-z]+)?\s+(?:with|that has|that have|having|holding)\s+the\s+(?:most|fewest|least|highest|lowest|largest|smallest|biggest|greatest)\b)/,
    );
  if (!lead) return null;
  const start = at((lead.index ?? 0) + lead[0].length);
  let path: string | null = null;
  let end = start;
  if (lead[1] === 'who' && /^(owns?|has|have|manages?|handles?)$/.test(tokens[start] ?? '')) {
    path = pathOf(entity, 'owner_id');
    end = start;
  } else {
    // The word as a field of the records asked about first ("stage" of deals, not of their contact).
    const here = mentions
      .filter((m) => m.start === start && m.field)
      .sort((a, b) => Number(b.entity === entity) - Number(a.entity === entity));
    for (const m of here) {
      const p = pathOf(m.entity, m.field!);
      const f = p ? fieldDef(p) : undefined;
      if (p && f && f.groupable !== false && ['text', 'enum', 'tags'].includes(f.type) && p !== def.label) {
        path = p;
        end = m.end;
        break;
      }
    }
  }
  if (!path) return null;
  return { path, start, end: Math.max(end, start), one: !/s$/.test(tokens[start] ?? '') || lead[1] === 'who' };
}

/** A matched value as a filter path of the plan's entity (a tag name filters the tags column). */
function valuePath(m: ValueMatch, entity: string, def: EntityDef, pathOf: (owner: string, field: string) => string | null): string | null {
  for (const e of [m, ...(m.others ?? [])]) {
    const path = entryPath(e, entity, def, pathOf);
    if (path) return path;
  }
  return null;
}

function entryPath(m: ValueEntry, entity: string, def: EntityDef, pathOf: (owner: string, field: string) => string | null): string | null {
  if (m.entity === 'tags' && m.field === 'name') return entity === 'tags' ? 'name' : def.fields.tags ? 'tags' : null;
  // "carol's deals" are the deals carol owns, not those of carol's accounts.
  if (m.field === 'owner_id' && def.fields.owner_id) return 'owner_id';
  const direct = pathOf(m.entity, m.field);
  if (direct) return direct;
  // Owners, stages and the like of another entity that this one has too.
  if (def.fields[m.field] && (m.field === 'owner_id' || m.field === 'tags' || m.field === 'source')) return m.field;
  return null;
}

const ACCOUNT_WORDS = new Set(['account', 'accounts', 'company', 'companies', 'customer', 'customers', 'client', 'clients']);

/**
 * An owner or a tag said of the accounts rather than of the records asked about: "carol's accounts",
 * "accounts that carol owns", "whose account owner is carol", "accounts owned by carol", "vip companies",
 * "accounts tagged vip", "whose account carries the vip tag".
 */
function ofTheAccount(m: ValueMatch, tokens: string[]): boolean {
  const tag = m.entity === 'tags' && m.field === 'name';
  if (!tag && m.field !== 'owner_id') return false;
  const before = tokens.slice(Math.max(0, m.start - 4), m.start).join(' ');
  const after = tokens[m.end] ?? '';
  if (ACCOUNT_WORDS.has(after)) return true;
  if (tag)
    return (
      /\b(accounts?|compan(y|ies)|customers?|clients?) (tagged|labelled|labeled)( as| with)?$/.test(before) ||
      (/\baccounts?\b/.test(before) && after === 'tag')
    );
  return /\b(accounts?|compan(y|ies)|customers?|clients?) ((that|which|whom) |(owned|managed|handled|run) by |owner (is |= )?|owners? )$/.test(
    `${before} `.replace(/ +$/, ' '),
  );
}

function distinctMeasure(fields: Mention[], pathOf: (owner: string, field: string) => string | null): string {
  const target = fields.find((m) => pathOf(m.entity, m.field!));
  return target ? `count_distinct:${pathOf(target.entity, target.field!)}` : 'count';
}
