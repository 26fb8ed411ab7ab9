import { z } from 'zod';

// Text the server trims before it checks its length (a name of "   " is refused, "  a  " is "a"). JSON Schema
// cannot trim, so the document states the same rule as a pattern: optional white space (exactly what
// String.prototype.trim removes), then 1 to `max` characters that begin and end with something else, then
// optional white space, and no U+0000 anywhere (refused at the door, api/middleware/request-text.ts). The raw
// length is not bounded (white space around the text does not count), so the document carries no maxLength.
// Zod's own `.meta` (not `.openapi`): the worker imports domain schemas without the OpenAPI extension.

/** The characters String.prototype.trim removes: ECMAScript WhiteSpace and LineTerminator. */
export const TRIMMED = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** The pattern of a text of 1 to `max` characters once trimmed, none of them among `without` (escaped for a class). */
export function trimmedPattern(max: number, without = ''): string {
  if (!Number.isInteger(max) || max < 1) throw new Error(`trimmedPattern: max must be a positive integer, not ${max}`);
  const edge = `[^${TRIMMED}\\u0000${without}]`;
  const middle = max === 1 ? '' : `(?:[^\\u0000${without}]{0,${max - 2}}${edge})?`;
  return `^[${TRIMMED}]*${edge}${middle}[${TRIMMED}]*$`;
}

/** Text with something besides white space in it (what `text.trim() !== ''` accepts), and no U+0000. */
export const NOT_BLANK_PATTERN = `^[^\\u0000]*[^${TRIMMED}\\u0000][^\\u0000]*$`;

/**
 * A string trimmed, then 1 to `max` characters; the document says so with trimmedPattern(max). `forbidden`: one
 * character the text may not hold at all (refused with "must not contain <c>"; the pattern excludes it too).
 */
export function trimmedText(max: number, forbidden?: string) {
  // `x-trimmed`: the document drops the raw maxLength the generator writes (api/openapi-registry.ts, finishDocument).
  const text = z.string().trim().min(1).max(max);
  const checked = forbidden ? text.refine((value) => !value.includes(forbidden), `must not contain ${forbidden}`) : text;
  const inClass = forbidden?.replace(/[\]\\^-]/g, '\\$&');
  return checked.meta({ pattern: trimmedPattern(max, inClass), 'x-trimmed': true });
}
