import type { z } from 'zod';
import { badRequest } from './errors';

// List endpoints answer 400 for an invalid enum value, as the spec's Errors table says ("malformed
// input checked by a handler"); unknown filters are refused by the route wrapper (api/route.ts).

/** The value when it is one of the allowed ones; 400 naming the allowed values otherwise. */
export function enumFilter<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`Invalid ${name} '${value}': expected one of ${allowed.join(', ')}`);
  return value as T;
}

/** A page size: the default when absent, capped at max regardless of input (as GET /accounts does). */
export const cappedLimit = (limit: number, max: number): number => Math.min(limit, max);
