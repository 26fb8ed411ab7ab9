import { z } from 'zod';
import { trimmedText } from '../../domain/trimmed-text';
import { TIMESTAMP_MESSAGE } from '../errors';

export const Uuid = z.uuid();
export const Timestamp = z.iso.datetime({ offset: true });

const TIME = '(?:T([01]\\d|2[0-3]):([0-5]\\d)(?::([0-5]\\d)(?:\\.\\d{1,9})?)?(Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)?)?';
const ISO_8601 = new RegExp(`^(\\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])${TIME}$`);
/**
 * The same set as ISO_8601 and the calendar check below, as one pattern for the document: days past a
 * month's end are not dates, and February 29 only in leap years (every 4th, not every 100th, every 400th).
 */
const CALENDAR_DATE =
  '(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))' +
  '|(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)';
export const ISO_8601_CALENDAR = `^${CALENDAR_DATE}${TIME}$`;
/**
 * A timestamp the API takes: ISO 8601 with or without an offset, or a date alone; without an offset
 * it is UTC (`2030-01-01T10:00:00` and `2030-01-01` are 10:00 and midnight UTC). Handed on normalized
 * (`2030-01-01T10:00:00.000Z`).
 */
export const TimestampInput = z
  .string()
  .max(64)
  .regex(ISO_8601, TIMESTAMP_MESSAGE)
  .refine((value) => {
    const match = ISO_8601.exec(value);
    if (!match) return true; // the pattern already failed
    const [, y, m, d] = match;
    const date = new Date(0);
    date.setUTCFullYear(Number(y), Number(m) - 1, Number(d));
    return date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
  }, 'Input should be a valid date')
  .transform((value) => {
    const utc = value.length === 10 ? `${value}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
    return new Date(utc.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')).toISOString();
  })
  .openapi({
    description: 'ISO 8601 date-time or date; without an offset it is UTC',
    example: '2030-01-01T10:00:00Z',
    pattern: ISO_8601_CALENDAR,
  });
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
