import { crmValues, customTextValues } from '../../db/semantic-values';
import { type Catalog, type CustomTableShape, catalogOf } from '../../domain/semantic-layer/catalog';
import { type CompiledPlan, PlanError, compilePlan } from '../../domain/semantic-layer/compile';
import { type Understanding, CAPABILITIES, parseQuestion } from '../../domain/semantic-layer/parser';
import type { Plan } from '../../domain/semantic-layer/plan';
import type { WordReading } from '../../domain/semantic-layer/reading';
import {
  type CatalogTerm,
  type Nearest,
  TERM_AMBIGUOUS_SCORE,
  catalogTerms,
  clearlyNearest,
  cosine,
  nearestTerms,
  readAsTerms,
  unknownWords,
} from '../../domain/semantic-layer/terms';
import { words } from '../../domain/semantic-layer/text';
import { ValueIndex, type ValueEntry } from '../../domain/semantic-layer/values';
import { PARSER_WORDS, STOP_WORDS, SUPERLATIVES, knownValues, valueAliases } from '../../domain/semantic-layer/vocabulary';
import type { Embedder } from '../../platform/adapters/embedders/embedder';
import type { ServiceDeps } from '../deps';
import { type PlanCompleter, completeRefused } from './plan-completer';
import { readableSchema } from './schema';
import type { TermChooser } from './term-chooser';

/** How long an organization's value index is reused: new records show up within this. */
const INDEX_TTL_MS = 15_000;

export type Understood =
  | { kind: 'plan'; plan: Plan; compiled: CompiledPlan; read: string[]; words: WordReading[]; catalog: Catalog }
  | Exclude<Understanding, { kind: 'plan' }>;

interface OrgIndex {
  at: number;
  catalog: Catalog;
  index: ValueIndex;
  currencies: string[];
  /** Every word the rules know (the catalog's and the parser's): the others may be looked up by meaning. */
  vocabulary: ReadonlySet<string>;
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
  // The parser's own words are known too, though they never identify a record (the value index leaves them out).
  // Also words the parser's own patterns read ("ends in", "using"): an inflection is where the embedder is surest and most wrong.
  const allKnown = new Set([...vocabulary, ...PARSER_WORDS, ...Object.keys(SUPERLATIVES), 'using', 'used', 'use', 'ends', 'ending', 'end']);
  const built: OrgIndex = {
    at: Date.now(),
    catalog,
    index: new ValueIndex(rows, vocabulary, [...valueAliases(), ...knownValues(catalog)]),
    currencies,
    vocabulary: allKnown,
  };
  if (cache.size > 1000) cache.clear();
  cache.set(orgId, built);
  return built;
}

/** Forgets an organization's index (tests that change data and ask at once). */
export const forgetOrgIndex = (orgId: string) => cache.delete(orgId);

/**
 * A question to a compiled plan, a question back (an ambiguous name) or a plain refusal. Rules first, on
 * the question with its unknown words read as the catalog term the embedder finds clearly nearest (or, when
 * two terms are about as near, the one `chooser` picks); when no word names what the question is about,
 * the embedder's nearest catalog example decides.
 */
export async function understandQuestion(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  question: string,
  options: { today?: Date; embedder?: Embedder; chooser?: TermChooser; completer?: PlanCompleter } = {},
): Promise<Understood> {
  const { catalog, index, currencies, vocabulary } = await orgIndex(deps, orgId);
  const today = options.today ?? new Date(new Date().toISOString().slice(0, 10));
  const embedder = options.embedder && !options.embedder.lexical ? options.embedder : undefined;
  let asked = question;
  let termsRead: Nearest[] = [];
  // A capitalised word past the first is a name ("Head of Growth", "Pied Piper"), never read by meaning as a catalog term.
  const names = new Set(words(question, true).flatMap((w, i) => (i > 0 && /^\p{Lu}/u.test(w) ? [words(w)[0] ?? ''] : [])));
  // "unpaid", "non-vip": a known word with a negating prefix is the parser's own to read.
  const prefixed = (w: string) => /^(un|non)/.test(w) && vocabulary.has(w.replace(/^(un|non-?)/, ''));
  const unknown = embedder ? unknownWords(question, vocabulary, (w) => index.holds(w)).filter((w) => !names.has(w) && !prefixed(w)) : [];
  if (embedder && unknown.length > 0) {
    // The embedder is an aid: when it fails or is slow to answer, the rules answer alone.
    const nearest = await nearestCatalogTerms(embedder, catalog, unknown).catch(() => []);
    termsRead = await settle(question, nearest, options.chooser);
    asked = readAsTerms(question, termsRead);
  }
  let understanding = parseQuestion(asked, { catalog, index, currencies, today });
  if (understanding.kind === 'refuse' && understanding.reason === 'unknown' && embedder && words(question).length > 1) {
    const hint = await nearestEntity(embedder, catalog, question).catch(() => null);
    if (hint) understanding = parseQuestion(asked, { catalog, index, currencies, today, entityHint: hint });
  }
  if (understanding.kind === 'refuse' && understanding.partial && options.completer) {
    const ctx = { catalog, index, currencies, today };
    understanding = (await completeRefused(asked, understanding, ctx, options.completer).catch(() => null)) ?? understanding;
  }
  if (understanding.kind !== 'plan') return understanding;
  const read = [...understanding.read, ...termsRead.map((n) => `"${n.word}" read as "${n.term.term}"`)];
  try {
    return { ...understanding, read, compiled: compilePlan(understanding.plan, catalog), catalog };
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    return { kind: 'refuse', reason: 'unknown', text: `I cannot answer that as asked (${error.message}). ${CAPABILITIES}` };
  }
}

/** The catalog's term vectors per embedder and catalog: ready, or being computed. */
const termVectors = new Map<string, { terms: CatalogTerm[]; vectors?: number[][] }>();
/** Terms embedded per call: each call stays well inside the embedder's query timeout on a loaded machine. */
const TERM_BATCH = 24;

/**
 * For each unknown word, the catalog terms nearest in meaning; none while the catalog's own vectors are
 * still being computed (once per process and catalog, in the background: a question never waits for them).
 */
async function nearestCatalogTerms(embedder: Embedder, catalog: Catalog, unknown: string[]): Promise<Nearest[]> {
  const terms = catalogTerms(catalog);
  const key = termsKey(embedder, terms);
  const known = termVectors.get(key);
  if (!known) {
    if (termVectors.size > 100) termVectors.clear();
    const entry: { terms: CatalogTerm[]; vectors?: number[][] } = { terms };
    termVectors.set(key, entry);
    embedTerms(embedder, terms).then(
      (vectors) => (entry.vectors = vectors),
      () => termVectors.delete(key), // tried again by a later question
    );
    return [];
  }
  if (!known.vectors) return [];
  const vectors = await embedder.embed(unknown, 'query');
  return nearestTerms(unknown, vectors, known.terms, known.vectors);
}

/** Warms the term vectors of an organization's catalog (benches, and the first question of a process). */
export async function prepareCatalogTerms(deps: Pick<ServiceDeps, 'sql'>, orgId: string, embedder: Embedder): Promise<void> {
  const { catalog } = await orgIndex(deps, orgId);
  if (embedder.lexical) return;
  const terms = catalogTerms(catalog);
  const key = termsKey(embedder, terms);
  if (!termVectors.get(key)?.vectors) termVectors.set(key, { terms, vectors: await embedTerms(embedder, terms) });
}

const termsKey = (embedder: Embedder, terms: CatalogTerm[]) => `${embedder.model}:${terms.map((t) => `${t.term}=${t.target}`).join('|')}`;

/** One vector per term; a term said by several targets is embedded once. */
async function embedTerms(embedder: Embedder, terms: CatalogTerm[]): Promise<number[][]> {
  const unique = [...new Set(terms.map((t) => t.term))];
  const byTerm = new Map<string, number[]>();
  for (let i = 0; i < unique.length; i += TERM_BATCH) {
    const batch = unique.slice(i, i + TERM_BATCH);
    const vectors = await embedder.embed(batch, 'query');
    for (const [j, term] of batch.entries()) byTerm.set(term, vectors[j]!);
  }
  return terms.map((t) => byTerm.get(t.term)!);
}

/** The words read as a term: a clear winner by the embedder alone, an ambiguous one as the chooser picks. */
async function settle(question: string, nearest: Nearest[], chooser: TermChooser | undefined): Promise<Nearest[]> {
  const read: Nearest[] = [];
  for (const n of nearest) {
    if (clearlyNearest(n)) read.push(n);
    else if (chooser && n.score >= TERM_AMBIGUOUS_SCORE) {
      const options = [...new Set(n.options.map((o) => o.term.term))];
      const chosen = await chooser(question, n.word, options).catch(() => null);
      const option = n.options.find((o) => o.term.term === chosen);
      if (option) read.push({ ...n, term: option.term, score: option.score });
    }
  }
  return read;
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
