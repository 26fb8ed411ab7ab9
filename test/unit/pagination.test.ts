import { describe, expect, it } from 'vitest';
import '../../api/openapi-registry'; // zod's .openapi()
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { cursorQuery } from '../../api/pagination';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';
import { CreatedCursor, KeyCursor, NameCursor, VersionCursor, decodeCursor, encodeCursor } from '../../services/pagination';
import { DomainError } from '../../domain/errors';

describe('cursors', () => {
  it('round-trip the last row of a page: the time as Postgres prints it comes back as ISO UTC, microseconds kept', () => {
    const id = '01a1fca5-a371-745b-b7ee-e3c82b739e7d';
    const cursor = encodeCursor({ t: '2026-11-21 05:47:56.145123+00', id });
    expect(cursor).toBe(`1795240076145123.${id}`);
    expect(decodeCursor(cursor, CreatedCursor)).toEqual({ t: '2026-11-21T05:47:56.145123Z', id });
    // Other offsets and precisions name the same instant.
    expect(decodeCursor(encodeCursor({ t: '2026-11-21 11:17:56.145123+05:30', id }), CreatedCursor)?.t).toBe('2026-11-21T05:47:56.145123Z');
    expect(decodeCursor(encodeCursor({ t: '2026-11-21T05:47:56Z', id }), CreatedCursor)?.t).toBe('2026-11-21T05:47:56.000000Z');
    expect(decodeCursor(encodeCursor({ v: 42 }), VersionCursor)).toEqual({ v: 42 });
    expect(decodeCursor(encodeCursor({ n: '+15550100' }), NameCursor)).toEqual({ n: '+15550100' });
    expect(decodeCursor(encodeCursor({ k: 'ключ/1' }), KeyCursor)).toEqual({ k: 'ключ/1' });
  });

  it('decode every string their pattern admits, so the document states exactly which cursors are taken', () => {
    // The edges of each pattern (the fuzzer generates the rest from the document).
    const uuid = 'ffffffff-0000-0000-0000-000000000000';
    for (const cursor of [`0.${uuid}`, `${'9'.repeat(16)}.${uuid}`]) {
      expect(cursor).toMatch(CreatedCursor.pattern);
      expect(Number.isNaN(Date.parse(decodeCursor(cursor, CreatedCursor)!.t))).toBe(false);
    }
    expect(decodeCursor(`${'9'.repeat(16)}.${uuid}`, CreatedCursor)?.t).toBe('2286-11-20T17:46:39.999999Z');
    for (const cursor of ['1', '999999999']) expect(decodeCursor(cursor, VersionCursor)!.v).toBeLessThanOrEqual(2_147_483_647);
    // Bytes that are not UTF-8, and U+0000, which Postgres text cannot hold: still a key, without U+0000.
    for (const cursor of ['_', '__8', 'AAAA', Buffer.from([0xff, 0, 0xc3]).toString('base64url'), '-'.repeat(400)]) {
      expect(cursor).toMatch(KeyCursor.pattern);
      expect(decodeCursor(cursor, KeyCursor)!.k).not.toContain('\u0000');
      expect(decodeCursor(cursor, NameCursor)!.n).not.toContain('\u0000');
    }
  });

  it('are documented with their pattern on every list, an empty value meaning the first page', () => {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data' });
    const { document } = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps);
    const cursors = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { parameters?: { in: string; name: string; schema: { pattern?: string } }[] }>).flatMap(
        ([method, op]) =>
          (op.parameters ?? [])
            .filter((p) => p.in === 'query' && p.name === 'cursor')
            .map((p) => ({ operation: `${method.toUpperCase()} ${path}`, pattern: p.schema.pattern })),
      ),
    );
    expect(cursors.length).toBeGreaterThan(10);
    // cursorQuery's form (empty allowed: the first page), or a codec's own pattern: either way every match decodes.
    const codecs = [CreatedCursor, VersionCursor, NameCursor, KeyCursor];
    const patterns = new Set([...codecs.map((c) => `^(?:${c.pattern.source.slice(1, -1)})?$`), ...codecs.map((c) => c.pattern.source)]);
    expect(cursors.filter((c) => !patterns.has(c.pattern!))).toEqual([]);
    expect(new RegExp(cursorQuery(CreatedCursor).meta()?.pattern as string).test('')).toBe(true);
    expect(decodeCursor('', CreatedCursor)).toBeUndefined();
  });

  it.each([
    ['not of the format', 'not-a-cursor'],
    ['an id that is no uuid', '1795240076145123.y'],
    ['a time past 16 digits', `12345678901234567.01a1fca5-a371-745b-b7ee-e3c82b739e7d`],
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
