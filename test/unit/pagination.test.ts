import { describe, expect, it } from 'vitest';
import { CreatedCursor, decodeCursor, encodeCursor } from '../../services/pagination';
import { DomainError } from '../../domain/errors';

describe('cursors', () => {
  it('round-trip the last row of a page', () => {
    const key = { t: '2026-11-21 05:47:56.145123+00', id: '01a1fca5-a371-745b-b7ee-e3c82b739e7d' };
    expect(decodeCursor(encodeCursor(key), CreatedCursor)).toEqual(key);
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['a forged time', encodeCursor({ t: 'x', id: '01a1fca5-a371-745b-b7ee-e3c82b739e7d' })],
    ['a forged id', encodeCursor({ t: '2026-11-21 05:47:56+00', id: 'y' })],
  ])('refuse %s with 400 Invalid cursor', (_name, cursor) => {
    let error: unknown;
    try {
      decodeCursor(cursor, CreatedCursor);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: 'invalid', detail: 'Invalid cursor' });
  });
});
