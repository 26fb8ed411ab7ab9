import { z } from 'zod';
import { trimmedText } from '../../domain/trimmed-text';

export const Uuid = z.uuid();
export const Timestamp = z.iso.datetime({ offset: true });

/** Dates and timestamps a request takes: one helper each, bounded to the years 1900 to 9999 (api/schemas/dates.ts). */
export { DateInput, TimestampInput, dateInput, timestampInput } from './dates';
export const ErrorBody = z.object({ detail: z.string() }).openapi('Error');
export const ValidationErrorBody = z
  .object({
    detail: z.array(
      z.object({
        type: z.string(),
        loc: z.array(z.union([z.string(), z.number()])),
        msg: z.string(),
        input: z.unknown(),
        ctx: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .openapi('ValidationError');

/** Error responses most authenticated routes share, for the OpenAPI document. */
export const authErrors = {
  401: { description: 'Missing, malformed, expired or revoked token', schema: ErrorBody },
  403: { description: 'Token lacks the scope, or organization not permitted', schema: ErrorBody },
} as const;
/** Answered when failed key attempts used up their limit (api/auth/attempt-limiter.ts). */
export const tooManyAttempts = {
  429: {
    description: 'Too many failed attempts with API keys from this address or for this key; retry after Retry-After seconds',
    schema: ErrorBody,
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
  },
} as const;
export const validationError = { 422: { description: 'Validation failed', schema: ValidationErrorBody } } as const;
export const notFoundError = { 404: { description: 'Not found in the organization', schema: ErrorBody } } as const;
/** Answered when the workflow engine cannot be reached; the request wrote nothing. */
export const workflowUnavailable = {
  503: { description: 'Workflow engine unavailable; nothing was written', schema: ErrorBody },
} as const;

export const IdParams = z.object({ id: Uuid });

/**
 * A page size: any integer from 1 up, one above `max` served as `max` however large it is (an integer
 * past 2^53 too: the API contract caps "regardless of input" rather than refusing).
 */
export const cappedLimit = (
  fallback: number,
  max: number,
  description = `Page size, default ${fallback}; values above ${max} are served as ${max}`,
) =>
  z.coerce
    .number()
    .min(1)
    .refine(Number.isInteger, 'Input should be a valid integer')
    .default(fallback)
    .transform((n) => Math.min(n, max))
    .openapi({ type: 'integer', minimum: 1, default: fallback, description, 'x-capped': true });

/** A query parameter's text as a number when it is a decimal integer (`-` allowed, so a negative one meets its bound). */
const decimalInteger = (value: unknown) => (typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : value);

/**
 * A page offset: a decimal integer from 0 (to `max` when given), default 0. Any other text, the empty one
 * included, is 422 like every invalid integer: `z.coerce.number()` read `offset=` and `offset= ` as 0, `1e3` as
 * 1000 and `0x10` as 16, and its document said the parameter could be null.
 */
export const offsetQuery = (max = Number.MAX_SAFE_INTEGER) => z.preprocess(decimalInteger, z.number().int().min(0).max(max)).default(0);

/**
 * Tags of contacts, deals and accounts: plain names kept on the row (not references to the tag table), trimmed,
 * 1 to 100 characters, at most 50.
 */
export const TagNames = z.array(trimmedText(100)).max(50);

/** Tag names once each, in the order given (contacts, deals and accounts keep tags as plain names). */
export const uniqueTags = (tags: string[]): string[] => [...new Set(tags)];

/** The names every `timezone` field lists in the document (domain/time-zones.ts), and what it says of them. */
export { TIME_ZONE_NAMES } from '../../domain/time-zones';
export const TIME_ZONE_DESCRIPTION =
  'IANA time zone name, e.g. Europe/Paris; other names and letter cases the runtime resolves (aliases such as US/Eastern) are taken too';

/** A nullable timestamp as the API shows it. */
export const iso = (d: Date | null): string | null => d?.toISOString() ?? null;
