import type { ChunkingMethod, SourceStatus, SourceType } from '../domain/knowledge-base';
import { likePattern } from '../domain/knowledge-base';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { columnsOf, setColumns } from './kit/partial-update';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id.

export interface DatasetRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  chunking_method: ChunkingMethod;
  chunk_size: number;
  embedding_model: string;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface SourceRow {
  id: string;
  org_id: string;
  type: SourceType;
  name: string;
  description: string;
  url: string | null;
  domain: string | null;
  file_id: string | null;
  file_upload_status: SourceStatus;
  failure_reason: string | null;
  file_processor: string | null;
  /** bigint: postgres.js hands it over as a string. */
  file_size: string | null;
  chunking_method: ChunkingMethod | null;
  chunk_size: number | null;
  generation: number;
  chunk_count: number;
  /** Progress of the generation being written: chunks extracted, and how many of them have their vector. */
  chunks_total: number;
  chunks_embedded: number;
  embedding_model: string | null;
  ingested_at: Date | null;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

// ---- datasets ----

export async function insertDataset(
  db: Db,
  orgId: string,
  d: Pick<DatasetRow, 'id' | 'name' | 'description' | 'chunking_method' | 'chunk_size' | 'embedding_model' | 'created_by'>,
): Promise<DatasetRow> {
  const [row] = await db<DatasetRow[]>`
    INSERT INTO kb_datasets (id, org_id, name, description, chunking_method, chunk_size, embedding_model, created_by, modified_by)
    VALUES (${d.id}, ${orgId}, ${d.name}, ${d.description}, ${d.chunking_method}, ${d.chunk_size}, ${d.embedding_model}, ${d.created_by}, ${d.created_by})
    RETURNING *`;
  return row!;
}

export async function getDataset(db: Db, orgId: string, id: string): Promise<DatasetRow | undefined> {
  const [row]: [DatasetRow?] = await db`SELECT * FROM kb_datasets WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

export async function listDatasets(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: DatasetRow[]; count: number }> {
  const rows = await db<DatasetRow[]>`
    SELECT * FROM kb_datasets WHERE org_id = ${orgId} ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
  const [{ count }] = (await db`SELECT count(*)::int AS count FROM kb_datasets WHERE org_id = ${orgId}`) as unknown as [{ count: number }];
  return { rows, count };
}

type DatasetPatch = Partial<Pick<DatasetRow, 'name' | 'description' | 'chunking_method' | 'chunk_size'>> & { modified_by: string };
const DATASET_COLUMNS = columnsOf<DatasetPatch>()(['name', 'description', 'chunking_method', 'chunk_size', 'modified_by']);

export async function updateDataset(db: Db, orgId: string, id: string, values: DatasetPatch): Promise<DatasetRow | undefined> {
  const [row]: [DatasetRow?] = await db`
    UPDATE kb_datasets SET ${setColumns(db, values, DATASET_COLUMNS)}, updated_at = now() WHERE id = ${id} AND org_id = ${orgId} RETURNING *`;
  return row;
}

export async function deleteDataset(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM kb_datasets WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}

// ---- sources ----

export async function insertSource(
  db: Db,
  orgId: string,
  s: Pick<
    SourceRow,
    'id' | 'type' | 'name' | 'description' | 'url' | 'domain' | 'file_id' | 'file_size' | 'chunking_method' | 'chunk_size' | 'created_by'
  >,
): Promise<SourceRow> {
  const [row] = await db<SourceRow[]>`
    INSERT INTO kb_sources (id, org_id, type, name, description, url, domain, file_id, file_size, chunking_method, chunk_size, created_by, modified_by)
    VALUES (${s.id}, ${orgId}, ${s.type}, ${s.name}, ${s.description}, ${s.url}, ${s.domain}, ${s.file_id}, ${s.file_size}, ${s.chunking_method}, ${s.chunk_size}, ${s.created_by}, ${s.created_by})
    RETURNING *`;
  return row!;
}

export async function getSource(db: Db, orgId: string, id: string, lock = false): Promise<SourceRow | undefined> {
  const [row]: [SourceRow?] = lock
    ? await db`SELECT * FROM kb_sources WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`
    : await db`SELECT * FROM kb_sources WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/** Sources by name pattern (`%` the only wildcard, case-insensitive) and type, by name then id. */
export async function searchSources(
  db: Db,
  orgId: string,
  filter: { pattern?: string; type?: SourceType },
  page: { limit: number; offset: number },
): Promise<{ rows: SourceRow[]; count: number }> {
  const where = db`org_id = ${orgId}
    ${filter.type ? db`AND type = ${filter.type}` : db``}
    ${filter.pattern !== undefined ? db`AND name ILIKE ${likePattern(filter.pattern)}` : db``}`;
  const rows = await db<
    SourceRow[]
  >`SELECT * FROM kb_sources WHERE ${where} ORDER BY lower(name), id LIMIT ${page.limit} OFFSET ${page.offset}`;
  const [{ count }] = (await db`SELECT count(*)::int AS count FROM kb_sources WHERE ${where}`) as unknown as [{ count: number }];
  return { rows, count };
}

export async function listDatasetSources(db: Db, orgId: string, datasetId: string): Promise<SourceRow[]> {
  return db<SourceRow[]>`
    SELECT s.* FROM kb_sources s JOIN kb_dataset_sources ds ON ds.source_id = s.id
    WHERE ds.dataset_id = ${datasetId} AND ds.org_id = ${orgId} AND s.org_id = ${orgId}
    ORDER BY ds.created_at, s.id`;
}

export async function deleteSource(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM kb_sources WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}

export async function setSourceStatus(
  db: Db,
  orgId: string,
  id: string,
  values: { status: SourceStatus; failure_reason?: string | null; modified_by?: string },
): Promise<SourceRow | undefined> {
  const [row]: [SourceRow?] = await db`
    UPDATE kb_sources SET file_upload_status = ${values.status}, failure_reason = ${values.failure_reason ?? null},
      modified_by = coalesce(${values.modified_by ?? null}, modified_by), updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} RETURNING *`;
  return row;
}

export async function recordExtraction(
  db: Db,
  orgId: string,
  id: string,
  values: { file_processor: string; file_size: number; chunks_total: number; chunks_embedded: number },
): Promise<void> {
  await db`
    UPDATE kb_sources SET file_processor = ${values.file_processor}, file_size = ${values.file_size},
      chunks_total = ${values.chunks_total}, chunks_embedded = ${values.chunks_embedded}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId}`;
}

/** Counts a stored batch of vectors into the source's progress. */
export async function addEmbedded(db: Db, orgId: string, id: string, count: number): Promise<void> {
  await db`UPDATE kb_sources SET chunks_embedded = least(chunks_total, chunks_embedded + ${count}), updated_at = now() WHERE id = ${id} AND org_id = ${orgId}`;
}

// ---- dataset membership ----

/** Attaches sources; answers the ids newly attached (the others were already). */
export async function attachSources(db: Db, orgId: string, datasetId: string, sourceIds: string[]): Promise<string[]> {
  if (sourceIds.length === 0) return [];
  const rows = await db<{ source_id: string }[]>`
    INSERT INTO kb_dataset_sources (org_id, dataset_id, source_id)
    SELECT ${orgId}, ${datasetId}, unnest(${sourceIds}::uuid[])
    ON CONFLICT DO NOTHING RETURNING source_id`;
  return rows.map((r) => r.source_id);
}

export async function detachSource(db: Db, orgId: string, datasetId: string, sourceId: string): Promise<boolean> {
  const rows =
    await db`DELETE FROM kb_dataset_sources WHERE org_id = ${orgId} AND dataset_id = ${datasetId} AND source_id = ${sourceId} RETURNING source_id`;
  return rows.length > 0;
}

/** Every source of the organization whose name matches the pattern and type, by name then id. */
export async function matchingSourceIds(db: Db, orgId: string, pattern: string, type: SourceType): Promise<{ id: string; name: string }[]> {
  return db<{ id: string; name: string }[]>`
    SELECT id, name FROM kb_sources WHERE org_id = ${orgId} AND type = ${type} AND name ILIKE ${likePattern(pattern)} ORDER BY lower(name), id`;
}

// ---- chunks ----

/** The generation after the current one, where a new ingestion writes (and first clears leftovers of a crashed run). */
export async function prepareGeneration(db: Db, orgId: string, sourceId: string): Promise<number | undefined> {
  const source = await getSource(db, orgId, sourceId);
  if (!source) return undefined;
  const next = source.generation + 1;
  await db`DELETE FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ${sourceId} AND generation = ${next}`;
  await db`UPDATE kb_sources SET chunks_total = 0, chunks_embedded = 0 WHERE id = ${sourceId} AND org_id = ${orgId}`;
  return next;
}

/** Chunks of one source's generation; with `embedded`, their embeddings are written in the same rows. */
export async function insertChunks(
  db: Db,
  orgId: string,
  sourceId: string,
  generation: number,
  contents: string[],
  firstOrdinal = 0,
  embedded?: { model: string; vectors: number[][] },
): Promise<void> {
  await insertChunkRows(
    db,
    orgId,
    contents.map((content, i) => ({
      source_id: sourceId,
      generation,
      ordinal: firstOrdinal + i,
      content,
      embedding: embedded?.vectors[i] ?? null,
    })),
    embedded?.model ?? null,
  );
}

export interface NewChunk {
  source_id: string;
  generation: number;
  ordinal: number;
  content: string;
  embedding: number[] | null;
}

/** Rows per INSERT: each row also enters the GIN and (with an embedding) the HNSW index, so a slice stays well inside the statement timeout. */
const CHUNK_INSERT_SLICE = 200;

/**
 * Chunks of any sources, one multi-row INSERT per slice (arrays unnested server side), embeddings
 * included: a chunk written with its vector is written once, where writing it bare and then updating it
 * writes the row, its full-text and key index entries twice.
 */
export async function insertChunkRows(db: Db, orgId: string, rows: NewChunk[], model: string | null): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK_INSERT_SLICE) {
    const slice = rows.slice(i, i + CHUNK_INSERT_SLICE);
    await db`
      INSERT INTO kb_chunks (id, org_id, source_id, generation, ordinal, content, embedding_model, dimension, embedding)
      SELECT u.id, ${orgId}, u.source_id, u.generation, u.ordinal, u.content,
        CASE WHEN u.e IS NULL THEN NULL ELSE ${model}::text END, u.dim, u.e::vector
      FROM unnest(
        ${slice.map(() => newId())}::uuid[], ${slice.map((r) => r.source_id)}::uuid[], ${slice.map((r) => r.generation)}::int[],
        ${slice.map((r) => r.ordinal)}::int[], ${slice.map((r) => r.content)}::text[],
        ${slice.map((r) => (r.embedding ? vectorLiteral(r.embedding) : null))}::text[], ${slice.map((r) => r.embedding?.length ?? null)}::int[]
      ) AS u(id, source_id, generation, ordinal, content, e, dim)`;
  }
}

export async function chunksWithoutEmbedding(
  db: Db,
  orgId: string,
  sourceId: string,
  generation: number,
  limit: number,
): Promise<{ id: string; content: string }[]> {
  return db<{ id: string; content: string }[]>`
    SELECT id, content FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ${sourceId} AND generation = ${generation} AND embedding IS NULL
    ORDER BY ordinal LIMIT ${limit}`;
}

export const vectorLiteral = (v: number[]) => `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

export async function storeEmbeddings(db: Db, orgId: string, model: string, items: { id: string; embedding: number[] }[]): Promise<void> {
  if (items.length === 0) return;
  const ids = items.map((i) => i.id);
  const vectors = items.map((i) => vectorLiteral(i.embedding));
  await db`
    UPDATE kb_chunks c SET embedding = v.e::vector, embedding_model = ${model}, dimension = vector_dims(v.e::vector)
    FROM (SELECT unnest(${ids}::uuid[]) AS id, unnest(${vectors}::text[]) AS e) v
    WHERE c.id = v.id AND c.org_id = ${orgId}`;
}

/** Makes the generation the visible one and drops every other: one statement pair in the caller's transaction. */
export async function publishGeneration(
  db: Db,
  orgId: string,
  sourceId: string,
  generation: number,
  model: string,
): Promise<SourceRow | undefined> {
  const [row]: [SourceRow?] = await db`
    UPDATE kb_sources SET generation = ${generation}, file_upload_status = 'ready', failure_reason = NULL, embedding_model = ${model},
      chunk_count = (SELECT count(*) FROM kb_chunks WHERE source_id = ${sourceId} AND generation = ${generation}),
      chunks_embedded = chunks_total, ingested_at = now(), updated_at = now()
    WHERE id = ${sourceId} AND org_id = ${orgId} RETURNING *`;
  if (row) await db`DELETE FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ${sourceId} AND generation <> ${generation}`;
  return row;
}

/** Several new sources at once (bulk imports), in one multi-row INSERT. */
export async function insertSources(
  db: Db,
  orgId: string,
  sources: Pick<
    SourceRow,
    'id' | 'type' | 'name' | 'description' | 'url' | 'domain' | 'file_id' | 'file_size' | 'chunking_method' | 'chunk_size' | 'created_by'
  >[],
): Promise<void> {
  if (sources.length === 0) return;
  await db`INSERT INTO kb_sources ${db(sources.map((s) => ({ ...s, org_id: orgId, modified_by: s.created_by })))}`;
}

/** `publishGeneration` for several sources in two statements: their chunk counts in one pass, the other generations dropped. */
export async function publishGenerations(db: Db, orgId: string, sourceIds: string[], generation: number, model: string): Promise<void> {
  if (sourceIds.length === 0) return;
  await db`
    UPDATE kb_sources s SET generation = ${generation}, file_upload_status = 'ready', failure_reason = NULL, embedding_model = ${model},
      chunk_count = coalesce(c.n, 0), chunks_total = coalesce(c.n, 0), chunks_embedded = coalesce(c.n, 0), ingested_at = now(), updated_at = now()
    FROM (SELECT id FROM unnest(${sourceIds}::uuid[]) AS id) ids
    LEFT JOIN (SELECT source_id, count(*)::int AS n FROM kb_chunks
               WHERE org_id = ${orgId} AND source_id = ANY(${sourceIds}::uuid[]) AND generation = ${generation} GROUP BY source_id) c ON c.source_id = ids.id
    WHERE s.id = ids.id AND s.org_id = ${orgId}`;
  await db`DELETE FROM kb_chunks WHERE org_id = ${orgId} AND source_id = ANY(${sourceIds}::uuid[]) AND generation <> ${generation}`;
}

// ---- retrieval ----

export interface RankedChunk {
  chunk_id: string;
  source_id: string;
  ordinal: number;
  content: string;
  /** 1-based place in the full-text ranking, and its score: the IDF-weighted share of the query's words the chunk holds, in (0, 1]. */
  lexical_rank: number | null;
  lexical_score: number | null;
  /** 1-based place in the vector ranking, and its cosine similarity to the query. */
  vector_rank: number | null;
  vector_similarity: number | null;
  /**
   * The rarity-weighted share of the query's exact terms found in the dataset that the chunk holds, in
   * [0, 1]; null when the query has none found (or names none).
   */
  exact_score: number | null;
}

export interface RankQuery {
  text: string;
  embedding: number[] | null;
  model: string;
  /** Candidates each ranking contributes. */
  candidates: number;
  /** Chunks fetched per query word before ranking: bounds the full-text work whatever the words' frequency. */
  perTerm: number;
  /** Query words used at most (the longest query still ranks a bounded number of chunks). */
  maxTerms: number;
  /** A word the table statistics put in more chunks than this is not fetched (reading its index entries costs more than it tells), only weighed on the others' candidates. */
  commonRows: number;
  /** Exact terms (identifiers, names, quoted phrases: domain `exactTerms`), matched folded as phrases. */
  exactTerms?: string[];
  /** Other query words, matched folded only when full text finds none of their lexemes (an accent left out). */
  exactWords?: string[];
}

/**
 * Candidates of both rankings over the dataset's ready sources (their visible generation only).
 *
 * Full text: each query word (English stemming, stop words dropped) fetches at most `perTerm` of its
 * chunks from the GIN index, so the ranked set is bounded by maxTerms × perTerm however common the words
 * are, and a rare word (an error code, a SKU) always brings all its chunks. A word that Postgres's own
 * statistics of the column (pg_stats, the planner's) put in more than `commonRows` chunks is not fetched,
 * since building its bitmap costs most of the query, unless every word is that common (then the least
 * common one is). A word's weight is ln(1 + perTerm / hits): the fewer chunks hold it, the more it counts
 * (a word that fills its quota, or is not fetched, is common: ln 2). A chunk scores the weighted share of
 * the query's words it holds, so chunks holding every word rank first (AND before OR), then by ts_rank.
 * Vector: cosine distance in the dataset's embedding space through the HNSW index of that dimension.
 * Exact terms: each is folded (kb_fold: case, accents, separators) and fetches at most `perTerm`
 * chunks holding its folded words from their own index (exact_tsv), leaving out words the statistics
 * put in more than `commonRows` chunks; only those chunks are checked for the words in order (on the
 * stored vector), so a term costs at most `perTerm` cheap checks. A term whose every word is that common
 * is not fetched: it is common itself, and only checked on the other rankings' candidates. A term's
 * weight is ln(1 + perTerm / holders) / ln(1 + perTerm), 1 for a term one chunk holds (a common or
 * capped term counts as perTerm holders); a chunk's exact_score is the sum of the weights of the terms
 * it holds over the number of terms found. The `candidates` best by exact_score join the candidates of
 * the other two rankings.
 * Membership (dataset, ready source, visible generation) is checked per candidate by primary keys, so
 * the cost does not grow with the dataset's number of sources.
 */
export async function rankChunks(db: Db, orgId: string, datasetId: string, query: RankQuery): Promise<RankedChunk[]> {
  // Run inside a transaction: the settings are local to it. The statement is prepared once per
  // connection and its plan kept (a generic plan): planning it again costs about a fifth of running it.
  await db`SELECT set_config('hnsw.ef_search', ${String(Math.max(40, query.candidates * 2))}, true),
    set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('plan_cache_mode', 'force_generic_plan', true)`;
  const dim = query.embedding?.length ?? 0;
  // Literals, not parameters, in the kept (generic) plan: the partial HNSW index (WHERE dimension = N) is
  // only chosen when the planner sees N, and an index scan for a LIMIT only when it sees the limit.
  const integer = (n: number) => db.unsafe(String(Number.isSafeInteger(n) && n > 0 ? n : 1));
  const dimension = integer(dim);
  const candidates = integer(query.candidates);
  const perTerm = integer(query.perTerm);
  const member = (chunk: string) => db`EXISTS (
    SELECT 1 FROM kb_sources s JOIN kb_dataset_sources ds ON ds.source_id = s.id
    WHERE s.id = ${db.unsafe(chunk)}.source_id AND s.generation = ${db.unsafe(chunk)}.generation AND s.org_id = ${orgId}
      AND s.file_upload_status = 'ready' AND ds.dataset_id = ${datasetId} AND ds.org_id = ${orgId})`;
  const semantic = query.embedding
    ? db`
      SELECT id, row_number() OVER (ORDER BY d, id) AS r, 1 - d AS similarity FROM (
        SELECT c.id, c.embedding::vector(${dimension}) <=> ${vectorLiteral(query.embedding)}::vector(${dimension}) AS d
        FROM kb_chunks c
        WHERE c.org_id = ${orgId} AND c.embedding_model = ${query.model} AND c.dimension = ${dimension} AND ${member('c')}
        ORDER BY d LIMIT ${candidates}) v`
    : db`SELECT NULL::uuid AS id, NULL::bigint AS r, NULL::float8 AS similarity WHERE false`;
  return db<RankedChunk[]>`
    WITH terms AS MATERIALIZED (
      SELECT t.lexeme, (chr(39) || replace(replace(t.lexeme, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39)) || chr(39))::tsquery AS q,
        coalesce(st.freq, 0) * greatest(rel.reltuples, 0) AS estimate
      FROM (SELECT lexeme FROM unnest(to_tsvector('english', ${query.text})) LIMIT ${query.maxTerms}) t
      LEFT JOIN (
        SELECT e.lexeme, e.freq FROM pg_stats s CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, freq)
        WHERE s.schemaname = current_schema() AND s.tablename = 'kb_chunks' AND s.attname = 'tsv') st USING (lexeme)
      CROSS JOIN (SELECT reltuples FROM pg_class WHERE oid = 'kb_chunks'::regclass) rel),
    fetched AS (
      SELECT lexeme, q FROM terms WHERE estimate <= ${query.commonRows}
      UNION ALL
      (SELECT lexeme, q FROM terms WHERE NOT EXISTS (SELECT 1 FROM terms WHERE estimate <= ${query.commonRows}) ORDER BY estimate LIMIT 1)),
    hits AS MATERIALIZED (
      SELECT f.lexeme, h.id, h.tsv FROM fetched f CROSS JOIN LATERAL (
        SELECT c.id, c.tsv FROM kb_chunks c WHERE c.org_id = ${orgId} AND c.tsv @@ f.q AND ${member('c')} LIMIT ${perTerm}) h),
    weights AS MATERIALIZED (
      SELECT t.q, ln(1 + ${query.perTerm}::float8 / coalesce(n.hits, ${query.perTerm})) AS idf
      FROM terms t LEFT JOIN (SELECT lexeme, count(*) AS hits FROM hits GROUP BY lexeme) n USING (lexeme)
      WHERE n.hits IS NOT NULL OR t.estimate > ${query.commonRows}),
    anyword AS MATERIALIZED (SELECT string_agg(q::text, ' | ')::tsquery AS q, sum(idf) AS total FROM weights),
    lexical AS (
      SELECT id, row_number() OVER (ORDER BY score DESC, density DESC, id) AS r, score FROM (
        SELECT h.id, (SELECT sum(w.idf) FROM weights w WHERE h.tsv @@ w.q) / a.total AS score, ts_rank(h.tsv, a.q) AS density
        FROM (SELECT DISTINCT ON (id) id, tsv FROM hits ORDER BY id) h CROSS JOIN anyword a
        ORDER BY score DESC, density DESC, h.id LIMIT ${candidates}) l),
    semantic AS (${semantic}),
    exact_input AS MATERIALIZED (
      SELECT kb_fold(u.term) AS folded FROM unnest(${query.exactTerms ?? []}::text[]) AS u(term)
      UNION
      -- a word full text finds nowhere, though it fetched its lexemes: its folded spelling may be there
      SELECT kb_fold(u.word) FROM unnest(${query.exactWords ?? []}::text[]) AS u(word)
      WHERE EXISTS (SELECT 1 FROM unnest(to_tsvector('english', u.word)) x JOIN fetched f USING (lexeme))
        AND NOT EXISTS (SELECT 1 FROM unnest(to_tsvector('english', u.word)) x JOIN hits h USING (lexeme))),
    exact_common AS MATERIALIZED (
      SELECT st.word FROM pg_stats s
      CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS st(word, freq)
      CROSS JOIN (SELECT reltuples FROM pg_class WHERE oid = 'kb_chunks'::regclass) rel
      WHERE s.schemaname = current_schema() AND s.tablename = 'kb_chunks' AND s.attname = 'exact_tsv'
        AND st.freq * greatest(rel.reltuples, 0) > ${query.commonRows}),
    exact_terms AS MATERIALIZED (
      SELECT row_number() OVER (ORDER BY e.folded) AS i, phraseto_tsquery('simple', e.folded) AS phrase, r.fetch
      FROM exact_input e CROSS JOIN LATERAL (
        -- the term's words the statistics do not call common; none: the term is common itself
        SELECT nullif(string_agg(quote_literal(w.word), ' & '), '')::tsquery AS fetch
        FROM unnest(tsvector_to_array(to_tsvector('simple', e.folded))) AS w(word)
        WHERE NOT EXISTS (SELECT 1 FROM exact_common c WHERE c.word = w.word)) r
      WHERE e.folded <> ''),
    exact_fetched AS MATERIALIZED (
      SELECT e.i, h.id, h.exact_tsv FROM exact_terms e CROSS JOIN LATERAL (
        SELECT c.id, c.exact_tsv FROM kb_chunks c WHERE c.org_id = ${orgId} AND c.exact_tsv @@ e.fetch AND ${member('c')} LIMIT ${perTerm}) h
      WHERE e.fetch IS NOT NULL),
    exact_hits AS MATERIALIZED (
      SELECT f.i, f.id FROM exact_fetched f JOIN exact_terms e USING (i) WHERE f.exact_tsv @@ e.phrase),
    exact_weights AS MATERIALIZED (
      -- a fetched term by its holders; a common term, or one whose fetch was capped, is checked on the candidates
      SELECT e.i, e.phrase, e.fetch IS NULL AS common,
        ln(1 + ${query.perTerm}::float8 / coalesce(n.hits, ${query.perTerm})) / ln(1 + ${query.perTerm}::float8) AS w,
        e.fetch IS NULL OR (SELECT count(*) FROM exact_fetched f WHERE f.i = e.i) >= ${query.perTerm} AS unchecked
      FROM exact_terms e LEFT JOIN (SELECT i, count(*) AS hits FROM exact_hits GROUP BY i) n USING (i)
      WHERE n.hits IS NOT NULL OR e.fetch IS NULL),
    exact AS (
      SELECT h.id FROM exact_hits h JOIN exact_weights w USING (i) GROUP BY h.id ORDER BY sum(w.w) DESC, h.id LIMIT ${candidates}),
    fused AS (
      SELECT i.id, l.r AS lexical_rank, l.score AS lexical_score, s.r AS vector_rank, s.similarity AS vector_similarity
      FROM (SELECT id FROM lexical UNION SELECT id FROM semantic UNION SELECT id FROM exact) i
      LEFT JOIN lexical l ON l.id = i.id LEFT JOIN semantic s ON s.id = i.id),
    candidate AS MATERIALIZED (SELECT f.*, c.source_id, c.ordinal, c.content, c.exact_tsv FROM fused f JOIN kb_chunks c ON c.id = f.id),
    held AS MATERIALIZED (
      SELECT c.id, w.i, w.w FROM candidate c JOIN exact_weights w
        ON EXISTS (SELECT 1 FROM exact_hits h WHERE h.i = w.i AND h.id = c.id) OR (w.unchecked AND c.exact_tsv @@ w.phrase)),
    -- terms found: every fetched term with holders, and a common term when a candidate holds it
    exact_found AS MATERIALIZED (
      SELECT count(*)::float8 AS n FROM exact_weights w WHERE NOT w.common OR EXISTS (SELECT 1 FROM held h WHERE h.i = w.i))
    SELECT c.id AS chunk_id, c.source_id, c.ordinal, c.content, c.lexical_rank::int, c.lexical_score::float8, c.vector_rank::int,
      c.vector_similarity::float8,
      CASE WHEN x.n > 0 THEN coalesce((SELECT sum(h.w) FROM held h WHERE h.id = c.id), 0) / x.n END::float8 AS exact_score
    FROM candidate c CROSS JOIN exact_found x`;
}

/** Serializes a source's lifecycle steps: the creating transaction, the workflow's first step, publish. */
export async function lockSourceId(db: Db, orgId: string, sourceId: string): Promise<void> {
  await db`SELECT pg_advisory_xact_lock(hashtext('kb-source'), hashtext(${`${orgId}:${sourceId}`}))`;
}

export async function datasetsOfSource(db: Db, orgId: string, sourceId: string): Promise<DatasetRow[]> {
  return db<DatasetRow[]>`
    SELECT d.* FROM kb_datasets d JOIN kb_dataset_sources ds ON ds.dataset_id = d.id
    WHERE ds.source_id = ${sourceId} AND ds.org_id = ${orgId} AND d.org_id = ${orgId} ORDER BY ds.created_at, d.id`;
}
