import type { z } from 'zod';
import { badRequest } from './errors';

// List endpoints answer 400 for an unknown filter or an invalid enum value, as the spec's Errors table
// says ("malformed input checked by a handler"); their query schemas are loose objects so the
// unknown names reach the handler instead of being stripped.

/** 400 `Unknown filter: x` when the query carries a parameter the schema does not declare. */
export function assertKnownFilters(query: Record<string, unknown>, schema: z.ZodObject): void {
  const unknown = Object.keys(query).filter((key) => !(key in schema.shape));
  if (unknown.length > 0) throw badRequest(`Unknown filter: ${unknown.join(', ')}`);
}

/** The value when it is one of the allowed ones; 400 naming the allowed values otherwise. */
export function enumFilter<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`Invalid ${name} '${value}': expected one of ${allowed.join(', ')}`);
  return value as T;
}

/** A page size: the default when absent, capped at max regardless of input (as GET /accounts does). */
export const cappedLimit = (limit: number, max: number): number => Math.min(limit, max);
