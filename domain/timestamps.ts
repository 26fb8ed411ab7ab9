// The instants and calendar days the service takes and shows. Pure: the API's date helpers
// (api/schemas/dates.ts), the database reader (db/kit/timestamps.ts) and providers' callbacks share them.

/**
 * The years a date or timestamp sent to the API may name, as written: four-digit ISO 8601 years that
 * Postgres stores and every client parses and renders (a year before 1900 is a typing slip more often
 * than a date a CRM, a campaign or a credential means).
 */
export const FIRST_YEAR = 1900;
export const LAST_YEAR = 9999;
/** The bounds as the 422 answer and the document state them. */
export const FIRST_DAY = '1900-01-01';
export const LAST_DAY = '9999-12-31';
export const LAST_INSTANT = '9999-12-31T23:59:59.999Z';

/**
 * What the service can show: instants whose ISO 8601 form has a four-digit year (0001 to 9999); past them
 * `toISOString` writes `+010000-…` or `-000001-…`, which no date-time parser of a client takes.
 */
export const FIRST_RENDERABLE_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const LAST_RENDERABLE_MS = Date.parse(LAST_INSTANT);

/** True when the instant (ms since the epoch) falls in the years 1900 to 9999, in UTC. */
export function inAcceptedYears(ms: number): boolean {
  return Number.isFinite(ms) && ms >= Date.parse(`${FIRST_DAY}T00:00:00.000Z`) && ms <= LAST_RENDERABLE_MS;
}

/**
 * An instant the service can show: itself when renderable, else the nearest renderable one (a value stored
 * before the API bounded its input, or `±infinity`, keeps its order against every other instant).
 */
export function renderableMs(ms: number): number {
  if (Number.isNaN(ms)) return LAST_RENDERABLE_MS;
  return Math.min(Math.max(ms, FIRST_RENDERABLE_MS), LAST_RENDERABLE_MS);
}

/**
 * A provider's timestamp text (a dialer's call start or end) as ISO 8601, or undefined when it is not a
 * date or falls outside the years the service takes: such a value is dropped like a missing one.
 */
export function providerInstant(text: string | null | undefined): string | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return inAcceptedYears(ms) ? new Date(ms).toISOString() : undefined;
}
