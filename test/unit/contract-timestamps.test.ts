import { describe, expect, it } from 'vitest';
import '../../api/openapi-registry'; // zod's .openapi(), which the schemas call
import { ISO_8601_CALENDAR, TimestampInput } from '../../api/schemas/common';

// The document states TimestampInput as one pattern; the server checks a pattern and the calendar.
// They must take exactly the same strings, or a fuzzer reading the document sends dates the server refuses.
const pattern = new RegExp(ISO_8601_CALENDAR);
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

describe('the documented timestamp pattern', () => {
  it('takes exactly the dates the server takes, leap years included', () => {
    const differ: string[] = [];
    for (const year of [0, 1, 4, 100, 400, 1900, 1999, 2000, 2023, 2024, 2100, 2400, 6032, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
          if (pattern.test(value) !== TimestampInput.safeParse(value).success) differ.push(value);
        }
      }
    }
    expect(differ).toEqual([]);
  });

  it('takes the same times and offsets as the server', () => {
    for (const value of [
      '2030-01-01T10:00',
      '2030-01-01T10:00:00',
      '2030-01-01T10:00:00.123456789Z',
      '2030-01-01T10:00+05:30',
      '2030-01-01T10:00:00-0800',
    ]) {
      expect(pattern.test(value), value).toBe(true);
      expect(TimestampInput.safeParse(value).success, value).toBe(true);
    }
    for (const value of [
      '2030-01-01T24:00',
      '2030-01-01T10',
      '2030-01-01 10:00',
      '2030-06-31T10:00Z',
      '2023-02-29',
      '2030-01-01T10:00+24:00',
    ]) {
      expect(pattern.test(value), value).toBe(false);
      expect(TimestampInput.safeParse(value).success, value).toBe(false);
    }
  });
});
