import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as kb from '../../db/knowledge-base';
import { exactTerms } from '../../domain/knowledge-base-terms';
import { EXACT_WEIGHT, FULL_TEXT_BOUNDS, LEXICAL_EMBEDDER_VECTOR_WEIGHT, fusedScores } from '../../domain/knowledge-base';
import { embedderFor } from '../../platform/adapters/embedders/embedder';
import { importTexts } from '../../services/knowledge-base/datasets';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, orgUuid, type Tenant } from '../support/identity';

// Exact terms first: a passage holding the identifier, name or quoted phrase a question names ranks above
// a near-duplicate that shares every other word, whatever the case, accents and separators. Each pair
// is built so that the ranking without the rule (the same candidates fused without the exact share)
// puts the near-duplicate first: the near-duplicate is short or repeats the shared words, the answer
// carries other words. The built-in embedder (deterministic, no model) embeds both.

let ctx: TestContext;
let t: Tenant;
let orgId: string;
let datasetId: string;
const sourceOf = new Map<string, string>();

const DOCS: Record<string, string> = {
  'sku-4471':
    'Cordless drill kit SKU-4471: the warranty lasts three years. Batteries, chargers and the carry case are listed on the order confirmation with their own terms and prices.',
  'sku-4472': 'Cordless drill kit SKU-4472: cordless drill kit warranty, three years.',
  'buyer-pays':
    'Under these delivery terms the buyer pays the carrier for the delivery. Insurance, unloading and storage at the destination are agreed separately in the contract with each customer.',
  'carrier-pays': 'Under these delivery terms the carrier pays the buyer for the delivery.',
  muller: 'Zoë Müller opens trade accounts for Germany.',
  mueller: 'Zoe Mueller opens trade accounts for Switzerland. Zoe Mueller reviews trade accounts and opens trade accounts.',
  alvarez:
    'José Álvarez handles returns for Spain. Credit notes, exchanges and collections from customer sites follow the regional procedure described in the returns handbook.',
  alves: 'José Alves handles returns for Portugal.',
};

const ask = async (query: string, results_count = 3) => {
  const res = await ctx.request('POST', `/knowledge-base/datasets/${datasetId}/query`, {
    token: t.session,
    body: { query, results_count },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.results as { source_id: string; content: string; score: number }[];
};
const nameOf = (sourceId: string) => [...sourceOf].find(([, id]) => id === sourceId)?.[0];

/** The first passage as the fusion without exact terms would order the same candidates. */
async function firstWithoutTheRule(query: string): Promise<string | undefined> {
  const embedder = embedderFor(ctx.config, 'builtin-hashing-384')!;
  const [embedding] = await embedder.embed([query], 'query');
  const { terms, words } = exactTerms(query);
  const ranked = await ctx.deps.sql.begin((tx) =>
    kb.rankChunks(tx, orgId, datasetId, {
      text: query,
      embedding: embedding!,
      model: embedder.model,
      candidates: 20,
      ...FULL_TEXT_BOUNDS,
      exactTerms: terms,
      exactWords: words,
    }),
  );
  const base = fusedScores(ranked, LEXICAL_EMBEDDER_VECTOR_WEIGHT, 0);
  const best = ranked.map((r, i) => ({ r, s: base[i]! })).sort((a, b) => b.s - a.s)[0];
  return best && nameOf(best.r.source_id);
}

beforeAll(async () => {
  ctx = await createTestContext();
  t = await newTenant(ctx);
  orgId = await orgUuid(ctx, t);
  const created = await ctx.request('POST', '/knowledge-base/datasets', { token: t.session, body: { name: 'Near duplicates' } });
  expect(created.status, created.text).toBe(200);
  datasetId = created.body.id;
  expect(created.body.embedding_model).toBe('builtin-hashing-384');
  const names = Object.keys(DOCS);
  const imported = await importTexts(
    ctx.deps,
    orgId,
    'user:test',
    datasetId,
    names.map((name) => ({ name, text: DOCS[name]! })),
  );
  for (const [i, id] of imported.source_ids.entries()) sourceOf.set(names[i]!, id);
}, 120_000);
afterAll(async () => ctx?.close());

describe('exact terms rank first', () => {
  it.each([
    ['an identifier as written', 'cordless drill kit warranty SKU-4471', 'sku-4471', 'sku-4472'],
    ['an identifier without its dash', 'cordless drill kit warranty SKU4471', 'sku-4471', 'sku-4472'],
    ['an identifier with a space, in lower case', 'cordless drill kit warranty sku 4471', 'sku-4471', 'sku-4472'],
    ['a quoted phrase', 'delivery terms where "the buyer pays the carrier"', 'buyer-pays', 'carrier-pays'],
    ['a quoted phrase in typographic quotes', 'delivery terms where “the buyer pays the carrier”', 'buyer-pays', 'carrier-pays'],
    ['a name as written', 'Zoë Müller trade accounts', 'muller', 'mueller'],
    ['a name in capitals without its accents', 'ZOE MULLER trade accounts', 'muller', 'mueller'],
    ['a name without its accents', 'Jose Alvarez returns', 'alvarez', 'alves'],
    ['a name in lower case without its accents', 'jose alvarez handles returns', 'alvarez', 'alves'],
  ])('%s: the passage holding it comes first, over the near-duplicate', async (_kind, query, answer, duplicate) => {
    const results = await ask(query);
    expect(results.map((r) => nameOf(r.source_id))[0], query).toBe(answer);
    expect(results.map((r) => nameOf(r.source_id))).toContain(duplicate);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    expect(results.every((r) => r.score >= 0 && r.score <= 1)).toBe(true);
  });

  it.each([
    ['cordless drill kit warranty SKU4471', 'sku-4472'],
    ['delivery terms where "the buyer pays the carrier"', 'carrier-pays'],
    ['ZOE MULLER trade accounts', 'mueller'],
    ['jose alvarez handles returns', 'alves'],
  ])('without the rule, %s would put the near-duplicate first', async (query, duplicate) => {
    expect(await firstWithoutTheRule(query)).toBe(duplicate);
  });

  it('leaves a question without exact terms as the fusion orders it', async () => {
    const query = 'who handles returns';
    expect(exactTerms(query).terms).toEqual([]);
    const results = await ask(query, 8);
    const embedder = embedderFor(ctx.config, 'builtin-hashing-384')!;
    const [embedding] = await embedder.embed([query], 'query');
    const ranked = await ctx.deps.sql.begin((tx) =>
      kb.rankChunks(tx, orgId, datasetId, {
        text: query,
        embedding: embedding!,
        model: embedder.model,
        candidates: 20,
        ...FULL_TEXT_BOUNDS,
        exactWords: exactTerms(query).words,
      }),
    );
    expect(ranked.every((r) => r.exact_score === null)).toBe(true);
    const base = fusedScores(ranked, LEXICAL_EMBEDDER_VECTOR_WEIGHT, 0);
    const expected = new Map(ranked.map((r, i) => [r.chunk_id, Number(base[i]!.toFixed(6))]));
    for (const r of results) expect([...expected.values()]).toContain(r.score);
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
  });

  it('scores a dataset holding none of the named terms at most the other half, so merged datasets keep the holder first', async () => {
    const otherDataset = await ctx.request('POST', '/knowledge-base/datasets', { token: t.session, body: { name: 'Other kits' } });
    await importTexts(ctx.deps, orgId, 'user:test', otherDataset.body.id, [
      { name: 'other', text: 'Cordless drill kit warranty: cordless drill kits carry a three years warranty.' },
    ]);
    const query = 'cordless drill kit warranty SKU4471';
    const res = await ctx.request('POST', `/knowledge-base/datasets/${otherDataset.body.id}/query`, {
      token: t.session,
      body: { query, results_count: 3 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    for (const r of res.body.results) expect(r.score).toBeLessThanOrEqual(1 - EXACT_WEIGHT);
    expect((await ask(query))[0]!.score).toBeGreaterThan(res.body.results[0].score);
  });

  it("never brings another organization's passage that holds the identifier", async () => {
    const other = await newTenant(ctx);
    const otherOrg = await orgUuid(ctx, other);
    const otherDataset = await ctx.request('POST', '/knowledge-base/datasets', { token: other.session, body: { name: 'Theirs' } });
    await importTexts(ctx.deps, otherOrg, 'user:test', otherDataset.body.id, [
      { name: 'theirs', text: 'Drill SKU-4473 from another catalogue.' },
    ]);
    const results = await ask('SKU-4473', 10);
    expect(results.some((r) => r.content.includes('SKU-4473'))).toBe(false);
    expect(results.every((r) => nameOf(r.source_id) !== undefined)).toBe(true);
  });
});
