import { crmValues, customTextValues } from '../../db/semantic-values';
import { type Catalog, type CustomTableShape, catalogOf } from '../../domain/semantic-layer/catalog';
import { type CompiledPlan, PlanError, compilePlan } from '../../domain/semantic-layer/compile';
import { type Understanding, CAPABILITIES, parseQuestion } from '../../domain/semantic-layer/parser';
import type { Plan } from '../../domain/semantic-layer/plan';
import { words } from '../../domain/semantic-layer/text';
import { ValueIndex, type ValueEntry } from '../../domain/semantic-layer/values';
import { STOP_WORDS, valueAliases } from '../../domain/semantic-layer/vocabulary';
import type { Embedder } from '../../platform/embedder';
import type { ServiceDeps } from '../deps';
import { readableSchema } from './schema';

/** How long an organization's value index is reused: new records show up within this. */
const INDEX_TTL_MS = 15_000;

export type Understood =
  | { kind: 'plan'; plan: Plan; compiled: CompiledPlan; read: string[]; catalog: Catalog }
  | Exclude<Understanding, { kind: 'plan' }>;

interface OrgIndex {
  at: number;
  catalog: Catalog;
  index: ValueIndex;
  currencies: string[];
}

const cache = new Map<string, OrgIndex>();

/** The organization's catalog (CRM and custom tables) and value index, cached briefly. */
export async function orgIndex(deps: Pick<ServiceDeps, 'sql'>, orgId: string): Promise<OrgIndex> {
  const known = cache.get(orgId);
  if (known && Date.now() - known.at < INDEX_TTL_MS) return known;
  const relations = await readableSchema(deps, orgId);
  const custom: CustomTableShape[] = relations
    .filter((r) => r.kind === 'custom_data')
    .map((r) => ({ name: r.name.split('.')[1]!, relation: r.name, description: r.description ?? '', columns: r.columns }));
  const rows: ValueEntry[] = await crmValues(deps.sql, orgId);
  const accountNames = new Set(rows.filter((r) => r.entity === 'accounts' && r.field === 'name').map((r) => r.value));
  const accountColumns: Record<string, string> = {};
  for (const table of custom) {
    const text = table.columns.filter((c) => c.type === 'text' && !c.name.startsWith('_')).map((c) => c.name);
    const values = await customTextValues(deps.sql, orgId, table.name, text);
    rows.push(...values);
    // A column most of whose values are account names joins accounts by name.
    for (const column of text) {
      const own = values.filter((v) => v.field === column);
      if (own.length >= 2 && own.filter((v) => accountNames.has(v.value)).length >= own.length / 2) {
        accountColumns[table.name] = column;
        break;
      }
    }
  }
  const catalog = catalogOf(custom, accountColumns);
  const vocabulary = new Set(STOP_WORDS);
  for (const def of Object.values(catalog)) {
    for (const s of def.synonyms) for (const w of s.split(' ')) vocabulary.add(w);
    for (const f of Object.values(def.fields)) for (const s of f.synonyms) for (const w of s.split(' ')) vocabulary.add(w);
  }
  const currencies = [...new Set(rows.filter((r) => r.entity === 'deals' && r.field === 'currency').map((r) => r.value))];
  const built: OrgIndex = { at: Date.now(), catalog, index: new ValueIndex(rows, vocabulary, valueAliases()), currencies };
  if (cache.size > 1000) cache.clear();
  cache.set(orgId, built);
  return built;
}

/** Forgets an organization's index (tests that change data and ask at once). */
export const forgetOrgIndex = (orgId: string) => cache.delete(orgId);

/**
 * A question to a compiled plan, a question back (an ambiguous name) or a plain refusal. Rules first;
 * when no word names what the question is about, the embedder's nearest catalog example decides.
 */
export async function understandQuestion(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  question: string,
  options: { today?: Date; embedder?: Embedder } = {},
): Promise<Understood> {
  const { catalog, index, currencies } = await orgIndex(deps, orgId);
  const today = options.today ?? new Date(new Date().toISOString().slice(0, 10));
  let understanding = parseQuestion(question, { catalog, index, currencies, today });
  if (understanding.kind === 'refuse' && understanding.reason === 'unknown' && options.embedder && words(question).length > 1) {
    const hint = await nearestEntity(options.embedder, catalog, question).catch(() => null);
    if (hint) understanding = parseQuestion(question, { catalog, index, currencies, today, entityHint: hint });
  }
  if (understanding.kind !== 'plan') return understanding;
  try {
    return { ...understanding, compiled: compilePlan(understanding.plan, catalog), catalog };
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    return { kind: 'refuse', reason: 'unknown', text: `I cannot answer that as asked (${error.message}). ${CAPABILITIES}` };
  }
}

const exampleVectors = new Map<string, { entity: string; vector: number[] }[]>();

/** The entity whose example questions the embedder finds nearest, when near enough to trust. */
async function nearestEntity(embedder: Embedder, catalog: Catalog, question: string): Promise<string | null> {
  if (embedder.lexical) return null;
  const key = `${embedder.model}:${Object.keys(catalog).sort().join(',')}`;
  let examples = exampleVectors.get(key);
  if (!examples) {
    const list = Object.values(catalog).flatMap((def) => def.examples.map((text) => ({ entity: def.name, text })));
    const vectors = await embedder.embed(
      list.map((e) => e.text),
      'query',
    );
    examples = list.map((e, i) => ({ entity: e.entity, vector: vectors[i]! }));
    exampleVectors.set(key, examples);
  }
  const [q] = await embedder.embed([question], 'query');
  let best: { entity: string; score: number } | null = null;
  for (const e of examples) {
    const score = cosine(q!, e.vector);
    if (!best || score > best.score) best = { entity: e.entity, score };
  }
  return best && best.score >= 0.82 ? best.entity : null;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
