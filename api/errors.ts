import type { z } from 'zod';
import { echoableInput } from './secret-fields';

/** An error that maps straight to an HTTP status and `{"detail": ...}` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string) => new HttpError(400, detail);
export const unauthorized = (detail = 'Not authenticated') => new HttpError(401, detail, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (detail = 'Insufficient permissions') => new HttpError(403, detail);
export const notFound = (detail = 'Not Found') => new HttpError(404, detail);
export const conflict = (detail: string) => new HttpError(409, detail);
export const badGateway = (detail: string) => new HttpError(502, detail);
export const unavailable = (detail: string) => new HttpError(503, detail);

/** The message of a timestamp that is not ISO 8601; mapped to pydantic's `datetime_parsing`. */
export const TIMESTAMP_MESSAGE = 'Input should be an ISO 8601 date or date-time';
/** The message of a calendar day that is not `YYYY-MM-DD`; mapped to pydantic's `date_parsing`. */
export const DATE_MESSAGE = 'Input should be a valid date in the format YYYY-MM-DD';

/** One entry of a 422 body, in the FastAPI/pydantic shape the API contract fixes. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx: Record<string, unknown>;
}

export class ValidationError extends Error {
  readonly status = 422;
  constructor(readonly issues: ValidationIssue[]) {
    super('Validation failed');
  }
}

export type Location = 'body' | 'query' | 'path' | 'header';

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value: unknown = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'string_type',
  number: 'float_type',
  int: 'int_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
};

/** pydantic's words for a lower (`min`) or upper (`max`) bound on a string's length, a list's size or a number. */
const BOUNDS = {
  min: {
    string: 'string_too_short',
    array: 'too_short',
    words: 'at least',
    lengthKey: 'min_length',
    inclusive: ['greater_than_equal', 'ge', 'greater than or equal to'],
    exclusive: ['greater_than', 'gt', 'greater than'],
  },
  max: {
    string: 'string_too_long',
    array: 'too_long',
    words: 'at most',
    lengthKey: 'max_length',
    inclusive: ['less_than_equal', 'le', 'less than or equal to'],
    exclusive: ['less_than', 'lt', 'less than'],
  },
} as const;

function boundIssue(
  side: keyof typeof BOUNDS,
  origin: string,
  inclusive: boolean,
  bound: number,
  loc: (string | number)[],
  at: unknown,
): ValidationIssue {
  const w = BOUNDS[side];
  const plural = bound === 1 ? '' : 's';
  if (origin === 'string')
    return {
      type: w.string,
      loc,
      msg: `String should have ${w.words} ${bound} character${plural}`,
      input: at,
      ctx: { [w.lengthKey]: bound },
    };
  if (origin === 'array')
    return { type: w.array, loc, msg: `List should have ${w.words} ${bound} item${plural}`, input: at, ctx: { [w.lengthKey]: bound } };
  const [type, key, words] = inclusive ? w.inclusive : w.exclusive;
  return { type, loc, msg: `Input should be ${words} ${bound}`, input: at, ctx: { [key]: bound } };
}

/** Maps one zod issue to the pydantic vocabulary (type, msg, ctx) that API clients already know. */
function mapIssue(issue: z.core.$ZodIssue, location: Location, input: unknown): ValidationIssue[] {
  const loc: (string | number)[] = [location, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  const at = valueAt(input, issue.path);
  // A required field that is absent reads "Field required" whatever its schema (an enum, a union).
  if (at === undefined && issue.path.length > 0 && (issue.code === 'invalid_value' || issue.code === 'invalid_union'))
    return [{ type: 'missing', loc, msg: 'Field required', input: null, ctx: {} }];
  switch (issue.code) {
    case 'invalid_type': {
      if (at === undefined) return [{ type: 'missing', loc, msg: 'Field required', input: at ?? null, ctx: {} }];
      const type = TYPE_NAMES[issue.expected] ?? `${issue.expected}_type`;
      return [{ type, loc, msg: `Input should be a valid ${issue.expected}`, input: at, ctx: { expected: issue.expected } }];
    }
    case 'too_small':
      return [boundIssue('min', issue.origin, issue.inclusive === true, issue.minimum as number, loc, at)];
    case 'too_big':
      return [boundIssue('max', issue.origin, issue.inclusive === true, issue.maximum as number, loc, at)];
    case 'invalid_value': {
      const expected = issue.values.map((v) => `'${String(v)}'`).join(', ');
      return [{ type: 'enum', loc, msg: `Input should be ${expected}`, input: at, ctx: { expected } }];
    }
    case 'invalid_format': {
      if (issue.format === 'regex' && issue.message === TIMESTAMP_MESSAGE) {
        return [{ type: 'datetime_parsing', loc, msg: TIMESTAMP_MESSAGE, input: at, ctx: { error: 'invalid ISO 8601 date or date-time' } }];
      }
      if (issue.format === 'regex' && issue.message === DATE_MESSAGE)
        return [{ type: 'date_parsing', loc, msg: DATE_MESSAGE, input: at, ctx: { error: 'invalid date' } }];
      if (issue.format === 'regex') {
        // zod reports the pattern as a regex literal (/.../flags); pydantic's ctx holds its source.
        const pattern = ((issue as { pattern?: string }).pattern ?? '').replace(/^\/(.*)\/[a-z]*$/s, '$1');
        const custom = !issue.message.startsWith('Invalid string');
        const msg = custom ? issue.message : `String should match pattern '${pattern}'`;
        return [{ type: 'string_pattern_mismatch', loc, msg, input: at, ctx: { pattern } }];
      }
      const type = issue.format === 'uuid' ? 'uuid_parsing' : issue.format === 'url' ? 'url_parsing' : `${issue.format}_parsing`;
      return [{ type, loc, msg: `Input should be a valid ${issue.format}`, input: at, ctx: { format: issue.format } }];
    }
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        type: 'extra_forbidden',
        loc: [...loc, key],
        msg: 'Extra inputs are not permitted',
        input: valueAt(at, [key]),
        ctx: {},
      }));
    case 'invalid_union':
      return [{ type: 'union_error', loc, msg: issue.message, input: at, ctx: {} }];
    case 'not_multiple_of':
      return [
        {
          type: 'multiple_of',
          loc,
          msg: `Input should be a multiple of ${String(issue.divisor)}`,
          input: at,
          ctx: { multiple_of: issue.divisor },
        },
      ];
    case 'invalid_key':
      return [{ type: 'invalid_key', loc, msg: issue.message, input: at, ctx: {} }];
    case 'invalid_element':
      return [
        {
          type: 'value_error',
          loc: [...loc, issue.key as string | number],
          msg: issue.message,
          input: valueAt(at, [issue.key as PropertyKey]),
          ctx: {},
        },
      ];
    case 'custom': {
      // A refinement that names pydantic's type for itself (a date out of range is `greater_than_equal`).
      const own = issue.params as { type?: string; ctx?: Record<string, unknown> } | undefined;
      return [{ type: own?.type ?? 'value_error', loc, msg: issue.message, input: at, ctx: own?.ctx ?? {} }];
    }
    default:
      return [{ type: 'value_error', loc, msg: (issue as { message: string }).message, input: at, ctx: {} }];
  }
}

/** Every item has all five keys: `input` is null (never dropped) when absent, `ctx` always an object, loc plain. */
function total(item: ValidationIssue): ValidationIssue {
  return {
    type: item.type,
    loc: item.loc.map((p) => (typeof p === 'number' ? p : String(p))),
    msg: item.msg || 'Invalid input',
    input: item.input === undefined ? null : item.input,
    ctx:
      item.ctx && typeof item.ctx === 'object'
        ? JSON.parse(JSON.stringify(item.ctx, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)))
        : {},
  };
}

/** With `schema` (the part's own), fields declared with secretField are never echoed in `input`. */
export function fromZodError(error: z.ZodError, location: Location, input: unknown, schema?: z.ZodType): ValidationError {
  const issues = error.issues.flatMap((issue) => mapIssue(issue, location, input)).map(total);
  if (!schema) return new ValidationError(issues);
  return new ValidationError(issues.map((item) => ({ ...item, input: echoableInput(schema, item.loc.slice(1), item.input) })));
}
