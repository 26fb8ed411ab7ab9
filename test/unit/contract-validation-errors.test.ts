import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromZodError } from '../../api/errors';

/** One failing input per zod issue kind (and the shapes that used to drop `input`). */
const CASES: { name: string; schema: z.ZodType; input: unknown }[] = [
  { name: 'invalid_type (wrong type)', schema: z.object({ a: z.string() }), input: { a: 1 } },
  { name: 'invalid_type (missing)', schema: z.object({ a: z.string() }), input: {} },
  { name: 'too_small', schema: z.object({ a: z.string().min(2) }), input: { a: 'x' } },
  { name: 'too_big', schema: z.object({ a: z.number().max(1) }), input: { a: 2 } },
  { name: 'invalid_format', schema: z.object({ a: z.uuid() }), input: { a: 'x' } },
  { name: 'invalid_format (regex)', schema: z.object({ a: z.string().regex(/^a$/) }), input: { a: 'b' } },
  { name: 'not_multiple_of', schema: z.object({ a: z.number().multipleOf(5) }), input: { a: 3 } },
  { name: 'unrecognized_keys', schema: z.object({}).strict(), input: { b: 1 } },
  { name: 'invalid_union', schema: z.object({ a: z.union([z.string(), z.number()]) }), input: { a: true } },
  {
    name: 'invalid_union (discriminator)',
    schema: z.object({
      tools: z.array(z.discriminatedUnion('type', [z.object({ type: z.literal('a') }), z.object({ type: z.literal('b') })])),
    }),
    input: { tools: [{ type: 'c' }, {}] },
  },
  { name: 'invalid_key', schema: z.object({ a: z.record(z.string().min(3), z.number()) }), input: { a: { x: 1 } } },
  { name: 'invalid_element', schema: z.object({ a: z.map(z.string(), z.number()) }), input: { a: new Map([['x', 'y']]) } },
  { name: 'invalid_value', schema: z.object({ a: z.enum(['x', 'y']) }), input: { a: 'z' } },
  { name: 'invalid_value (missing enum)', schema: z.object({ a: z.enum(['x', 'y']) }), input: {} },
  { name: 'custom', schema: z.object({ a: z.string().refine(() => false, 'nope') }), input: { a: 'x' } },
  { name: 'custom (object level)', schema: z.object({ a: z.string().optional() }).refine((v) => v.a, 'need a'), input: {} },
  { name: 'root not an object', schema: z.object({ a: z.string() }), input: null },
];

describe('the 422 mapper is total', () => {
  for (const { name, schema, input } of CASES) {
    it(`${name}: every item has type, loc, msg, input and ctx`, () => {
      const result = schema.safeParse(input);
      expect(result.success).toBe(false);
      const { issues } = fromZodError(result.error!, 'body', input);
      expect(issues.length).toBeGreaterThan(0);
      for (const issue of JSON.parse(JSON.stringify(issues)) as Record<string, unknown>[]) {
        expect(Object.keys(issue).sort()).toEqual(['ctx', 'input', 'loc', 'msg', 'type']);
        expect(typeof issue.type).toBe('string');
        expect(typeof issue.msg).toBe('string');
        expect(Array.isArray(issue.loc)).toBe(true);
        expect((issue.loc as unknown[])[0]).toBe('body');
        expect(issue.ctx).toBeTypeOf('object');
        expect(issue.ctx).not.toBeNull();
      }
    });
  }

  it('reports a missing enum and a missing union member as "missing" with input null', () => {
    const result = z.object({ a: z.enum(['x']) }).safeParse({});
    expect(fromZodError(result.error!, 'body', {}).issues).toEqual([
      { type: 'missing', loc: ['body', 'a'], msg: 'Field required', input: null, ctx: {} },
    ]);
  });
});
