import { describe, expect, it } from 'vitest';
import '../../api/openapi-registry'; // zod's .openapi(), which the schemas call
import { DATE_PATTERN, DateInput, TIMESTAMP_PATTERN, TimestampInput } from '../../api/schemas/dates';
import { fromZodError } from '../../api/errors';
import { FIRST_YEAR, LAST_YEAR } from '../../domain/timestamps';

// The document states each date helper as one pattern; the server checks a shape, the calendar and the years.
// They must take exactly the same strings, or a fuzzer reading the document sends dates the server refuses.
const timestamp = new RegExp(TIMESTAMP_PATTERN);
const date = new RegExp(DATE_PATTERN);
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const YEARS = [0, 1, 4, 21, 100, 400, 1600, 1896, 1899, 1900, 1904, 1999, 2000, 2023, 2024, 2100, 2400, 6032, 9000, 9996, 9998, 9999];

describe('the documented date and timestamp patterns', () => {
  it('take exactly the days the server takes: the calendar, leap years, years 1900 to 9999', () => {
    const differ: string[] = [];
    for (const year of YEARS) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
          if (timestamp.test(value) !== TimestampInput.safeParse(value).success) differ.push(`timestamp ${value}`);
          if (date.test(value) !== DateInput.safeParse(value).success) differ.push(`date ${value}`);
          const inYears = year >= FIRST_YEAR && year <= LAST_YEAR;
          if (date.test(value) && !inYears) differ.push(`out of the years ${value}`);
        }
      }
    }
    expect(differ).toEqual([]);
    expect(DateInput.safeParse('2024-02-29').success).toBe(true);
    expect(DateInput.safeParse('1900-02-29').success).toBe(false);
  });

  it('take the same times and offsets as the server, and no instant past 9999', () => {
    for (const value of [
      '2030-01-01T10:00',
      '2030-01-01T10:00:00',
      '2030-01-01T10:00:00.123456789Z',
      '2030-01-01T10:00+05:30',
      '2030-01-01T10:00:00-0800',
      '1900-01-01T00:00:00Z',
      '1900-01-01T00:00+14:00',
      '9999-12-31T23:59:59.999999999Z',
      '9999-12-31T23:59+14:00',
      '9999-12-30T23:59-12:00',
    ]) {
      expect(timestamp.test(value), value).toBe(true);
      const parsed = TimestampInput.safeParse(value);
      expect(parsed.success, value).toBe(true);
      expect(parsed.data! <= '9999-12-31T23:59:59.999Z', value).toBe(true);
    }
    for (const value of [
      '2030-01-01T24:00',
      '2030-01-01T10',
      '2030-01-01 10:00',
      '2030-06-31T10:00Z',
      '2023-02-29',
      '2030-01-01T10:00+24:00',
      '1899-12-31T23:59:59.999Z',
      '0021-05-24T22:52',
      '9999-12-31T23:59-00:01',
      '9999-12-31T00:00-01:00',
      '１９９９-01-01',
    ]) {
      expect(timestamp.test(value), value).toBe(false);
      expect(TimestampInput.safeParse(value).success, value).toBe(false);
    }
  });

  it('answers a value out of the years as pydantic answers a bound, and a malformed one as a parsing error', () => {
    const issues = (schema: typeof DateInput | typeof TimestampInput, value: string) => {
      const result = schema.safeParse(value);
      return fromZodError(result.error!, 'body', { at: value }).issues.map(({ type, msg, ctx }) => ({ type, msg, ctx }));
    };
    expect(issues(TimestampInput, '0021-05-24T22:52')).toEqual([
      { type: 'greater_than_equal', msg: 'Input should be on or after 1900-01-01', ctx: { ge: '1900-01-01' } },
    ]);
    expect(issues(TimestampInput, '9999-12-31T23:00-02:00')).toEqual([
      { type: 'less_than_equal', msg: 'Input should be on or before 9999-12-31T23:59:59.999Z', ctx: { le: '9999-12-31T23:59:59.999Z' } },
    ]);
    expect(issues(DateInput, '1899-12-31')[0]).toMatchObject({ type: 'greater_than_equal' });
    expect(issues(TimestampInput, 'soon')[0]).toMatchObject({ type: 'datetime_parsing' });
    expect(issues(DateInput, '2024-1-1')[0]).toMatchObject({ type: 'date_parsing' });
    expect(issues(DateInput, '2023-02-29')[0]).toMatchObject({ type: 'date_parsing' });
  });
});
