/**
 * The db kit's uniqueness (docs/decisions/platform.md, "The db kit"): a write that breaks a unique
 * constraint is the domain's conflict (409), with the message of the area, in one way everywhere.
 */
import { conflict } from '../../domain/errors';
import { PG, isPgError } from '../pg-errors';

/** True when `error` is Postgres's unique violation (23505). */
export const isUniqueViolation = (error: unknown): boolean => isPgError(error, PG.UNIQUE_VIOLATION);

/** Throws the domain's conflict(message) when `error` is a unique violation; returns otherwise, for the caller's next rule. */
export function conflictOnUnique(error: unknown, message: string): void {
  if (isUniqueViolation(error)) throw conflict(message);
}

/** The query's result; a unique violation is thrown as the domain's conflict(message), any other error as it came. */
export async function onUnique<T>(query: PromiseLike<T>, message: string): Promise<T> {
  try {
    return await query;
  } catch (error) {
    conflictOnUnique(error, message);
    throw error;
  }
}
