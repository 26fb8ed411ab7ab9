import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { MAX_REQUEST_HEADER_BYTES } from '../../api/request-limits';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';

// A request the document allows must reach its route: the longest request line any operation's path and
// query parameters permit, percent-encoded, fits the server's header limit with room for the other headers
// (a session JWT, content type...), so no schema-valid request is refused 431.

type Schema = { [key: string]: unknown; $ref?: string };
type Parameter = { in: string; name: string; schema: Schema };
type Operation = { parameters?: Parameter[] };

const ROOM_FOR_OTHER_HEADERS = 8 * 1024;
// Public URLs where any other value is the same refusal, so nothing bounds them: signed object URLs of the
// local store (a wrong parameter is the same 403) and card images (any other path is the same 404).
const UNBOUNDED_BY_DESIGN = new Set(['/storage/objects/{key}', '/media/cards/{card_id}/{file}']);

const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data' });
const { document } = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps);
const components = (document.components?.schemas ?? {}) as Record<string, Schema>;
const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(components[schema.$ref.split('/').pop()!]!) : schema);

/** Whether every string a pattern admits is ASCII (no `.`, negated class or property escape that lets others in). */
function asciiPattern(pattern: string): boolean {
  const bare = pattern.replace(/\\[\\.[\]^$*+?(){}|/-]/g, '');
  return !/(^|[^\\])\.|\[\^|\\[pPuxSWD]/.test(bare) && /^[\x20-\x7E]*$/.test(bare);
}

/**
 * The most characters a string matching the pattern has (Infinity when unbounded): literals, escapes and
 * classes count one, groups their longest branch, quantifiers their upper bound; anchors and lookarounds none.
 */
export function longestMatch(pattern: string): number {
  let i = 0;
  const alternatives = (): number => {
    let best = sequence();
    while (pattern[i] === '|') {
      i++;
      best = Math.max(best, sequence());
    }
    return best;
  };
  const sequence = (): number => {
    let total = 0;
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      let atom: number;
      const c = pattern[i]!;
      if (c === '^' || c === '$') {
        i++;
        continue;
      } else if (c === '(') {
        const lookaround = /^\(\?<?[=!]/.test(pattern.slice(i));
        i += pattern.startsWith('(?:', i) ? 3 : lookaround ? (pattern[i + 2] === '<' ? 4 : 3) : 1;
        atom = alternatives();
        i++; // ')'
        if (lookaround) atom = 0;
      } else if (c === '[') {
        i = pattern.indexOf(']', pattern[i + 1] === ']' ? i + 2 : i + 1);
        while (pattern[i - 1] === '\\') i = pattern.indexOf(']', i + 1);
        i++;
        atom = 1;
      } else {
        i += c === '\\' ? 2 : 1;
        atom = 1;
      }
      const quantifier = /^(?:\{(\d+)(?:(,)(\d*))?\}|[?*+])\??/.exec(pattern.slice(i));
      if (quantifier) {
        i += quantifier[0].length;
        const q = quantifier[0][0];
        const most =
          q === '?'
            ? 1
            : q === '*' || q === '+'
              ? Infinity
              : quantifier[2]
                ? quantifier[3]
                  ? Number(quantifier[3])
                  : Infinity
                : Number(quantifier[1]);
        atom *= most;
      }
      total += atom;
    }
    return total;
  };
  return alternatives();
}

/** Most bytes a value of the schema takes in a URL, percent-encoded; undefined when unbounded. */
function longest(raw: Schema): number | undefined {
  const schema = resolve(raw);
  if (Array.isArray(schema.enum)) return Math.max(...schema.enum.map((value) => encodeURIComponent(String(value)).length));
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const sizes = (schema[key] as Schema[]).map(longest);
      return sizes.includes(undefined) ? undefined : Math.max(...(sizes as number[]));
    }
  }
  const type = [schema.type].flat().find((t) => t !== 'null');
  if (type === 'integer' || type === 'number') return 25;
  if (type === 'boolean') return 5;
  if (type === 'string') {
    if (schema.format === 'uuid') return 36;
    if (schema.format === 'date') return 10;
    const pattern = typeof schema.pattern === 'string' ? schema.pattern : undefined;
    const length = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : Infinity, pattern ? longestMatch(pattern) : Infinity);
    if (length === Infinity) return undefined;
    // A code point is at most four UTF-8 bytes, each %XX; an ASCII one at most one %XX.
    return length * (pattern && asciiPattern(pattern) ? 3 : 12);
  }
  return undefined;
}

describe('request size', () => {
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>)
      .filter(([method]) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({
        path,
        method,
        parameters: (operation.parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path'),
      })),
  );

  it('bounds every path and query parameter, except the signed object URLs', () => {
    const unbounded = operations.flatMap(({ path, method, parameters }) =>
      parameters.filter((p) => longest(p.schema) === undefined).map((p) => `${method.toUpperCase()} ${path} ${p.in} ${p.name}`),
    );
    expect(unbounded.filter((line) => ![...UNBOUNDED_BY_DESIGN].some((path) => line.includes(` ${path} `)))).toEqual([]);
  });

  it("fits the longest request line of every operation in the server's header limit", () => {
    const tooLong = operations
      .filter(({ path }) => !UNBOUNDED_BY_DESIGN.has(path))
      .map(({ path, method, parameters }) => {
        let bytes = `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '')}? HTTP/1.1\r\n`.length;
        for (const p of parameters) bytes += (longest(p.schema) ?? 0) + (p.in === 'query' ? p.name.length + 2 : 0);
        return { operation: `${method.toUpperCase()} ${path}`, bytes };
      })
      .filter(({ bytes }) => bytes > MAX_REQUEST_HEADER_BYTES - ROOM_FOR_OTHER_HEADERS);
    expect(tooLong).toEqual([]);
  });

  it("serves a request line past Node's default 16 KiB, and answers 431 past its own limit", async () => {
    const server = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps).app.listen(
      0,
      '127.0.0.1',
    );
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await fetch(`${base}/openapi.json?pad=${'x'.repeat(40_000)}`)).status).toBe(200);
      expect((await fetch(`${base}/openapi.json?pad=${'x'.repeat(MAX_REQUEST_HEADER_BYTES)}`)).status).toBe(431);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reads the longest match of a pattern', () => {
    expect(longestMatch('^(latest|[1-9]\\d{0,8})$')).toBe(9);
    expect(longestMatch('^(?:\\d{1,16}\\.[0-9a-f]{8})?$')).toBe(25);
    expect(longestMatch('^[a-z][a-z0-9_]{0,62}$')).toBe(63);
    expect(longestMatch('^[\\]a]{2}(?=x)$')).toBe(2);
    expect(longestMatch('^[A-Za-z0-9_-]+$')).toBe(Infinity);
    expect(longestMatch('^a{3,}$')).toBe(Infinity);
  });

  it('tells the ASCII-only patterns apart', () => {
    expect(asciiPattern('^[A-Za-z0-9_-]+$')).toBe(true);
    expect(asciiPattern('^\\d{4}-\\d{2}(?:\\.\\d{1,9})?$')).toBe(true);
    expect(asciiPattern('^[ -~]*$')).toBe(true);
    expect(asciiPattern('^[\\x20-\\x7E]*$')).toBe(false); // read conservatively: a \x escape is not parsed
    expect(asciiPattern('^a.b$')).toBe(false);
    expect(asciiPattern('^[^/]+$')).toBe(false);
  });
});
