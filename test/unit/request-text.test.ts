import { describe, expect, it } from 'vitest';
import { checkBodyText, checkParameterText } from '../../api/middleware/request-text';
import { DomainError } from '../../domain/errors';

/** The body as the reader sees it: its text, and what JSON.parse makes of it. */
const check = (text: string) => checkBodyText(JSON.parse(text), text);
const refusal = (fn: () => void): DomainError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('not refused');
};

describe('checkBodyText', () => {
  it('refuses a lone surrogate escape, high or low, in a value or a property name, naming where (400)', () => {
    expect(refusal(() => check('{"a":[1,{"b":"x\\ud800y"}]}'))).toMatchObject({
      kind: 'invalid',
      detail: 'Request body is not valid Unicode: a lone UTF-16 surrogate (\\ud800) in the value at body.a.1.b',
    });
    expect(refusal(() => check('{"a":"\\uDFFF"}')).detail).toContain('(\\udfff)');
    expect(refusal(() => check('{"a":"\\udc00\\ud800"}')).detail).toContain('(\\udc00)'); // reversed pair
    expect(refusal(() => check('{"k\\ud83d":1}')).detail).toBe(
      'Request body is not valid Unicode: a lone UTF-16 surrogate (\\ud83d) in the property name at body.k\ud83d',
    );
  });

  it('accepts surrogate pairs, escaped or not, and text that only looks like an escape', () => {
    expect(() => check('{"a":"\\ud83d\\ude00 and 😀"}')).not.toThrow();
    expect(() => check('{"a":"\\\\ud800 is how one writes it"}')).not.toThrow();
    expect(() => check('{"a":"plain"}')).not.toThrow();
  });

  it('refuses U+0000 with one 422 issue per field, at most 20', () => {
    expect(refusal(() => check('{"name":"a\\u0000b","tags":["ok","\\u0000"],"\\u0000k":1}'))).toMatchObject({
      kind: 'unprocessable',
      fields: [
        { loc: ['body', 'name'], msg: 'Value error, the character U+0000 (NUL) is not accepted (in the value)' },
        { loc: ['body', 'tags', 1], msg: expect.stringContaining('U+0000') },
        { loc: ['body', '\u0000k'], msg: expect.stringContaining('(in the property name)') },
      ],
    });
    const many = JSON.stringify({ rows: Array.from({ length: 50 }, () => ({ v: '\u0000' })) });
    expect(refusal(() => check(many)).fields).toHaveLength(20);
    expect(() => check('{"a":"\\\\u0000 as text"}')).not.toThrow();
  });
});

describe('checkParameterText', () => {
  it('refuses percent-escapes that are not UTF-8 (400), not a literal %', () => {
    expect(refusal(() => checkParameterText('q=%ED%A0%80', { q: '\ufffd' })).detail).toBe('Query string is not valid UTF-8');
    expect(refusal(() => checkParameterText('q=%FF', { q: '\ufffd' })).kind).toBe('invalid');
    expect(() => checkParameterText('q=100%&r=%zz&s=caf%C3%A9+x', { q: '100%', r: '%zz', s: 'café x' })).not.toThrow();
  });

  it('refuses U+0000 in a query value or a path parameter, naming it (422)', () => {
    expect(refusal(() => checkParameterText('q=a%00', { q: 'a\u0000', other: ['x', '\u0000'] }, { id: 'p\u0000' })).fields).toEqual([
      { loc: ['query', 'q'], msg: expect.stringContaining('U+0000') },
      { loc: ['query', 'other'], msg: expect.stringContaining('U+0000') },
      { loc: ['path', 'id'], msg: expect.stringContaining('U+0000') },
    ]);
  });
});
