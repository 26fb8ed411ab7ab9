import { describe, expect, it } from 'vitest';
import { boundedEcho } from '../../api/middleware/errors';
import { jsonDepthExceeds } from '../../api/middleware/json-body';

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, and allows exactly the limit', () => {
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
    expect(jsonDepthExceeds('{"a":{"b":{"c":1}}}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":{"b":{"c":[1]}}}', 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(`{"a":"${'['.repeat(500)}"}`, 2)).toBe(false);
    expect(jsonDepthExceeds(`{"a":"\\"${'{'.repeat(500)}"}`, 2)).toBe(false);
    expect(jsonDepthExceeds(`{"a":"\\\\", "b":[[[1]]]}`, 3)).toBe(true);
  });

  it('handles 100,000 levels without recursion', () => {
    expect(jsonDepthExceeds(nested(100_000), 64)).toBe(true);
    expect(jsonDepthExceeds(nested(100_000, '{"a":', '}'), 64)).toBe(true);
  });
});

describe('boundedEcho', () => {
  it('keeps small values as they are', () => {
    const value = { name: 'x', tags: ['a', 'b'], n: 1, ok: null };
    expect(boundedEcho(value)).toEqual(value);
  });

  it('cuts depth, long strings and long collections', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 64; i++) deep = [deep];
    expect(JSON.stringify(boundedEcho(deep)).length).toBeLessThan(40);
    expect((boundedEcho('x'.repeat(100_000)) as string).length).toBe(2049);
    expect((boundedEcho(Array.from({ length: 10_000 }, (_, i) => i)) as unknown[]).length).toBe(50);
    expect(Object.keys(boundedEcho(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]))) as object)).toHaveLength(50);
  });
});
