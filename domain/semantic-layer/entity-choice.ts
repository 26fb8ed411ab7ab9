import type { Catalog } from './catalog';
import { type Mention, CRM, charOf, joinsTo } from './mentions';
import type { aggregateWord } from './numbers';
import type { ValueMatch } from './values';
import { NEGATED_CHILD, WITH_CHILD } from './vocabulary';

/**
 * Which entity a question is about: the rates say it; a number aggregated or ranked belongs to the entity
 * that holds it; values only one entity has (stages, types, titles) pull toward it; else the entity the
 * counting words name, the first one named, and last the embedder's nearest example.
 */
export function chooseEntity(input: {
  text: string;
  tokens: string[];
  ctx: { catalog: Catalog; entityHint?: string | null };
  entityMentions: Mention[];
  fieldMentions: Mention[];
  matches: ValueMatch[];
  winRate: boolean;
  conversion: boolean;
  agg: ReturnType<typeof aggregateWord>;
}): string | null {
  const { ctx, fieldMentions, matches, text } = input;
  if (input.winRate) return 'deals';
  if (input.conversion) return 'contacts';
  const isCustom = (name: string) => !CRM.includes(name);
  // Entities named as what rows must have or lack ("without deals") are not what is asked about.
  const objects = new Set<number>();
  for (const re of [NEGATED_CHILD, WITH_CHILD])
    for (const m of text.matchAll(re)) objects.add((text.slice(0, (m.index ?? 0) + m[0].length - m[1]!.length).match(/ /g) ?? []).length);
  // "account names", "deal value": a field phrase that says its entity names it too.
  const fromFields = fieldMentions.filter(
    (m) => m.word.includes(' ') && ctx.catalog[m.entity]!.synonyms.some((w) => m.word.split(' ').includes(w)),
  );
  const entityMentions = [
    ...input.entityMentions.filter((m) => !objects.has(m.start)),
    ...fromFields.map((m) => ({ ...m, field: undefined })),
  ].sort((a, b) => a.start - b.start);
  const named = [...new Set(entityMentions.map((e) => e.entity))];
  const custom = named.find(isCustom);
  // A custom table named in the question is what it asks about ("top customers by order value").
  if (custom) return custom;

  // A number aggregated or ranked ("total deal value", "how many minutes", "top 3 by deal value") belongs to the entity that holds it.
  const anchors = [input.agg.sum, input.agg.avg, input.agg.max, input.agg.min].filter((p): p is number => p !== undefined);
  const howMany = text.match(/\b(?:how many|number of)\s+([a-z]+)/);
  if (howMany) anchors.push((text.slice(0, howMany.index).match(/ /g) ?? []).length + 2);
  const byNumber = text.match(/\bby\s+(?:[a-z]+\s+)?([a-z]+)/);
  if (byNumber) anchors.push((text.slice(0, byNumber.index).match(/ /g) ?? []).length);
  const numeric = fieldMentions.filter((m) => {
    const f = ctx.catalog[m.entity]!.fields[m.field!]!;
    return (f.type === 'money' || f.type === 'number') && anchors.some((p) => m.start >= p && m.start <= p + 4);
  });
  const owned =
    numeric.find((m) => custom && m.entity === custom) ??
    numeric.find((m) => named.includes(m.entity)) ??
    numeric.find((m) => joinsTo(ctx.catalog[m.entity]!, named)) ??
    (named.length === 0 ? numeric[0] : undefined);
  if (owned && (named.length === 0 || named.includes(owned.entity) || joinsTo(ctx.catalog[owned.entity]!, named))) {
    if (!(howMany && entityMentions.some((e) => e.word === howMany[1]))) return owned.entity;
  }

  // Values of another entity's stages or types ("calls and meetings per account", "won per industry") make it the subject.
  const head = entityMentions[0];
  if (head) {
    const kinds = matches.filter((m) => ['stage', 'type', 'status'].includes(m.field) && m.entity !== head.entity);
    const pulled = kinds.find((m) => joinsTo(ctx.catalog[m.entity]!, [head.entity]));
    if (
      pulled &&
      /\b(per|by|each|every|for each)\b/.test(text) &&
      !input.entityMentions.some(
        (e) => e.entity === head.entity && /\b(how many|number of|count)\s+(?:[a-z]+\s+)?$/.test(text.slice(0, charOf(text, e.start))),
      )
    )
      return pulled.entity;
  }

  const counted = text.match(
    /\b(?:how many|number of|count of|count|list|show|which|what|total|average)\s+(?:of\s+)?(?:the\s+|all\s+|our\s+|my\s+)?(?:[a-z]+\s+)?([a-z]+)/,
  );
  if (counted) {
    const hit = entityMentions.find((m) => m.word === counted[1] || m.word.endsWith(` ${counted[1]}`));
    if (hit) return custom ?? hit.entity;
  }
  if (head) {
    // "most deals" after "which account": the counted entity is the one with the ranking word.
    const ranked = text.match(/\b(?:most|fewest|least|more|highest number of|largest number of|greatest number of)\s+([a-z]+)/);
    const rankedEntity = ranked ? input.entityMentions.find((m) => m.word === ranked[1])?.entity : undefined;
    if (rankedEntity && rankedEntity !== head.entity && joinsTo(ctx.catalog[rankedEntity]!, [head.entity])) return rankedEntity;
    return custom ?? head.entity;
  }
  const anyNumeric = fieldMentions.find((m) => ['money', 'number'].includes(ctx.catalog[m.entity]!.fields[m.field!]!.type));
  if (anyNumeric) return anyNumeric.entity;
  if (matches.length > 0) {
    // Values only one entity has (a stage, a title, a mail domain) say which it is.
    const kind = matches.find((m) => ['stage', 'type', 'status', 'title', 'email_domain', 'source'].includes(m.field)) ?? matches[0]!;
    return kind.entity === 'tags' ? 'accounts' : kind.entity;
  }
  return ctx.entityHint ?? null;
}
