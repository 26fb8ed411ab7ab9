import { invalid, unprocessable, type FieldIssue } from '../../domain/errors';

// Text the service could not store as sent is refused where the request is read, before any query:
// a lone UTF-16 surrogate (only a JSON escape such as \ud800 can carry one; UTF-8 bytes cannot) is not
// Unicode and would be stored as U+FFFD, and U+0000 is refused by Postgres in text and jsonb.

/** A JSON escape of a surrogate, or of U+0000: without one in the text, the parsed body holds neither. */
const SUSPECT_ESCAPE = /\\u(?:[dD][89a-fA-F]|0000)/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_ISSUES = 20;
const NUL_MESSAGE = 'Value error, the character U+0000 (NUL) is not accepted';

type Loc = (string | number)[];

const hex = (text: string) => `\\u${text.charCodeAt(text.search(LONE_SURROGATE)).toString(16)}`;

/**
 * Refuses a parsed JSON body (`text` as read) that holds a lone surrogate (400, naming where) or U+0000
 * (422, one issue per field, at most 20). One pass over the value, and only when the text holds an
 * escape that could produce either; depth is bounded by the reader's JSON_MAX_DEPTH check before.
 */
export function checkBodyText(value: unknown, text: string): void {
  if (!SUSPECT_ESCAPE.test(text)) return;
  const nul: FieldIssue[] = [];
  const visit = (v: unknown, loc: Loc): void => {
    if (nul.length >= MAX_ISSUES) return; // enough to answer; a lone surrogate further on is refused with them
    if (typeof v === 'string') checkString(v, loc, nul);
    else if (Array.isArray(v)) v.forEach((item, i) => void visit(item, [...loc, i]));
    else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        checkString(key, [...loc, key], nul, 'property name');
        visit(item, [...loc, key]);
      }
    }
  };
  visit(value, ['body']);
  if (nul.length > 0) throw unprocessable(nul);
}

/**
 * Refuses decoded query values and path parameters holding U+0000 (422 naming the parameter), and a
 * query string whose percent-escapes are not UTF-8 (400; they would otherwise read as U+FFFD).
 */
export function checkParameterText(querystring: string, query: Record<string, unknown>, params: Record<string, unknown> = {}): void {
  if (querystring.includes('%') && !percentEscapesAreUtf8(querystring)) throw invalid('Query string is not valid UTF-8');
  const nul: FieldIssue[] = [];
  for (const [location, values] of [
    ['query', query],
    ['path', params],
  ] as const) {
    for (const [name, v] of Object.entries(values)) {
      for (const item of [v].flat()) if (typeof item === 'string') checkString(item, [location, name], nul);
    }
  }
  if (nul.length > 0) throw unprocessable(nul.slice(0, MAX_ISSUES));
}

function checkString(text: string, loc: Loc, nul: FieldIssue[], what = 'value'): void {
  if (LONE_SURROGATE.test(text)) {
    const source = loc[0] === 'body' ? 'Request body' : 'Request';
    throw invalid(`${source} is not valid Unicode: a lone UTF-16 surrogate (${hex(text)}) in the ${what} at ${loc.join('.')}`);
  }
  if (text.includes('\u0000') && nul.length < MAX_ISSUES) nul.push({ loc, msg: `${NUL_MESSAGE} (in the ${what})` });
}

function percentEscapesAreUtf8(querystring: string): boolean {
  // A `%` not followed by two hex digits is a literal `%` (as Node's query parser reads it), not an escape.
  const escapedOnly = querystring.replace(/\+/g, ' ').replace(/%(?![0-9a-fA-F]{2})/g, '%25');
  try {
    decodeURIComponent(escapedOnly);
    return true;
  } catch {
    return false;
  }
}
