// What a received message says, by a fixed rule (no model): a delivery failure report is `bounce` (a
// permanent failure) or `soft_bounce` (a temporary one, still being retried, see domain/outreach/dsn.ts); an
// automatic answer keeps its kind from autoReplyKind (`out_of_office`, `auto_reply`); otherwise the
// reply's own first lines (quoted history and signatures cut off) are read for phrases: a refusal
// (`not_interested`) wins over interest (`interested`, "not interested" contains "interested"), and
// a reply naming neither is `other`.

export const REPLY_CLASSES = ['interested', 'not_interested', 'out_of_office', 'auto_reply', 'bounce', 'soft_bounce', 'other'] as const;
export type ReplyClass = (typeof REPLY_CLASSES)[number];

/** Lines read: a decision is in the first few lines of a reply, never in the history below them. */
const FIRST_LINES = 6;

/** Where the quoted history or a signature starts. */
const CUT = [
  /^>/,
  /^on .{0,200}wrote:?$/i,
  /^-{2,}\s*(original message|forwarded message)/i,
  /^(from|sent|von|de|envoyé|gesendet):\s/i,
  /^--\s*$/,
  /^_{5,}$/,
  /^sent from my /i,
];

const NOT_INTERESTED = [
  /\bnot\b[^.!?\n]{0,20}\binterest(ed)?\b/,
  /\bno,? thanks?\b/,
  /\bno thank you\b/,
  /\bunsubscribe\b/,
  /\bremove me\b/,
  /\btake me off\b/,
  /\b(stop|quit) (emailing|mailing|contacting|sending)\b/,
  /\b(please )?(do not|don'?t) (contact|email|e-mail|write|send)\b/,
  /\bnot a (good )?fit\b/,
  /\bnot (the right time|now|for us|relevant)\b/,
  /\bno need\b/,
  /\bwe('| a)re (all set|good|covered)\b/,
  /\bnot looking\b/,
  /\bpass on this\b/,
];

const INTERESTED = [
  /\binterest(ed|ing)\b/,
  /\bsounds (good|great|interesting)\b/,
  /\blet'?s (talk|chat|connect|meet|set up|schedule|do it)\b/,
  /\b(book|schedule|set up|arrange|hop on) a (call|meeting|demo|chat|time)\b/,
  /\b(tell|show) me more\b/,
  /\b(more|some) (info|information|details)\b/,
  /\bsend (me|over|us)\b/,
  /\b(happy|glad|love|keen) to (chat|talk|learn|hear|connect|meet)\b/,
  /\bwhen are you (free|available)\b/,
  /\b(what|which) (time|day)s? (works|suits)\b/,
  /\b(i'?m|we'?re|i am|we are) (available|free)\b/,
  /\bcalendly\b|\bmy calendar\b/,
  /\bhow much\b|\bpricing\b/,
  /^(yes|sure|absolutely|definitely)\b/,
];

/** The reply's own words: the first lines before any quoted history or signature, lower case, one line. */
export function replyOpening(text: string | null | undefined): string {
  const lines: string[] = [];
  for (const raw of (text ?? '').split(/\r?\n/)) {
    const line = raw.trim();
    if (CUT.some((re) => re.test(line))) break;
    if (!line) continue;
    lines.push(line);
    if (lines.length >= FIRST_LINES) break;
  }
  return lines.join(' ').toLowerCase().replace(/[’‘]/g, "'").slice(0, 1000);
}

/** The class of a received message (see the rule above). */
export function classifyReply(input: {
  bounce: boolean;
  /** The delivery report tells of a temporary failure (4.x.x, `Action: delayed`). */
  softBounce?: boolean;
  autoReply: 'out_of_office' | 'auto_reply' | null;
  text: string | null | undefined;
}): ReplyClass {
  if (input.bounce) return input.softBounce ? 'soft_bounce' : 'bounce';
  if (input.autoReply) return input.autoReply;
  const opening = replyOpening(input.text);
  if (NOT_INTERESTED.some((re) => re.test(opening))) return 'not_interested';
  if (INTERESTED.some((re) => re.test(opening))) return 'interested';
  return 'other';
}
