import { describe, expect, it } from 'vitest';
import { parsePostgresDateTime } from '../../db/kit/timestamps';

// Postgres's text of dates and timestamps (DateStyle ISO), read exactly where `new Date(text)` is wrong or
// Invalid, and held to the instants a read can render (years 0001 to 9999).
const iso = (text: string, zoneless: 'utc' | 'local' = 'utc') => parsePostgresDateTime(text, zoneless).toISOString();

describe('parsePostgresDateTime', () => {
  it('reads what V8 reads, the same', () => {
    for (const text of [
      '2024-05-24 22:52:00+00',
      '2024-05-24 22:52:00.123456+02',
      '2024-05-24 22:52:00+05:30',
      '1999-12-31 23:59:59.999-08',
    ])
      expect(iso(text), text).toBe(new Date(text).toISOString());
    expect(iso('2024-05-24')).toBe('2024-05-24T00:00:00.000Z');
    expect(iso('2024-05-24 22:52:00', 'local')).toBe(new Date('2024-05-24 22:52:00').toISOString());
  });

  it('reads years below 100 as written, where V8 takes them for 19xx or 20xx or fails', () => {
    expect(iso('0021-05-24 22:52:00+00')).toBe('0021-05-24T22:52:00.000Z');
    expect(iso('0099-05-24 22:52:00+00')).toBe('0099-05-24T22:52:00.000Z');
    expect(iso('0012-05-24')).toBe('0012-05-24T00:00:00.000Z');
  });

  it('reads offsets with seconds (a zone before its standard time)', () => {
    expect(iso('1900-01-01 00:09:21+00:09:21')).toBe('1900-01-01T00:00:00.000Z');
    expect(iso('1883-11-18 12:03:58-04:56:02')).toBe('1883-11-18T17:00:00.000Z');
  });

  it('shows what no four-digit year renders as the nearest renderable instant', () => {
    expect(iso('0001-12-31 23:59:59+00 BC')).toBe('0001-01-01T00:00:00.000Z');
    expect(iso('0044-03-15 BC')).toBe('0001-01-01T00:00:00.000Z');
    expect(iso('10000-01-01 00:59:00+00')).toBe('9999-12-31T23:59:59.999Z');
    expect(iso('294276-12-31 23:59:59.999999+00')).toBe('9999-12-31T23:59:59.999Z');
    expect(iso('4713-11-24 BC')).toBe('0001-01-01T00:00:00.000Z');
    expect(iso('infinity')).toBe('9999-12-31T23:59:59.999Z');
    expect(iso('-infinity')).toBe('0001-01-01T00:00:00.000Z');
  });
});
