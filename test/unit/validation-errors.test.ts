import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromZodError } from '../../api/errors';

const schema = z
  .object({
    name: z.string().min(1),
    priority: z.number().int().min(0).max(999999),
    kind: z.enum(['a', 'b']),
    id: z.uuid().optional(),
    phone: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number')
      .optional(),
    code: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .optional(),
  })
  .strict();

function issues(input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  return fromZodError(result.error, 'body', input).issues;
}

describe('zod issues in the pydantic shape', () => {
  it('reports a missing field', () => {
    expect(issues({ priority: 1, kind: 'a' })).toEqual([
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: null, ctx: {} },
    ]);
  });

  it('reports bounds with ctx', () => {
    const [issue] = issues({ name: 'x', priority: 1_000_000, kind: 'a' });
    expect(issue).toEqual({
      type: 'less_than_equal',
      loc: ['body', 'priority'],
      msg: 'Input should be less than or equal to 999999',
      input: 1_000_000,
      ctx: { le: 999999 },
    });
    expect(issues({ name: 'x', priority: -1, kind: 'a' })[0]).toMatchObject({ type: 'greater_than_equal', ctx: { ge: 0 } });
  });

  it('reports a pattern mismatch with its own message, or the pattern', () => {
    const [phone] = issues({ name: 'x', priority: 1, kind: 'a', phone: '555' });
    expect(phone).toEqual({
      type: 'string_pattern_mismatch',
      loc: ['body', 'phone'],
      msg: 'must be an E.164 number',
      input: '555',
      ctx: { pattern: '^\\+[1-9]\\d{6,14}$' },
    });
    const [code] = issues({ name: 'x', priority: 1, kind: 'a', code: 'usd' });
    expect(code).toMatchObject({
      type: 'string_pattern_mismatch',
      msg: "String should match pattern '^[A-Z]{3}$'",
      ctx: { pattern: '^[A-Z]{3}$' },
    });
  });

  it('reports wrong types, enums, formats and extra keys', () => {
    const all = issues({ name: 5, priority: 'high', kind: 'c', id: 'nope', extra: true });
    const byType = Object.fromEntries(all.map((i) => [i.type, i]));
    expect(byType.string_type).toMatchObject({ loc: ['body', 'name'], input: 5 });
    expect(byType.float_type ?? byType.int_type).toMatchObject({ loc: ['body', 'priority'], input: 'high' });
    expect(byType.enum).toMatchObject({ loc: ['body', 'kind'], input: 'c', ctx: { expected: "'a', 'b'" } });
    expect(byType.uuid_parsing).toMatchObject({ loc: ['body', 'id'], input: 'nope' });
    expect(byType.extra_forbidden).toMatchObject({ loc: ['body', 'extra'], input: true });
    for (const issue of all) expect(Object.keys(issue).sort()).toEqual(['ctx', 'input', 'loc', 'msg', 'type']);
  });
});
