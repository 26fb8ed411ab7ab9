import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSql, type Sql } from '../db/client';
import * as kb from '../db/knowledge-base';
import { loadConfig, type Config } from '../platform/config';
import { fusedScore } from '../domain/knowledge-base';
import { createEmbedder } from '../platform/embedder';
import { startBenchDatabase } from './environment';
import { newId } from '../platform/ids';
import * as kbService from '../services/knowledge-base';

/** What this bench needs: a throwaway Postgres (with pgvector) and the configuration; no API, no Temporal. */
interface KbBenchEnvironment {
  deps: { sql: Sql; config: Config };
  close(): Promise<void>;
}

export async function startKbBenchEnvironment(): Promise<KbBenchEnvironment> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-kb-'));
  const { pg, databaseUrl } = await startBenchDatabase(dir);
  const config = loadConfig({ DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', TEMPORAL_ADDRESS: '127.0.0.1:7233' });
  const sql = createSql(databaseUrl, 10);
  return {
    deps: { sql, config },
    async close() {
      await sql.end({ timeout: 5 });
      await pg.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Retrieval quality and speed of knowledge bases, on the service's own SQL and embedder.
//
// Quality: recall@10 and nDCG@10 of full text only, vector only and hybrid (the service's fusion), side
// by side, on a BEIR-format set (corpus.jsonl, queries.jsonl, qrels/test.tsv) in KB_BENCH_BEIR_DIR
// (e.g. BEIR SciFact). Without one, on a synthetic judged set made here (labelled as such).
// Speed: ingestion chunks/s through the service's bulk import (chunk + embed + write + publish,
// KB_BENCH_CONCURRENCY imports at a time) and query p50/p95 at KB_BENCH_CHUNKS chunks (100k).

interface Doc { id: string; text: string }
interface JudgedSet { name: string; docs: Doc[]; queries: { id: string; text: string }[]; qrels: Map<string, Map<string, number>> }

function readBeir(dir: string): JudgedSet {
  const jsonl = (file: string) => fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const docs = jsonl('corpus.jsonl').map((d: { _id: string; title?: string; text: string }) => ({ id: d._id, text: `${d.title ?? ''}\n${d.text}` }));
  const qrels = new Map<string, Map<string, number>>();
  for (const line of fs.readFileSync(path.join(dir, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.split('\t');
    if (!q || !d || Number(s) <= 0) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  const queries = jsonl('queries.jsonl').filter((q: { _id: string }) => qrels.has(q._id)).map((q: { _id: string; text: string }) => ({ id: q._id, text: q.text }));
  return { name: `BEIR ${path.basename(dir)}`, docs, queries, qrels };
}

/** A deterministic synthetic set: topic documents built from topic vocabularies, queries paraphrasing a topic. */
function syntheticSet(): JudgedSet {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const vocab = Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`);
  const topics = Array.from({ length: 300 }, () => Array.from({ length: 12 }, () => vocab[Math.floor(rand() * vocab.length)]!));
  const docs: Doc[] = [];
  const qrels = new Map<string, Map<string, number>>();
  const queries: { id: string; text: string }[] = [];
  topics.forEach((topic, t) => {
    const relevant = new Map<string, number>();
    for (let k = 0; k < 3; k++) {
      const words = Array.from({ length: 60 }, () => (rand() < 0.3 ? topic[Math.floor(rand() * topic.length)]! : vocab[Math.floor(rand() * vocab.length)]!));
      const id = `d${t}-${k}`;
      docs.push({ id, text: words.join(' ') });
      relevant.set(id, 1);
    }
    queries.push({ id: `q${t}`, text: Array.from({ length: 4 }, () => topic[Math.floor(rand() * topic.length)]!).join(' ') });
    qrels.set(`q${t}`, relevant);
  });
  return { name: 'synthetic (no public set given: KB_BENCH_BEIR_DIR unset)', docs, queries, qrels };
}

function metrics(ranked: string[], relevant: Map<string, number>) {
  const top = ranked.slice(0, 10);
  const hits = top.filter((d) => relevant.has(d)).length;
  const dcg = top.reduce((s, d, i) => s + ((2 ** (relevant.get(d) ?? 0) - 1) / Math.log2(i + 2)), 0);
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10).reduce((s, g, i) => s + ((2 ** g - 1) / Math.log2(i + 2)), 0);
  return { recall: hits / relevant.size, ndcg: ideal ? dcg / ideal : 0 };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * Ingests through the service's bulk import (`importTexts`: chunk, embed, one transaction per 200
 * documents with multi-row inserts), KB_BENCH_CONCURRENCY imports at a time (default 2, one per core),
 * until `docAt` has no more documents or `targetChunks` chunks are written.
 */
async function ingest(env: KbBenchEnvironment, orgId: string, datasetId: string, docAt: (i: number) => Doc | undefined, targetChunks = Infinity) {
  const sourceIds = new Map<string, string>();
  const concurrency = Math.max(1, Number(process.env.KB_BENCH_CONCURRENCY ?? 2));
  let chunks = 0;
  let next = 0;
  let done = false;
  const started = performance.now();
  const worker = async () => {
    while (!done && chunks < targetChunks) {
      const batch: Doc[] = [];
      for (let doc = docAt(next); doc && batch.length < 200; doc = docAt(++next)) batch.push(doc);
      if (batch.length === 0) break;
      if (batch.length < 200) done = true;
      const imported = await kbService.importTexts(env.deps, orgId, 'user:bench', datasetId, batch.map((d) => ({ name: d.id.slice(0, 500) || '-', text: d.text })));
      imported.source_ids.forEach((id, i) => sourceIds.set(id, batch[i]!.id));
      chunks += imported.chunk_count;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { sourceIds, chunks, seconds: (performance.now() - started) / 1000 };
}

export async function benchKnowledgeBase(env: KbBenchEnvironment) {
  const sql = env.deps.sql;
  const orgId = newId();
  await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, ${`bench-${orgId}`})`;
  const dataset = await kbService.createDataset(env.deps, orgId, 'user:bench', { name: 'bench', chunking_strategy: { method: 'structure', chunk_size: 2000 } });
  const set = process.env.KB_BENCH_BEIR_DIR ? readBeir(process.env.KB_BENCH_BEIR_DIR) : syntheticSet();
  const { sourceIds } = await ingest(env, orgId, dataset.id, (i) => set.docs[i]);

  // Quality: the service's own two rankings, then fused as the service fuses them.
  const sums = { full_text: { recall: 0, ndcg: 0 }, vector: { recall: 0, ndcg: 0 }, hybrid: { recall: 0, ndcg: 0 } };
  const embedder = createEmbedder(env.deps.config);
  for (const q of set.queries) {
    const [embedding] = await embedder.embed([q.text]);
    const ranked = await sql.begin((tx) => kb.rankChunks(tx, orgId, dataset.id, { text: q.text, embedding: embedding!, model: embedder.model, candidates: 100 }));
    const docOf = (r: kb.RankedChunk) => sourceIds.get(r.source_id)!;
    const order = (key: (r: kb.RankedChunk) => number | null) =>
      [...new Set(ranked.filter((r) => key(r) !== null).sort((a, b) => key(a)! - key(b)!).map(docOf))];
    const hybrid = [...new Set(ranked.map((r) => ({ r, s: fusedScore(r.lexical_rank, r.vector_rank) })).sort((a, b) => b.s - a.s).map((x) => docOf(x.r)))];
    const relevant = set.qrels.get(q.id)!;
    for (const [name, list] of [['full_text', order((r) => r.lexical_rank)], ['vector', order((r) => r.vector_rank)], ['hybrid', hybrid]] as const) {
      const m = metrics(list, relevant);
      sums[name].recall += m.recall;
      sums[name].ndcg += m.ndcg;
    }
  }
  const n = set.queries.length;
  const quality = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, { 'recall@10': +(v.recall / n).toFixed(4), 'nDCG@10': +(v.ndcg / n).toFixed(4) }]));

  // Speed at scale: synthetic documents until KB_BENCH_CHUNKS chunks, then timed queries through the service.
  const target = Number(process.env.KB_BENCH_CHUNKS ?? 100_000);
  const scaleDataset = await kbService.createDataset(env.deps, orgId, 'user:bench', { name: 'scale', chunking_strategy: { method: 'structure', chunk_size: 450 } });
  const filler = syntheticSet();
  const fillerDoc = (i: number): Doc => ({ id: `s${i}`, text: `${filler.docs[i % filler.docs.length]!.text}\n\n${filler.docs[(i * 7 + 3) % filler.docs.length]!.text} doc${i}` });
  const ingestion = await ingest(env, orgId, scaleDataset.id, fillerDoc, target);
  await sql`ANALYZE kb_chunks`;
  const latencies: number[] = [];
  for (let i = 0; i < 200; i++) {
    const q = filler.queries[i % filler.queries.length]!;
    const t0 = performance.now();
    await kbService.queryDataset(env.deps, orgId, scaleDataset.id, { query: q.text, results_count: 10 });
    latencies.push(performance.now() - t0);
  }
  return {
    set: set.name,
    documents: set.docs.length,
    queries: n,
    embedder: embedder.model,
    quality,
    scale: {
      chunks: ingestion.chunks,
      ingestion_chunks_per_second: Math.round(ingestion.chunks / ingestion.seconds),
      query_p50_ms: +percentile(latencies, 50).toFixed(1),
      query_p95_ms: +percentile(latencies, 95).toFixed(1),
    },
  };
}
