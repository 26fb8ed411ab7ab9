// Knowledge bases: statuses, chunking rules and the fusion of the two rankings. Pure: no I/O.

export const SOURCE_TYPES = ['FILE', 'URL'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** pending (created, waiting for its workflow) → processing → ready | failed; re-ingest goes back to processing. */
export const SOURCE_STATUSES = ['pending', 'processing', 'ready', 'failed'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

export const CHUNKING_METHODS = ['fixed_size', 'structure'] as const;
export type ChunkingMethod = (typeof CHUNKING_METHODS)[number];

export const CHUNK_SIZE_MIN = 100;
export const CHUNK_SIZE_MAX = 8000;
export const DEFAULT_CHUNKING = { method: 'structure' as ChunkingMethod, chunk_size: 1000 };
/** Fixed-size chunks overlap their neighbour by this share of chunk_size. */
export const OVERLAP_RATIO = 0.15;

export const RESULTS_COUNT_DEFAULT = 5;
export const RESULTS_COUNT_MAX = 50;
/** Each ranking (full text, vector) contributes this many candidates to the fusion (more when more results are asked). */
export const CANDIDATES_PER_RANKING = 20;
/** The vector side's share of a fused score; full text has the rest (chosen on bench/retrieval, see docs/performance.md). */
export const VECTOR_WEIGHT = 0.55;
/** The same share for an embedder that is itself lexical (the built-in hashing one): its vectors repeat the words, without their rarity. */
export const LEXICAL_EMBEDDER_VECTOR_WEIGHT = 0.3;
/**
 * The exact terms' share of a fused score when the query names any the dataset holds (identifiers,
 * names, quoted phrases: domain/knowledge-base-terms.ts): at one half, a passage holding a rare term the
 * query names ranks above every passage that does not (chosen on the tuning half of bench/retrieval).
 */
export const EXACT_WEIGHT = 0.5;
/** Full text fetches at most this many chunks per query word, for at most this many words, before ranking. */
export const FULL_TEXT_PER_TERM = 200;
export const FULL_TEXT_MAX_TERMS = 16;
/** A query word in more chunks than this (by the table's statistics) only weighs candidates the others bring. */
export const FULL_TEXT_COMMON_ROWS = 5000;
export const FULL_TEXT_BOUNDS = { perTerm: FULL_TEXT_PER_TERM, maxTerms: FULL_TEXT_MAX_TERMS, commonRows: FULL_TEXT_COMMON_ROWS };

export interface ChunkingStrategy {
  method: ChunkingMethod;
  chunk_size: number;
}

/** The source's own strategy where set, the dataset's (or the service default) for what is null. */
export function effectiveChunking(
  source: { method: ChunkingMethod | null; chunk_size: number | null },
  fallback: ChunkingStrategy = DEFAULT_CHUNKING,
): ChunkingStrategy {
  return { method: source.method ?? fallback.method, chunk_size: source.chunk_size ?? fallback.chunk_size };
}

const normalizeSpace = (text: string) =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/**
 * Windows of at most `size` characters, each starting `size - overlap` after the previous one, cut
 * at the last whitespace inside the window when there is one (words are never split).
 */
export function fixedSizeChunks(text: string, size: number, overlap = Math.floor(size * OVERLAP_RATIO)): string[] {
  const clean = normalizeSpace(text);
  if (!clean) return [];
  const chunks: string[] = [];
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(start + size, clean.length);
    if (end < clean.length) {
      const cut = Math.max(clean.lastIndexOf(' ', end), clean.lastIndexOf('\n', end));
      if (cut > start + size / 2) end = cut;
    }
    const piece = clean.slice(start, end).trim();
    if (piece) chunks.push(piece);
    if (end >= clean.length) break;
    let next = end - overlap;
    if (next <= start) next = end;
    // start the overlap at a word boundary
    const space = clean.indexOf(' ', next);
    start = space >= next && space < end ? space + 1 : next;
  }
  return chunks;
}

/** Sentences of a paragraph, keeping their end punctuation. */
function sentences(paragraph: string): string[] {
  return (
    paragraph
      .match(/[^.!?\n]+(?:[.!?]+|$)\s*/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [paragraph]
  );
}

/**
 * Structure-aware: blocks are Markdown-style sections (a heading starts one) and paragraphs (blank
 * lines); blocks are packed in order up to `size`, a heading is carried into every chunk of its
 * section, and a block larger than `size` is split by sentences, then by fixed windows.
 */
export function structureChunks(text: string, size: number): string[] {
  const clean = normalizeSpace(text);
  if (!clean) return [];
  const chunks: string[] = [];
  let heading = '';
  let current = '';
  const flush = () => {
    if (current.trim()) chunks.push(current.trim());
    current = '';
  };
  const add = (piece: string) => {
    const prefix = current ? '' : heading ? `${heading}\n` : '';
    const joined = current ? `${current}\n${piece}` : `${prefix}${piece}`;
    if (joined.length <= size) {
      current = joined;
      return;
    }
    flush();
    const fresh = heading ? `${heading}\n${piece}` : piece;
    if (fresh.length <= size) {
      current = fresh;
      return;
    }
    // Too long for one chunk: sentences, then fixed windows for a sentence that is still too long.
    for (const sentence of sentences(piece)) {
      if (sentence.length > size - heading.length - 1) {
        flush();
        for (const part of fixedSizeChunks(sentence, Math.max(size - heading.length - 1, CHUNK_SIZE_MIN / 2))) {
          chunks.push(heading ? `${heading}\n${part}` : part);
        }
        continue;
      }
      const next = current ? `${current} ${sentence}` : heading ? `${heading}\n${sentence}` : sentence;
      if (next.length > size) {
        flush();
        current = heading ? `${heading}\n${sentence}` : sentence;
      } else current = next;
    }
  };
  for (const block of clean.split(/\n\n+/)) {
    const lines = block.split('\n');
    let paragraph: string[] = [];
    const emit = () => {
      if (paragraph.length) add(paragraph.join('\n'));
      paragraph = [];
    };
    for (const line of lines) {
      if (/^#{1,6} /.test(line)) {
        emit();
        flush();
        heading = line.replace(/^#+ /, '').trim();
      } else paragraph.push(line);
    }
    emit();
  }
  flush();
  return chunks;
}

export function chunkText(text: string, strategy: ChunkingStrategy): string[] {
  return strategy.method === 'fixed_size' ? fixedSizeChunks(text, strategy.chunk_size) : structureChunks(text, strategy.chunk_size);
}

/** `%` is the only wildcard: `_` and `\` match themselves (escaped for LIKE with `\`). */
export function likePattern(pattern: string): string {
  return pattern.replace(/[\\_]/g, (c) => `\\${c}`);
}

/**
 * Fused scores of the candidates of both rankings, in [0, 1], in input order:
 * `vectorWeight` × the cosine similarity min-max normalized over the vector candidates (1: the nearest)
 * + the rest × the square of the full-text score (the IDF-weighted share of the query's words a chunk
 * holds). Squaring keeps a chunk that shares one common word with the question from pushing a good
 * vector match down; a chunk holding every word (an error code, a SKU) keeps its full weight. Scores,
 * not ranks: reciprocal rank fusion gives the 20th weak word match as much as the 20th vector match.
 * Without a vector ranking (the dataset's model is not at hand) pass a weight of 0: full text has it all.
 * The weights stay when full text finds nothing, so scores of datasets stay comparable (an agent merges them).
 * When the query names exact terms (`namesTerms`: known from the query alone, so every dataset of an agent
 * scales alike), or a word full text could not find turns up in its folded spelling (some candidate has
 * an `exact_score`), the exact score takes `exactWeight` of the whole and the rest the remainder: a
 * passage holding the identifier, name or phrase comes before near-duplicates that share every other
 * word, and a dataset holding none of the named terms scores at most 1 − `exactWeight`. Otherwise
 * nothing changes.
 */
export function fusedScores(
  candidates: { lexical_score: number | null; vector_similarity: number | null; exact_score?: number | null }[],
  vectorWeight = VECTOR_WEIGHT,
  exactWeight = EXACT_WEIGHT,
  namesTerms = false,
): number[] {
  const similarities = candidates.map((c) => c.vector_similarity).filter((s): s is number => s !== null);
  const lo = Math.min(...similarities);
  const hi = Math.max(...similarities);
  const exact = namesTerms || candidates.some((c) => (c.exact_score ?? 0) > 0) ? exactWeight : 0;
  return candidates.map((c) => {
    const vector = c.vector_similarity === null ? 0 : hi > lo ? (c.vector_similarity - lo) / (hi - lo) : 1;
    const lexical = c.lexical_score === null ? 0 : Math.min(1, c.lexical_score) ** 2;
    const base = vectorWeight * vector + (1 - vectorWeight) * lexical;
    return (1 - exact) * base + exact * Math.min(1, c.exact_score ?? 0);
  });
}
