import type { Sql } from '../db/client';
import type { RankedChunk } from '../db/knowledge-base';

// Fusions tried on the judged set, each over the same candidates of rankChunks (both rankings, 100
// deep), and the full-text query the service ran before (OR of every word, ts_rank_cd, no bound), for
// the comparison docs/performance.md reports. The service keeps one (domain/knowledge-base.ts).

type Fuse = (ranked: RankedChunk[]) => RankedChunk[];

const sorted = (ranked: RankedChunk[], score: (r: RankedChunk) => number) =>
  ranked
    .map((r) => ({ r, s: score(r) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s)
    .map((x) => x.r);

/** Reciprocal rank fusion with `depth` candidates per ranking and a weight per ranking. */
export const rrf =
  (k: number, depth: number, lexicalWeight = 1, vectorWeight = 1): Fuse =>
  (ranked) =>
    sorted(
      ranked,
      (r) =>
        (r.lexical_rank !== null && r.lexical_rank <= depth ? lexicalWeight / (k + r.lexical_rank) : 0) +
        (r.vector_rank !== null && r.vector_rank <= depth ? vectorWeight / (k + r.vector_rank) : 0),
    );

/** alpha · vector + (1 − alpha) · full text, the vector similarity min-max normalized over the candidates (or raw). */
export const convex =
  (alpha: number, depth: number, normalize: boolean, power = 1): Fuse =>
  (ranked) => {
    const sims = ranked.filter((r) => r.vector_rank !== null && r.vector_rank <= depth).map((r) => r.vector_similarity!);
    const lo = Math.min(...sims);
    const hi = Math.max(...sims);
    const vec = (r: RankedChunk) =>
      r.vector_rank === null || r.vector_rank > depth
        ? 0
        : normalize
          ? hi > lo
            ? (r.vector_similarity! - lo) / (hi - lo)
            : 1
          : r.vector_similarity!;
    const lex = (r: RankedChunk) => (r.lexical_rank === null || r.lexical_rank > depth ? 0 : r.lexical_score! ** power);
    return sorted(ranked, (r) => alpha * vec(r) + (1 - alpha) * lex(r));
  };

export const FUSIONS: Record<string, Fuse> = {
  'RRF k=60, 60 per ranking': rrf(60, 60),
  'RRF k=60, 20 per ranking': rrf(60, 20),
  'RRF k=60, 10 per ranking': rrf(60, 10),
  'RRF k=60, 60 per ranking, vector ×2': rrf(60, 60, 1, 2),
  'RRF k=10, 20 per ranking': rrf(10, 20),
  'convex 0.5, min-max, 20 per ranking': convex(0.5, 20, true),
  'convex 0.6, min-max, 20 per ranking': convex(0.6, 20, true),
  'convex 0.7, min-max, 20 per ranking': convex(0.7, 20, true),
  'convex 0.5, min-max, 60 per ranking': convex(0.5, 60, true),
  'convex 0.5, raw, 20 per ranking': convex(0.5, 20, false),
  'convex 0.5, min-max, 20 per ranking, full text squared': convex(0.5, 20, true, 2),
  'convex 0.6, min-max, 20 per ranking, full text squared': convex(0.6, 20, true, 2),
};

/** The full-text ranking the service ran before: every chunk holding any query word, by ts_rank_cd; source ids in order. */
export async function legacyFullText(sql: Sql, orgId: string, datasetId: string, text: string, candidates: number): Promise<string[]> {
  const rows = await sql<{ source_id: string }[]>`
    WITH q AS (SELECT nullif(replace(plainto_tsquery('english', ${text})::text, ' & ', ' | '), '')::tsquery AS q)
    SELECT c.source_id FROM kb_chunks c JOIN kb_dataset_sources ds ON ds.source_id = c.source_id, q
    WHERE ds.dataset_id = ${datasetId} AND c.org_id = ${orgId} AND q.q IS NOT NULL AND c.tsv @@ q.q
    ORDER BY ts_rank_cd(c.tsv, q.q) DESC, c.id LIMIT ${candidates}`;
  return rows.map((r) => r.source_id);
}
