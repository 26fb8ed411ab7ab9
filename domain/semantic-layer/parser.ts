import { type Catalog, CLOSED_STAGES, type EntityDef, type FieldDef } from './catalog';
import { chooseEntity } from './entity-choice';
import { CRM, type Mention, dateFieldOf, entityOfWord, fieldOfWord, findMentions, grainAt, singularHead } from './mentions';
import { BETWEEN, COMPARISON, NUMBER_WORDS, OPS, aggregateWord, charToToken, nearestNumeric, scale } from './numbers';
import { dateRangeOf } from './dates';
import type { Plan } from './plan';
import { singular, words } from './text';
import type { ValueIndex, ValueMatch } from './values';
import {
  ASC_WORDS,
  CLOSED_DEALS,
  CONVERSION_RATE,
  COUNT_WORDS,
  DESC_WORDS,
  DISTINCT_WORDS,
  GRAIN_WORDS,
  GROUP_LEAD,
  NEGATED_CHILD,
  OPEN_DEALS,
  NOT_CLOSED,
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
  | { kind: 'plan'; plan: Plan; read: string[] }
  | { kind: 'clarify'; text: string; options: string[] }
  | { kind: 'refuse'; text: string; reason: 'write' | 'unknown' };

export const CAPABILITIES =
  'I answer questions about your CRM data: counts, totals, averages, minimums and maximums of accounts, contacts, deals, activities, campaigns and your custom tables, grouped by stage, industry, owner, tag, account, title, source, status or period, filtered by values, amounts and dates, with rankings (top 5), win rate and conversion rate.';

export function parseQuestion(question: string, ctx: ParseContext): Understanding {
  const tokens = words(question);
  const text = tokens.join(' ');
  if (tokens.length === 0) return { kind: 'refuse', text: CAPABILITIES, reason: 'unknown' };
  if (OFF_TOPIC.test(text)) return { kind: 'refuse', reason: 'unknown', text: `That is outside the CRM. ${CAPABILITIES}` };
  if (WRITE_REQUEST.test(text))
    return { kind: 'refuse', reason: 'write', text: `I only read the CRM: I cannot change, send or delete anything. ${CAPABILITIES}` };

  const at = charToToken(text);
  const skip = new Set<number>();
  const mark = (from: number, to: number) => {
    for (let i = at(from); i <= at(Math.max(from, to - 1)); i++) skip.add(i);
  };
  const read: string[] = [];

  // Periods, then numbers: their words are not values.
  const range = dateRangeOf(text, ctx.today);
  if (range) for (const piece of range.text.split(' ').filter(Boolean)) markWord(tokens, piece, skip);
  const comparisons: { op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq'; value: number; token: number; end: number; percent: boolean }[] = [];
  for (const m of text.matchAll(BETWEEN)) {
    const index = m.index ?? 0;
    comparisons.push({ op: 'gte', value: scale(m[1]!, m[2]), token: at(index), end: at(index + m[0].length - 1), percent: false });
    comparisons.push({ op: 'lte', value: scale(m[3]!, m[4]), token: at(index), end: at(index + m[0].length - 1), percent: false });
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
    });
    mark(index, index + m[0].length);
  }
  let limit: number | undefined;
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
  }
  for (const rate of [WIN_RATE, CONVERSION_RATE]) {
    const m = text.match(rate);
    if (m) mark(m.index ?? 0, (m.index ?? 0) + m[0].length);
  }

  // Field names of several words ("email domain", "employee count") are read before values and counting words.
  const phrases = findMentions(tokens, skip, ctx.catalog).filter((m) => m.end - m.start > 1 && m.field);
  const valueSkip = new Set(skip);
  for (const m of phrases) for (let i = m.start; i < m.end; i++) valueSkip.add(i);
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
  const notClosed = NOT_CLOSED.test(text);
  // "new or contacted": a list of stages names "new" as a stage too.
  const stageList =
    matches.filter((m) => m.field === 'stage' && m.value !== 'new').length > 0 && /\bnew\s*(,|or|and)|(,|or|and)\s*new\b/.test(text);
  const kept = matches.filter(
    (m) =>
      !(m.field === 'stage' && m.value === 'new' && !stageWords && !stageList) &&
      // "an email at gmail.com" speaks of addresses, not of email activities.
      !(mailDomain && m.entity === 'activities' && m.field === 'type') &&
      !(notClosed && m.field === 'stage' && (m.value === 'closed_won' || m.value === 'closed_lost')),
  );
  matches.length = 0;
  matches.push(...kept);
  for (const m of matches) for (let i = m.start; i < m.end; i++) skip.add(i);

  // Entities and fields named by words.
  const mentions = findMentions(tokens, skip, ctx.catalog);
  const entityMentions = mentions.filter((m) => !m.field);
  const fieldMentions = mentions.filter((m) => m.field);

  // The measure's words.
  const winRate = WIN_RATE.test(text);
  const conversion = CONVERSION_RATE.test(text) && !winRate;
  const wantsCount = COUNT_WORDS.test(bare);
  const agg = aggregateWord(text);

  const entity = chooseEntity({ text, tokens, ctx, entityMentions, fieldMentions, matches, winRate, conversion, agg });
  if (!entity) return { kind: 'refuse', reason: 'unknown', text: `I could not tell what this asks about. ${CAPABILITIES}` };
  const def = ctx.catalog[entity]!;
  const plan: Plan = { entity, measures: [], dimensions: [], fields: [], filters: [], having: [], order: [] };

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
    const grain = grainAt(tokens, start);
    if (grain) {
      const dateField = dateFieldOf(def, text);
      if (dateField && !plan.dimensions.some((d) => d.grain)) {
        plan.dimensions.push({ field: dateField, grain });
        dimensionTokens.add(start);
      }
      continue;
    }
    const found = dimensionAt(start);
    // "by headcount", "by deal value": a number ranks or totals, it is not something to group by.
    if (found && ['number', 'money'].includes(fieldDef(found.path)?.type ?? '')) continue;
    if (found && !plan.dimensions.some((d) => d.field === found.path)) {
      plan.dimensions.push({ field: found.path });
      for (let i = start; i < start + found.length; i++) dimensionTokens.add(i);
    }
  }
  // "industry breakdown", "owner-wise".
  for (const m of text.matchAll(/\b([a-z]+(?: [a-z]+)?) (?:breakdown|split|wise|distribution|mix)\b/g)) {
    const start = at((m.index ?? 0) + m[1]!.length) - (m[1]!.includes(' ') ? 1 : 0);
    for (const from of [start, start - 1].filter((n) => n >= 0)) {
      const found = dimensionAt(from);
      if (found && !plan.dimensions.some((d) => d.field === found.path)) {
        plan.dimensions.push({ field: found.path });
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
      if (pattern.test(text)) {
        const dateField = dateFieldOf(def, text);
        if (dateField) plan.dimensions.push({ field: dateField, grain });
        break;
      }
    }
  }

  // Filters from the organization's values.
  const byField = new Map<string, { path: string; values: string[] }>();
  /** Values of a child entity ("won" deals of accounts): they narrow a with/without condition. */
  const childValues: ValueMatch[] = [];
  for (const m of matches) {
    const path = ofTheAccount(m, tokens) ? pathOf('accounts', m.field === 'name' ? 'tags' : m.field) : valuePath(m, entity, def, pathOf);
    if (!path) {
      if (def.children[m.entity]) childValues.push(m);
      continue;
    }
    // A rate counts its own stages: "won divided by won plus lost" names them, it does not filter on them.
    if ((winRate || conversion) && path === 'stage') continue;
    if (plan.dimensions.some((d) => d.field === path) && m.how !== 'exact') continue;
    const entry = byField.get(path) ?? { path, values: [] };
    if (!entry.values.includes(m.value)) entry.values.push(m.value);
    byField.set(path, entry);
  }
  for (const { path, values } of byField.values()) {
    plan.filters.push(values.length === 1 ? { op: 'eq', field: path, value: values[0]! } : { op: 'in', field: path, values });
    read.push(`${path} ${values.length === 1 ? `= ${values[0]}` : `in ${values.join(', ')}`}`);
  }
  if (entity === 'deals' && !byField.has('stage')) {
    if (OPEN_DEALS.test(text) || notClosed) plan.filters.push({ op: 'not_in', field: 'stage', values: [...CLOSED_STAGES] });
    else if (CLOSED_DEALS.test(text) && !range) plan.filters.push({ op: 'in', field: 'stage', values: [...CLOSED_STAGES] });
  }

  // "paid orders", "unpaid orders".
  for (const m of fieldMentions) {
    if (m.entity !== entity || def.fields[m.field!]?.type !== 'bool' || dimensionTokens.has(m.start)) continue;
    const negated = /^(un|not |non)/.test(tokens[m.start - 1] === 'not' ? 'not ' : m.word) || tokens[m.start - 1] === 'not';
    plan.filters.push({ op: 'eq', field: m.field!, value: !negated });
  }
  for (const m of text.matchAll(/\b(?:un|non-?)([a-z]+)\b/g)) {
    const field = Object.entries(def.fields).find(([name, f]) => f.type === 'bool' && f.synonyms.includes(m[1]!) && name);
    if (field && !plan.filters.some((f) => 'field' in f && f.field === field[0]))
      plan.filters.push({ op: 'eq', field: field[0], value: false });
  }

  // "without any deals", "with no title", "that have contacts".
  for (const m of text.matchAll(NEGATED_CHILD)) {
    const word = m[1]!;
    const child = entityOfWord(word, ctx.catalog);
    const parent = child ? Object.entries(def.joins).find(([, j]) => j.entity === child)?.[0] : undefined;
    if (child && def.children[child]) plan.filters.push({ op: 'without', entity: child, ...childWhere(childValues, child) });
    // "contacts without an account": the join finds nothing.
    else if (parent && ctx.catalog[child!]!.fields.id) plan.filters.push({ op: 'is_null', field: `${parent}.id` });
    else {
      const field = Object.entries(def.fields).find(([, f]) => f.synonyms.includes(word) || f.synonyms.includes(singular(word)));
      if (field) plan.filters.push({ op: 'is_null', field: field[0] });
    }
  }
  for (const m of text.matchAll(WITH_CHILD)) {
    const child = entityOfWord(m[1]!, ctx.catalog);
    if (child && def.children[child]) plan.filters.push({ op: 'with', entity: child, ...childWhere(childValues, child) });
  }

  // "whose name contains 'tech'".
  const inField = text.match(
    /\b(?:with|having|has|have)\s+["']?([a-z0-9][\w.@]*)["']?\s+in\s+(?:the|their|its|his|her)\s+([a-z]+(?: [a-z]+)?)/,
  );
  const quoted =
    question.match(
      /(?:contain|contains|containing|including|includes|include|with|like|matching|mention|mentions|mentioning)\s+(?:the\s+(?:word|text)\s+)?["“'‘]([^"”'’]{1,100})["”'’]/i,
    ) ??
    text.match(/\b(?:contain|contains|containing|includes|including|mentions|mentioning)\s+(?:the\s+(?:word|text)\s+)?([a-z0-9][\w.@]*)/);
  if (inField && (fieldOfWord(def, inField[2]!) || fieldOfWord(def, inField[2]!.split(' ').pop()!))) {
    const field = fieldOfWord(def, inField[2]!) ?? fieldOfWord(def, inField[2]!.split(' ').pop()!)!;
    plan.filters.push({ op: 'contains', field, value: inField[1]! });
  } else if (quoted) {
    const before = words(question.slice(0, quoted.index ?? 0));
    const field =
      [...before]
        .reverse()
        .map((w) => fieldOfWord(def, w))
        .find(Boolean) ?? def.label;
    plan.filters.push({ op: 'contains', field, value: quoted[1]!.trim() });
  }

  // The period, on the date the question means.
  if (range) {
    const dateField = dateFieldOf(def, text);
    if (dateField) {
      if (range.from) plan.filters.push({ op: 'gte', field: dateField, value: range.from });
      if (range.to) plan.filters.push({ op: 'lt', field: dateField, value: range.to });
      read.push(`${dateField} ${range.from ?? '…'} – ${range.to ?? '…'}`);
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
  let measure: string | null = null;
  if (winRate && entity === 'deals') measure = 'win_rate';
  else if (conversion && entity === 'contacts') measure = 'conversion_rate';
  else if (agg.avg !== undefined) measure = prefixed('avg', numberNear(agg.avg));
  // "maximum order total": the extreme of a number whose name says total.
  else if (explicitExtreme && agg.sum !== undefined && (agg.max ?? agg.min)! < agg.sum && !numericMentions.some((m) => m.start > agg.sum!))
    measure = prefixed(agg.max !== undefined ? 'max' : 'min', numberNear(agg.max ?? agg.min));
  else if (countsNumber) measure = prefixed('sum', numberNear(howManyNumber.index === undefined ? undefined : at(howManyNumber.index) + 2));
  else if (agg.sum !== undefined && !(wantsCount && numericMentions.length === 0)) measure = prefixed('sum', numberNear(agg.sum));
  else if (wantsCount) measure = DISTINCT_WORDS.test(text) ? distinctMeasure(fieldMentions, pathOf) : 'count';
  else if (
    (agg.max !== undefined || agg.min !== undefined) &&
    numericMentions.length > 0 &&
    (plan.dimensions.length > 0 || (!listAsked && !limit))
  )
    measure = prefixed(agg.max !== undefined ? 'max' : 'min', numberNear(agg.max ?? agg.min));
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
    if (totalWords && grouped && fieldDef(path)?.type !== 'date') {
      plan.having.push({ measure: `sum:${path}`, op: c.op, value: c.value });
      if (measure === `sum:${path}`) measure = null;
    } else plan.filters.push({ op: c.op, field: path, value: c.value });
    read.push(`${path} ${c.op} ${c.value}`);
  }

  // Rankings: "which account has the most deals", "top 3 accounts by deal value", "top 5 customers" (of orders).
  const head = entityMentions.find((m) => m.entity !== entity) && entityMentions[0];
  const textTarget = fieldMentions.find((m) => m.entity === entity && def.fields[m.field!]?.type === 'text' && !CRM.includes(entity));
  const rankedOther = head && head.entity !== entity && !textTarget ? joinedLabel(head.entity) : null;
  const ranks = Boolean(rankingWord || limit);
  if (rankedOther && ranks && !plan.dimensions.some((d) => d.field === rankedOther)) {
    plan.dimensions.unshift({ field: rankedOther });
    measure ??= 'count';
  } else if (!rankedOther && textTarget && (ranks || plan.having.length) && !plan.dimensions.length) {
    plan.dimensions.push({ field: textTarget.field! });
    if (ranks) measure ??= defaultNumber && !/\b(most|fewest) (orders|rows)\b/.test(text) ? `sum:${defaultNumber}` : 'count';
  }
  if (plan.having.length && plan.dimensions.length === 0) plan.dimensions.push({ field: textTarget?.field ?? def.label });

  if (measure) plan.measures.push(measure);
  const asksNumbers =
    /\b(total|totals|how much|count|counts|number|numbers|amount|amounts|value|values|with their|and their|sum|sums|and how|how many)\b/.test(
      text,
    );
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
    plan.fields = listFields(def, tokens, fieldMentions, entityMentions, entity, matches, text, plan);
    plan.order.push({ by: ownNumber, direction: rankingWord ?? 'desc' });
    plan.limit = limit;
    return { kind: 'plan', plan, read };
  }
  if (measure && ranks && plan.dimensions.length > 0) {
    plan.order.push({ by: measure, direction: rankingWord ?? 'desc' });
    if ((rankedOther || textTarget) && !asksNumbers) plan.measures = [];
    plan.limit = limit ?? (singularHead(entityMentions, textTarget) ? 1 : undefined);
  } else if (!measure && plan.dimensions.length === 0) {
    // A list: its fields, ordered by the number the question ranks by.
    plan.fields = listFields(def, tokens, fieldMentions, entityMentions, entity, matches, text, plan);
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

  // Money in several currencies is never added up across them.
  const money = plan.measures.some((m) => /^(sum|avg|min|max):/.test(m) && fieldDef(m.split(':')[1]!)?.type === 'money');
  const currencyFixed = plan.filters.some((f) => 'field' in f && f.field === 'currency');
  if (money && !currencyFixed && ctx.currencies.length > 1 && def.fields.currency && !plan.dimensions.some((d) => d.field === 'currency'))
    plan.dimensions.push({ field: 'currency' });

  if (plan.measures.length === 0 && plan.dimensions.length === 0 && plan.fields.length === 0) plan.fields = [def.label];
  return { kind: 'plan', plan, read };
}

const prefixed = (fn: string, path: string | null) => (path ? `${fn}:${path}` : null);

function markWord(tokens: string[], piece: string, skip: Set<number>) {
  const i = tokens.findIndex((t, n) => t === piece && !skip.has(n));
  if (i >= 0) skip.add(i);
}

/** A matched value as a filter path of the plan's entity (a tag name filters the tags column). */
function valuePath(m: ValueMatch, entity: string, def: EntityDef, pathOf: (owner: string, field: string) => string | null): string | null {
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

/** The child values said with a with/without condition, as its `where`. */
function childWhere(values: ValueMatch[], child: string): { where?: { field: string; values: string[] }[] } {
  const byField = new Map<string, string[]>();
  for (const m of values.filter((v) => v.entity === child)) byField.set(m.field, [...new Set([...(byField.get(m.field) ?? []), m.value])]);
  return byField.size ? { where: [...byField].map(([field, list]) => ({ field, values: list })) } : {};
}

function distinctMeasure(fields: Mention[], pathOf: (owner: string, field: string) => string | null): string {
  const target = fields.find((m) => pathOf(m.entity, m.field!));
  return target ? `count_distinct:${pathOf(target.entity, target.field!)}` : 'count';
}

/** What a list shows: fields named before the entity ("emails of contacts") or after "their", else the name. */
function listFields(
  def: EntityDef,
  tokens: string[],
  fields: Mention[],
  entities: Mention[],
  entity: string,
  matches: ValueMatch[],
  text: string,
  plan: Plan,
): string[] {
  // A field the question filters on ("with status completed") is a condition, not a column asked for.
  const filtered = new Set(plan.filters.flatMap((f) => ('field' in f ? [f.field] : [])));
  if (def.fields.first_name && /\bfirst (?:name )?and last names?\b/.test(text)) return ['first_name', 'last_name'];
  const own = entities.find((m) => m.entity === entity);
  const used = new Set(matches.flatMap((m) => Array.from({ length: m.end - m.start }, (_, i) => m.start + i)));
  const shown = fields.filter((m) => {
    if (m.entity !== entity || used.has(m.start) || filtered.has(m.field!)) return false;
    const f = def.fields[m.field!]!;
    if (f.type === 'date' || f.type === 'money' || f.type === 'number') return false;
    const before = own ? m.start < own.start : false;
    const their = tokens[m.start - 1] === 'their' || tokens[m.start - 1] === 'and' || tokens[m.start - 1] === 'with';
    return before || their;
  });
  const names = [...new Set(shown.map((m) => m.field!))];
  if (names.length === 0) return [def.label];
  if (names.length > 1 || names[0] !== def.label) {
    const mentionsName = tokens.some((t) => t === 'name' || t === 'names');
    return mentionsName && !names.includes(def.label) ? [def.label, ...names] : names;
  }
  return names;
}
