import * as kb from '../../db/knowledge-base';
import { upstream } from '../../domain/errors';
import { exactTerms } from '../../domain/knowledge-base-terms';
import {
  CANDIDATES_PER_RANKING,
  EXACT_WEIGHT,
  FULL_TEXT_BOUNDS,
  LEXICAL_EMBEDDER_VECTOR_WEIGHT,
  VECTOR_WEIGHT,
  fusedScores,
} from '../../domain/knowledge-base';
import { EmbedderError, embedderFor } from '../../platform/adapters/embedders/embedder';
import type { ServiceDeps } from '../deps';
import { datasetOf } from './views';

/**
 * Hybrid retrieval over the dataset's ready sources: the full-text ranking (bounded, IDF-weighted) and
 * vector similarity in the dataset's embedding space, fused by score (domain `fusedScores`), with the
 * query's exact terms (identifiers, names, quoted phrases) matched whatever their case, accents and
 * separators and put first. Scores are in [0, 1] (1: the nearest vector match holding every query word
 * and every exact term); ties by source, then position in the source. The same function answers agents
 * that use the dataset.
 */
export async function queryDataset(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  datasetId: string,
  input: { query: string; results_count: number },
) {
  const dataset = await datasetOf(deps.sql, orgId, datasetId);
  // The dataset's own model embeds the query; without it at hand the query ranks by full text only.
  const embedder = embedderFor(deps.config, dataset.embedding_model);
  let embedding: number[] | null = null;
  if (embedder) {
    try {
      [embedding] = (await embedder.embed([input.query], 'query')) as [number[]];
    } catch (error) {
      if (error instanceof EmbedderError) throw upstream('Embeddings service unavailable');
      throw error;
    }
  }
  const candidates = Math.max(CANDIDATES_PER_RANKING, input.results_count);
  const { terms, words } = exactTerms(input.query);
  const ranked = await deps.sql.begin((tx) =>
    kb.rankChunks(tx, orgId, datasetId, {
      text: input.query,
      embedding,
      model: dataset.embedding_model,
      candidates,
      ...FULL_TEXT_BOUNDS,
      exactTerms: terms,
      exactWords: words,
    }),
  );
  const vectorWeight = embedding === null ? 0 : embedder?.lexical ? LEXICAL_EMBEDDER_VECTOR_WEIGHT : VECTOR_WEIGHT;
  const scores = fusedScores(ranked, vectorWeight, EXACT_WEIGHT, terms.length > 0);
  const results = ranked
    .map((r, i) => ({ ...r, score: scores[i]! }))
    .sort(
      (a, b) =>
        b.score - a.score || a.source_id.localeCompare(b.source_id) || a.ordinal - b.ordinal || a.chunk_id.localeCompare(b.chunk_id),
    )
    .slice(0, input.results_count)
    .map((r) => ({ content: r.content, score: Number(r.score.toFixed(6)), source_id: r.source_id, dataset_id: datasetId }));
  return { results };
}
