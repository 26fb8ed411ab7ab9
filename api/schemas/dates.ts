import { z } from 'zod';
import '../openapi-registry'; // zod's .openapi(), which these schemas call when loaded, whichever module loads them first
import { FIRST_DAY, FIRST_YEAR, LAST_DAY, LAST_INSTANT, LAST_YEAR } from '../../domain/timestamps';
import { DATE_MESSAGE, TIMESTAMP_MESSAGE } from '../errors';

// Every date and timestamp a request body or query takes is one of the two schemas below: ISO 8601 with a
// four-digit year from 1900 to 9999 (domain/timestamps.ts), checked here and stated in the document as one
// pattern each, so what the API takes is what Postgres stores and every read renders. `[0-9]`, not `\d`: a
// generator reading the pattern in Python would take `\d` for any Unicode digit.

const D = '[0-9]';
const YEAR = `(?:19${D}{2}|[2-9]${D}{3})`; // FIRST_YEAR to LAST_YEAR
const YEAR_BEFORE_LAST = `(?:19${D}{2}|[2-8]${D}{3}|9[0-8]${D}{2}|99[0-8]${D}|999[0-8])`;
/** Leap years from 1900 on: every 4th, not every 100th (1900), every 400th (2000, 2400…). */
const LEAP_YEAR = `(?:(?:19|[2-9]${D})(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[3579][26])00)`;
/** Month and day of a common year, December 31 aside. */
const MONTH_DAY = `(?:(?:0[13578]|10)-(?:0[1-9]|[12]${D}|3[01])|(?:0[469]|1[12])-(?:0[1-9]|[12]${D}|30)|02-(?:0[1-9]|1${D}|2[0-8]))`;
/** Every day of the years, 9999-12-31 aside. */
const DAY_BEFORE_LAST = `(?:${YEAR}-${MONTH_DAY}|${YEAR_BEFORE_LAST}-12-31|${LEAP_YEAR}-02-29)`;
const CLOCK = `T(?:[01]${D}|2[0-3]):[0-5]${D}(?::[0-5]${D}(?:\\.${D}{1,9})?)?`;
const OFFSET = `(?:Z|[+-](?:[01]${D}|2[0-3]):?[0-5]${D})`;
/** On the last day an offset behind UTC would name an instant in the year 10000. */
const OFFSET_NOT_BEHIND = `(?:Z|\\+(?:[01]${D}|2[0-3]):?[0-5]${D})`;

/** A calendar day of the years 1900 to 9999 (months' lengths, February 29 in leap years only). */
export const DATE_PATTERN = `^(?:${DAY_BEFORE_LAST}|9999-12-31)$`;
/** A date-time with or without an offset, or a day alone, in the years 1900 to 9999. */
export const TIMESTAMP_PATTERN = `^(?:${DAY_BEFORE_LAST}(?:${CLOCK}${OFFSET}?)?|9999-12-31(?:${CLOCK}${OFFSET_NOT_BEHIND}?)?)$`;

/** The shapes, any four-digit year: failing them is a parsing error, passing them but not the patterns is out of range. */
const TIMESTAMP_SHAPE =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/;
const DATE_SHAPE = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const TIMESTAMP_RANGE = new RegExp(TIMESTAMP_PATTERN);
const DATE_RANGE = new RegExp(DATE_PATTERN);

const TIMESTAMP_RANGE_TEXT = `years ${FIRST_YEAR} to ${LAST_YEAR}: ${FIRST_DAY} to ${LAST_INSTANT}, and on ${LAST_DAY} no offset behind UTC`;
const DATE_RANGE_TEXT = `years ${FIRST_YEAR} to ${LAST_YEAR}: ${FIRST_DAY} to ${LAST_DAY}`;
const sentence = (what: string | undefined, rule: string) => (what ? `${what.replace(/\.$/, '')}. ${rule}` : rule);

/** Whether year-month-day names a day of the calendar (no June 31, February 29 in leap years only). */
function isCalendarDay(y: string, m: string, d: string): boolean {
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(m) - 1, Number(d));
  return date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

/**
 * The second check of a well-shaped value: a day of the calendar, then inside the years. Out of range is
 * pydantic's bound answer (`greater_than_equal` / `less_than_equal`, the bound in `ctx`), as for a number.
 */
function checkDayAndRange(shape: RegExp, range: RegExp) {
  return (value: string, ctx: z.core.$RefinementCtx<string>) => {
    const match = shape.exec(value);
    if (!match) return; // the shape's own issue is already there
    const [, y, m, d] = match as unknown as [string, string, string, string];
    if (!isCalendarDay(y, m, d)) {
      ctx.addIssue({ code: 'custom', input: value, message: 'Input should be a valid date', params: { type: 'date_parsing' } });
    } else if (!range.test(value)) {
      const low = Number(y) < FIRST_YEAR;
      ctx.addIssue({
        code: 'custom',
        input: value,
        message: low ? `Input should be on or after ${FIRST_DAY}` : `Input should be on or before ${LAST_INSTANT}`,
        params: low ? { type: 'greater_than_equal', ctx: { ge: FIRST_DAY } } : { type: 'less_than_equal', ctx: { le: LAST_INSTANT } },
      });
    }
  };
}

/**
 * A timestamp the API takes, with what the field means (`description`): ISO 8601 with or without an offset,
 * or a date alone; without an offset it is UTC (`2030-01-01T10:00:00` and `2030-01-01` are 10:00 and midnight
 * UTC). Handed on normalized (`2030-01-01T10:00:00.000Z`). The range is stated after the meaning, so a
 * field describes itself here rather than with `.describe()`, which would replace it.
 */
export const timestampInput = (description?: string) =>
  z
    .string()
    .max(64)
    .regex(TIMESTAMP_SHAPE, TIMESTAMP_MESSAGE)
    .superRefine(checkDayAndRange(TIMESTAMP_SHAPE, TIMESTAMP_RANGE))
    .transform((value) => {
      const utc = value.length === 10 ? `${value}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`;
      return new Date(utc.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')).toISOString();
    })
    .openapi({
      description: sentence(description, `ISO 8601 date-time or date; without an offset it is UTC; ${TIMESTAMP_RANGE_TEXT}`),
      example: '2030-01-01T10:00:00Z',
      pattern: TIMESTAMP_PATTERN,
    });

/** A calendar day the API takes, `YYYY-MM-DD`, kept as written; `description` says what the field means. */
export const dateInput = (description?: string) =>
  z
    .string()
    .regex(DATE_SHAPE, DATE_MESSAGE)
    .superRefine(checkDayAndRange(DATE_SHAPE, DATE_RANGE))
    .openapi({
      format: 'date',
      description: sentence(description, `Calendar day, YYYY-MM-DD; ${DATE_RANGE_TEXT}`),
      example: '2030-01-01',
      pattern: DATE_PATTERN,
    });

/** A timestamp field with nothing more to say of itself. */
export const TimestampInput = timestampInput();
/** A calendar day with nothing more to say of itself. */
export const DateInput = dateInput();
