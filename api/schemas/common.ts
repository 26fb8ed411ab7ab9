import { z } from 'zod';

export const Uuid = z.uuid();
export const Timestamp = z.iso.datetime({ offset: true });
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

export const IdParams = z.object({ id: Uuid });

/**
 * A page size: any integer from 1 up, one above `max` served as `max` however large it is (an integer
 * past 2^53 too: the spec caps "regardless of input" rather than refusing).
 */
export const cappedLimit = (fallback: number, max: number, description = `Page size, default ${fallback}; values above ${max} are served as ${max}`) =>
  z.coerce
    .number()
    .min(1)
    .refine(Number.isInteger, 'Input should be a valid integer')
    .default(fallback)
    .transform((n) => Math.min(n, max))
    .openapi({ type: 'integer', minimum: 1, default: fallback, description });

/** Tag names once each, in the order given (contacts, deals and accounts keep tags as plain names). */
export const uniqueTags = (tags: string[]): string[] => [...new Set(tags)];

/** A nullable timestamp as the API shows it. */
export const iso = (d: Date | null): string | null => d?.toISOString() ?? null;
