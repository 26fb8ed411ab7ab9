import { describe, expect, it } from 'vitest';
import { GOLDEN_SET, sameResult } from '../../bench/analytics/golden-set';

describe('the accuracy set and its scoring', () => {
  it('holds at least 30 questions over every difficulty, with unique ids', () => {
    expect(GOLDEN_SET.length).toBeGreaterThanOrEqual(30);
    expect(new Set(GOLDEN_SET.map((q) => q.id)).size).toBe(GOLDEN_SET.length);
    for (const d of ['easy', 'medium', 'hard']) expect(GOLDEN_SET.filter((q) => q.difficulty === d).length).toBeGreaterThanOrEqual(8);
  });

  it('compares result sets as multisets: order aside, numbers normalised, duplicates and columns counted', () => {
    expect(
      sameResult(
        [
          ['a', '1'],
          ['b', '2.00'],
        ],
        [
          ['b', 2],
          ['a', 1],
        ],
      ),
    ).toBe(true);
    expect(sameResult([['x', '0.3333333']], [['x', 0.33]])).toBe(true);
    expect(
      sameResult(
        [['a', '1']],
        [
          ['a', '1'],
          ['a', '1'],
        ],
      ),
    ).toBe(false);
    // Column order does not count (a plan may put the measure before or after its dimension); the values do.
    expect(sameResult([['a', '1']], [['1', 'a']])).toBe(true);
    expect(sameResult([['a', '1']], [['a', '2']])).toBe(false);
    expect(sameResult([['a', null]], [['a', 'null']])).toBe(false);
  });
});
