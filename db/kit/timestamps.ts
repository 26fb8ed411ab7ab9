import { FIRST_RENDERABLE_MS, LAST_RENDERABLE_MS, renderableMs } from '../../domain/timestamps';

/**
 * Postgres's text of a `date`, `timestamp` or `timestamptz` (DateStyle ISO) read into a Date the service can
 * always show. postgres.js hands the text to `new Date(text)`, which V8 reads wrong or not at all outside
 * plain modern values: years below 100 as 19xx or 20xx (`0021-05-24 22:52:00+00` is Invalid Date, `0099-…`
 * is 1999), offsets with seconds (`+00:09:21`, a zone's local mean time before 1900), years after 9999, BC
 * and `infinity`. An Invalid Date then throws on `toISOString` and a read answers 500. Here every form is
 * read exactly, and an instant outside the years 0001 to 9999 (stored before the API bounded what it takes,
 * or written by hand) is shown as the nearest one inside (domain/timestamps.ts).
 */
const PG_DATE_TIME = /^(\d{4,})-(\d\d)-(\d\d)(?: (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?$/;

/** How a value without an offset is read: a `date` as midnight UTC, a `timestamp` in the process's zone (as V8 does). */
export type Zoneless = 'utc' | 'local';

export function parsePostgresDateTime(text: string, zoneless: Zoneless): Date {
  if (text === 'infinity') return new Date(LAST_RENDERABLE_MS);
  if (text === '-infinity') return new Date(FIRST_RENDERABLE_MS);
  const m = PG_DATE_TIME.exec(text);
  if (!m) return new Date(renderableMs(Date.parse(text)));
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', sign, oh, om = '0', os = '0', bc] = m;
  // Year 1 BC is year 0 of the proleptic Gregorian calendar JavaScript counts in.
  const year = bc ? 1 - Number(y) : Number(y);
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  const date = new Date(0);
  let time: number;
  if (sign || zoneless === 'utc') {
    // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
    date.setUTCFullYear(year, Number(mo) - 1, Number(d));
    date.setUTCHours(Number(h), Number(mi), Number(s), ms);
    const offsetMs = sign ? (sign === '-' ? -1 : 1) * ((Number(oh) * 60 + Number(om)) * 60 + Number(os)) * 1000 : 0;
    time = date.getTime() - offsetMs;
  } else {
    date.setFullYear(year, Number(mo) - 1, Number(d));
    date.setHours(Number(h), Number(mi), Number(s), ms);
    time = date.getTime();
  }
  // Past JavaScript's range (Postgres goes to year 294276): the side the year is on.
  if (Number.isNaN(time)) return new Date(year > 0 ? LAST_RENDERABLE_MS : FIRST_RENDERABLE_MS);
  return new Date(renderableMs(time));
}

/** postgres.js's own serializer of the three types, kept as it is: only reading changes. */
const serialize = (value: Date | string | number) => (value instanceof Date ? value : new Date(value)).toISOString();

/** postgres.js `types` entries that read the three types with it (db/client.ts); arrays of them follow. */
export const dateTimeTypes = {
  pgDate: { to: 1082, from: [1082], serialize, parse: (text: string) => parsePostgresDateTime(text, 'utc') },
  pgTimestamp: { to: 1114, from: [1114], serialize, parse: (text: string) => parsePostgresDateTime(text, 'local') },
  pgTimestamptz: { to: 1184, from: [1184], serialize, parse: (text: string) => parsePostgresDateTime(text, 'utc') },
};
