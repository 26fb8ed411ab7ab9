import { describe, expect, it } from 'vitest';
import {
  VECTOR_WEIGHT,
  chunkText,
  effectiveChunking,
  fixedSizeChunks,
  fusedScores,
  likePattern,
  structureChunks,
} from '../../domain/knowledge-base';
import { HashingEmbedder } from '../../platform/adapters/embedders/hashing';
import { htmlMainText, processorFor } from '../../platform/adapters/web/extract';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('fixed-size chunking', () => {
  it('cuts windows of at most chunk_size at word boundaries, overlapping by 15%', () => {
    const chunks = fixedSizeChunks(words(400), 200);
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(200);
      expect(c).toMatch(/^word\d+( word\d+)*$/); // no word split
    }
    for (let i = 1; i < chunks.length; i++) {
      const lastWords = chunks[i - 1]!.split(' ').slice(-2).join(' ');
      expect(chunks[i]!.includes(lastWords.split(' ')[1]!)).toBe(true); // overlap carries words over
    }
    expect(fixedSizeChunks('   ', 200)).toEqual([]);
  });
});

describe('structure-aware chunking', () => {
  it('keeps sections apart, carries the heading into each chunk, packs paragraphs', () => {
    const text = '# Hours\n\nOpen Monday.\n\nClosed Sunday.\n\n# Parking\n\nBehind the building.';
    expect(structureChunks(text, 1000)).toEqual(['Hours\nOpen Monday.\nClosed Sunday.', 'Parking\nBehind the building.']);
  });
  it('splits a long paragraph by sentences, never above chunk_size', () => {
    const paragraph = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} says something.`).join(' ');
    const chunks = structureChunks(`# Title\n\n${paragraph}`, 150);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(150);
      expect(c.startsWith('Title\n')).toBe(true);
    }
  });
  it('chooses the method from the source, falling back to the dataset for nulls', () => {
    expect(effectiveChunking({ method: null, chunk_size: 300 }, { method: 'fixed_size', chunk_size: 900 })).toEqual({
      method: 'fixed_size',
      chunk_size: 300,
    });
    expect(chunkText(words(100), { method: 'fixed_size', chunk_size: 100 }).every((c) => c.length <= 100)).toBe(true);
  });
});

describe('retrieval helpers', () => {
  it('fuses scores into [0, 1]: 1 for the nearest vector match holding every word', () => {
    const [best, vectorOnly, farthest, everyWord] = fusedScores([
      { lexical_score: 1, vector_similarity: 0.9 },
      { lexical_score: null, vector_similarity: 0.85 },
      { lexical_score: null, vector_similarity: 0.8 },
      { lexical_score: 1, vector_similarity: null },
    ]);
    expect(best).toBe(1);
    expect(vectorOnly).toBeCloseTo(VECTOR_WEIGHT * 0.5);
    expect(farthest).toBe(0);
    expect(everyWord).toBeCloseTo(1 - VECTOR_WEIGHT);
  });
  it('keeps a chunk sharing one common word with the question below a good vector match', () => {
    // One word of four (weighted share 0.25) is worth 0.25² of the full-text weight, the second-nearest chunk half the vector weight.
    const [weakWord, goodVector] = fusedScores([
      { lexical_score: 0.25, vector_similarity: 0.7 },
      { lexical_score: null, vector_similarity: 0.8 },
      { lexical_score: null, vector_similarity: 0.9 },
    ]);
    expect(goodVector).toBeGreaterThan(weakWord!);
  });
  it('gives full text the whole weight without a vector ranking, and keeps the weights when full text finds nothing', () => {
    expect(fusedScores([{ lexical_score: 1, vector_similarity: null }], 0)).toEqual([1]);
    // A lone vector match in one dataset scores below a match of both rankings in another (an agent merges them).
    expect(fusedScores([{ lexical_score: null, vector_similarity: 0.4 }])).toEqual([VECTOR_WEIGHT]);
    expect(fusedScores([])).toEqual([]);
  });
  it('makes % the only wildcard', () => {
    expect(likePattern('a_b\\c%')).toBe('a\\_b\\\\c%');
  });
  it('the built-in embedder is deterministic, unit length, and closer for shared words', () => {
    const e = new HashingEmbedder();
    const a = e.vector('refund policy for returned items');
    const b = e.vector('our refunds policy');
    const c = e.vector('boiler repair in Springfield');
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(a).toHaveLength(384);
    expect(dot(a, a)).toBeCloseTo(1);
    expect(e.vector('refund policy for returned items')).toEqual(a);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
  });
});

describe('extraction', () => {
  it('takes the main text of HTML, without scripts, navigation or footers, headings as Markdown', () => {
    const html =
      '<html><head><script>x()</script></head><body><nav>Menu</nav><main><h2>Prices</h2><p>From &euro;10.</p></main><footer>(c)</footer></body></html>';
    expect(htmlMainText(html)).toBe('## Prices\n\nFrom €10.');
  });
  it('picks the extractor from the media type, else the extension', () => {
    expect(processorFor('application/pdf', 'x')).toBe('pdf');
    expect(processorFor('application/octet-stream', 'notes.md')).toBe('markdown');
    expect(processorFor('application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'a')).toBe('docx');
    expect(processorFor('text/csv', 'a')).toBe('csv');
    expect(processorFor('image/png', 'a.png')).toBeUndefined();
  });
});
