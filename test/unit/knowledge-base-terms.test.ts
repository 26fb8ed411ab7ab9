import { describe, expect, it } from 'vitest';
import { EXACT_WEIGHT, fusedScores } from '../../domain/knowledge-base';
import { EXACT_TERMS_MAX, exactTerms } from '../../domain/knowledge-base-terms';

// Which parts of a question are exact terms (a passage must hold them as written), and how they weigh
// in the fused score.

describe('exactTerms', () => {
  it.each([
    ['What comes in the box with SKU-4471?', ['SKU-4471']],
    ['do suppliers send a W9', ['W9']],
    ['printer error e1306', ['e1306']],
    ['payment portal error 4071', ['4071']],
    ['Which drill takes the chuck 88.301.21?', ['88.301.21']],
    ['oil for the proline x-3', ['x-3']],
  ])('a code: %s', (query, terms) => {
    expect(exactTerms(query).terms).toEqual(terms);
  });

  it('keeps a short number out unless it follows a code or a name (TA 3), and a plain number of two digits out', () => {
    expect(exactTerms('What discount does a TA 3 account get?').terms).toEqual(['TA 3', 'TA']);
    expect(exactTerms('hold it for 10 seconds').terms).toEqual([]);
  });

  it('takes quoted phrases in straight, typographic and guillemet quotes, but not apostrophes', () => {
    expect(exactTerms('Who pays under "delivered duty paid"?').terms).toEqual(['delivered duty paid']);
    expect(exactTerms('Who loads the goods under “ex works”?').terms).toEqual(['ex works']);
    expect(exactTerms('le délai «net 30»').terms[0]).toBe('net 30');
    expect(exactTerms("what does 'used but undamaged' mean").terms).toEqual(['used but undamaged']);
    expect(exactTerms("I don't know the customer's order").terms).toEqual([]);
  });

  it('takes names: capitalized words inside a sentence, accents, inner capitals, particles', () => {
    expect(exactTerms('How do I reach José Álvarez?').terms).toEqual(['José Álvarez', 'José', 'Álvarez']);
    expect(exactTerms('Who is Zoe Mueller?').terms).toEqual(['Zoe Mueller']);
    expect(exactTerms('Fiona MacAllister extension').terms).toEqual(['Fiona MacAllister', 'MacAllister']);
    expect(exactTerms('Opening hours of the São José dos Campos depot').terms[0]).toBe('São José dos Campos');
    expect(exactTerms('Luis de la Fuente phone').terms[0]).toBe('Luis de la Fuente');
  });

  it("does not take a sentence's first word alone, nor a stop word opening a name", () => {
    expect(exactTerms('Warranty of the drill').terms).toEqual([]);
    expect(exactTerms('What Kestrel Hub works with Alexa?').terms).toEqual(['Kestrel Hub', 'Alexa']);
    // A first word that may or may not be part of the name: the run with it, and without it.
    expect(exactTerms('Extension José Alves').terms).toEqual(['Extension José Alves', 'José Alves', 'José']);
  });

  it('reads no name from case when the question has no lower-case letter', () => {
    expect(exactTerms('HOW DO I RESET MY HUB').terms).toEqual([]);
    expect(exactTerms('HOW DO I RESET THE T3').terms).toEqual(['T3']);
  });

  it("gives the question's other words, without stop words, for the folded look-up", () => {
    expect(exactTerms('pallet collection at the krakow depot')).toEqual({ terms: [], words: ['pallet', 'collection', 'krakow', 'depot'] });
    expect(exactTerms('How do I reach José Álvarez?').words).toEqual(['reach']);
  });

  it(`takes at most ${EXACT_TERMS_MAX} terms`, () => {
    const query = Array.from({ length: 12 }, (_, i) => `SKU-${1000 + i}`).join(', ');
    expect(exactTerms(query).terms).toHaveLength(EXACT_TERMS_MAX);
  });
});

describe('fusedScores with exact terms', () => {
  const near = { lexical_score: 1, vector_similarity: 0.9 };
  const answer = { lexical_score: 0.8, vector_similarity: 0.8 };

  it('puts the passage holding the exact term before a near-duplicate the other rankings prefer', () => {
    const [dup, ans] = fusedScores([
      { ...near, exact_score: 0 },
      { ...answer, exact_score: 1 },
    ]);
    expect(ans!).toBeGreaterThan(dup!);
    expect(ans!).toBeLessThanOrEqual(1);
  });

  it('changes nothing when no candidate holds an exact term', () => {
    const without = fusedScores([near, answer]);
    expect(
      fusedScores([
        { ...near, exact_score: 0 },
        { ...answer, exact_score: null },
      ]),
    ).toEqual(without);
  });

  it('scales a dataset holding none of the named terms to the other half, as it scales one that holds them', () => {
    const plain = fusedScores([near, answer]);
    const named = fusedScores([near, answer], undefined, EXACT_WEIGHT, true);
    expect(named).toEqual(plain.map((x) => (1 - EXACT_WEIGHT) * x));
  });

  it(`gives the exact terms ${EXACT_WEIGHT} of the score`, () => {
    const [only] = fusedScores([{ lexical_score: null, vector_similarity: null, exact_score: 1 }], 0.55);
    expect(only).toBeCloseTo(EXACT_WEIGHT);
  });
});
