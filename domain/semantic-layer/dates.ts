import * as chrono from 'chrono-node';

/**
 * Periods in a question ("this month", "last quarter", "in 2025", "since March", "before June 5") as a
 * half-open range of dates [from, to). Years, quarters and rolling windows by rule; days and months by
 * chrono-node, moved to the most recent past occurrence when the question names no year (a CRM question
 * asks about what happened).
 */

export interface DateRange {
  /** Inclusive, YYYY-MM-DD. */
  from?: string;
  /** Exclusive, YYYY-MM-DD. */
  to?: string;
  /** The words that said it, to leave out of further matching. */
  text: string;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
const utc = (y: number, m: number, d = 1) => new Date(Date.UTC(y, m - 1, d));
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

interface Span {
  start: Date;
  end: Date;
  index: number;
  length: number;
}

const QUARTER_WORDS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, '1st': 1, '2nd': 2, '3rd': 3, '4th': 4 };

/** Periods found by rule, each with where it sits in the text. */
function ruledSpans(text: string, today: Date): Span[] {
  const spans: Span[] = [];
  const y = today.getUTCFullYear();
  const m = today.getUTCMonth() + 1;
  const q = Math.floor((m - 1) / 3) + 1;
  const quarter = (year: number, n: number) => ({
    start: utc(year, (n - 1) * 3 + 1),
    end: utc(n === 4 ? year + 1 : year, n === 4 ? 1 : n * 3 + 1),
  });
  const push = (match: RegExpExecArray, range: { start: Date; end: Date }) =>
    spans.push({ ...range, index: match.index, length: match[0].length });
  const rules: [RegExp, (match: RegExpExecArray) => { start: Date; end: Date } | null][] = [
    [
      /\b(this|current|last|previous|past|prior|next) quarter\b/g,
      (x) => {
        const shift = x[1] === 'next' ? 1 : ['this', 'current'].includes(x[1]!) ? 0 : -1;
        const n = q + shift;
        const year = n < 1 ? y - 1 : n > 4 ? y + 1 : y;
        return quarter(year, ((n + 3) % 4) + 1);
      },
    ],
    [/\bq([1-4])(?:\s+(?:of\s+)?((?:19|20)\d\d))?\b/g, (x) => quarter(x[2] ? Number(x[2]) : y, Number(x[1]))],
    [
      /\b(first|second|third|fourth|1st|2nd|3rd|4th) quarter(?: of)?(?: ((?:19|20)\d\d))?\b/g,
      (x) => quarter(x[2] ? Number(x[2]) : y, QUARTER_WORDS[x[1]!]!),
    ],
    [
      /\b(this|current|last|previous|prior|next) year\b/g,
      (x) => {
        const year = x[1] === 'next' ? y + 1 : ['this', 'current'].includes(x[1]!) ? y : y - 1;
        return { start: utc(year, 1), end: utc(year + 1, 1) };
      },
    ],
    [/\b(year to date|ytd)\b/g, () => ({ start: utc(y, 1), end: addDays(today, 1) })],
    [
      /\b(this|current|last|previous|prior|next) month\b/g,
      (x) => {
        const shift = x[1] === 'next' ? 1 : ['this', 'current'].includes(x[1]!) ? 0 : -1;
        const start = utc(y, m + shift);
        return { start, end: utc(start.getUTCFullYear(), start.getUTCMonth() + 2) };
      },
    ],
    [
      /\b(this|current|last|previous|prior|next) week\b/g,
      (x) => {
        const monday = addDays(today, -((today.getUTCDay() + 6) % 7));
        const shift = x[1] === 'next' ? 7 : ['this', 'current'].includes(x[1]!) ? 0 : -7;
        const start = addDays(monday, shift);
        return { start, end: addDays(start, 7) };
      },
    ],
    [
      /\b(?:in the |over the |during the )?(?:last|past|previous) (\d+) (day|week|month|year)s?\b/g,
      (x) => {
        const n = Number(x[1]);
        const end = addDays(today, 1);
        if (x[2] === 'day') return { start: addDays(today, -n + 1), end };
        if (x[2] === 'week') return { start: addDays(today, -7 * n + 1), end };
        if (x[2] === 'month') return { start: utc(y, m - n, today.getUTCDate()), end };
        return { start: utc(y - n, m, today.getUTCDate()), end };
      },
    ],
    [/\btoday\b/g, () => ({ start: today, end: addDays(today, 1) })],
    [
      /\b(?:in|during|for|of|year|since|before|after|from|until|by)\s+((?:19|20)\d\d)\b(?![-/]\d)/g,
      (x) => ({ start: utc(Number(x[1]), 1), end: utc(Number(x[1]) + 1, 1) }),
    ],
  ];
  for (const [pattern, make] of rules) {
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      if (spans.some((s) => match.index < s.index + s.length && s.index < match.index + match[0].length)) continue;
      const range = make(match);
      if (range) push(match, range);
    }
  }
  // A year alone ("2025 deals"), not part of a date chrono reads.
  for (const match of text.matchAll(/(?<![-/\d])\b((?:19|20)\d\d)\b(?![-/]\d)/g)) {
    const index = match.index ?? 0;
    if (spans.some((s) => index >= s.index && index < s.index + s.length)) continue;
    const before = text.slice(Math.max(0, index - 12), index);
    if (/\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*(\d{1,2}(st|nd|rd|th)?,?\s*)?$/.test(before)) continue;
    spans.push({ start: utc(Number(match[1]), 1), end: utc(Number(match[1]) + 1, 1), index, length: match[0].length });
  }
  return spans;
}

/** Days and months by chrono-node; a date without a year that would lie ahead is taken from the year before. */
function chronoSpans(text: string, today: Date, taken: Span[]): Span[] {
  const spans: Span[] = [];
  for (const result of chrono.parse(text, { instant: today, timezone: 'UTC' })) {
    if (taken.some((s) => result.index < s.index + s.length && s.index < result.index + result.text.length)) continue;
    const c = result.start;
    if (/^(right )?now$|^the moment$/.test(result.text)) continue; // "right now" means the current state, not today's rows
    if (!c.isCertain('month') && !c.isCertain('day') && !c.isCertain('weekday')) continue;
    let year = c.get('year') ?? today.getUTCFullYear();
    const month = c.get('month') ?? 1;
    const dayKnown = c.isCertain('day') || c.isCertain('weekday');
    const day = dayKnown ? (c.get('day') ?? 1) : 1;
    if (!c.isCertain('year') && utc(year, month, day) > today && !/\b(next|coming|upcoming)\b/.test(text)) year -= 1;
    const start = utc(year, month, day);
    const end = dayKnown ? addDays(start, 1) : utc(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1);
    spans.push({ start, end, index: result.index, length: result.text.length });
  }
  return spans;
}

/**
 * The periods of a (folded) question joined into one range by their prepositions: "since"/"after"/"from"
 * open a range, "before"/"until" close it, "between … and …" spans both, a bare period is the period.
 */
export function dateRangeOf(text: string, today: Date): DateRange | null {
  const ruled = ruledSpans(text, today);
  const spans = [...ruled, ...chronoSpans(text, today, ruled)].sort((a, b) => a.index - b.index);
  if (spans.length === 0) return null;
  const lead = (span: Span) => text.slice(Math.max(0, span.index - 16), span.index);
  const first = spans[0]!;
  const last = spans[spans.length - 1]!;
  const words = text.slice(first.index, last.index + last.length);
  if (spans.length >= 2 && /\b(between|from)\s*(the\s*)?$/.test(lead(first))) {
    return { from: iso(first.start), to: iso(last.end), text: `${lead(first).match(/(between|from)\s*(the\s*)?$/)![0]}${words}` };
  }
  const range: DateRange = { text: '' };
  const used: string[] = [];
  for (const span of spans) {
    const before = lead(span);
    const said = text.slice(span.index, span.index + span.length);
    const prep = before.match(
      /\b(since|after|from|starting|before|until|till|up to|by|prior to|earlier than|later than|through)\s*(the\s*)?$/,
    );
    const word = prep?.[1];
    if (word === 'since' || word === 'from' || word === 'starting') range.from = iso(span.start);
    else if (word === 'after' || word === 'later than') range.from = iso(span.end);
    else if (word === 'before' || word === 'prior to' || word === 'earlier than') range.to = iso(span.start);
    else if (word === 'until' || word === 'till' || word === 'up to' || word === 'by' || word === 'through') range.to = iso(span.end);
    else {
      range.from = iso(span.start);
      range.to = iso(span.end);
    }
    used.push(prep ? `${prep[0]}${said}` : said);
  }
  range.text = used.join(' ');
  return range;
}
