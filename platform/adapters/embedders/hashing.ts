import crypto from 'node:crypto';
import type { Embedder } from './types';

const DIMENSION = 384;
const STOPWORDS = new Set(
  'a an and are as at be by for from has have in is it its of on or that the this to was were will with what which who how when where why do does did not no can'.split(
    ' ',
  ),
);

/** FNV-1a, 32 bits: a fast, stable hash of a feature to a bucket and a sign. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A light English stem, so "refunds", "refunded" and "refund" share a feature. */
function stem(word: string): string {
  return word.replace(/(?:ing|edly|ed|ies|es|s|ly)$/u, (m) => (word.length - m.length >= 3 ? (m === 'ies' ? 'y' : '') : m));
}

/**
 * The built-in embedder: the "hashing trick" over stemmed words (weight 1), word pairs (0.5) and
 * character trigrams of each word (0.25, for spelling variants and compounds), with a signed hash into
 * 384 buckets and a sublinear term weight, L2-normalized. It is lexical: it needs no model, no download
 * and no Python, runs anywhere offline and is deterministic; it does not know synonyms (that is what
 * an OpenAI-compatible embedder brings, EMBEDDINGS_BASE_URL).
 */
export class HashingEmbedder implements Embedder {
  readonly model = `builtin-hashing-${DIMENSION}`;
  readonly dimension = DIMENSION;
  readonly lexical = true;

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.vector(t));
  }

  vector(text: string): number[] {
    const counts = new Map<string, number>();
    const bump = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
    const words = (
      text
        .toLowerCase()
        .normalize('NFKC')
        .match(/[\p{L}\p{N}]+/gu) ?? []
    )
      .filter((w) => !STOPWORDS.has(w))
      .map(stem);
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      bump(`w:${word}`, 1);
      if (i + 1 < words.length) bump(`b:${word} ${words[i + 1]}`, 0.5);
      const padded = `<${word}>`;
      if (padded.length > 4) for (let j = 0; j + 3 <= padded.length; j++) bump(`t:${padded.slice(j, j + 3)}`, 0.25);
    }
    const vector = new Array<number>(DIMENSION).fill(0);
    for (const [feature, count] of counts) {
      const hash = fnv1a(feature);
      vector[hash % DIMENSION]! += (hash & 0x80000000 ? -1 : 1) * (1 + Math.log(count));
    }
    const norm = Math.hypot(...vector);
    if (norm === 0) {
      // An empty text still gets a unit vector (cosine distance needs one), the same for every empty text.
      const seed = crypto.createHash('sha256').update('empty').digest();
      vector[seed[0]! % DIMENSION] = 1;
      return vector;
    }
    return vector.map((v) => v / norm);
  }
}
