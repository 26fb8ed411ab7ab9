// Delivery status notifications (RFC 3464) as MTAs write them: a `multipart/report;
// report-type=delivery-status` whose `message/delivery-status` part holds per-message fields, a blank
// line, then one block per recipient (`Final-Recipient`, `Action`, `Status`, `Diagnostic-Code`, …).
// Only a permanent failure (a 5.x.x status, or `Action: failed`) is a hard bounce; a 4.x.x (`Action:
// delayed`, "mailbox full, still being retried") is a soft bounce; `delivered`/`relayed`/`expanded`
// report success.

/** Soft bounces of one address (within the window) after which it is suppressed as unmailable. */
export const SOFT_BOUNCE_LIMIT = 3;
/** The window over which soft bounces of one address count towards the limit. */
export const SOFT_BOUNCE_WINDOW_DAYS = 30;

export interface DsnRecipient {
  /** The address from `Final-Recipient` (or `Original-Recipient`), without its `rfc822;` type. */
  recipient: string | null;
  /** failed, delayed, delivered, relayed, expanded (lower case), or null when absent. */
  action: string | null;
  /** `x.y.z` from `Status`, else the first enhanced code of `Diagnostic-Code`. */
  status: string | null;
  /** The remote server's words, without the `smtp;` type. */
  diagnostic: string | null;
}

export type BounceSeverity = 'hard' | 'soft' | 'delivered';

export interface BounceVerdict {
  severity: BounceSeverity;
  recipient: string | null;
  action: string | null;
  status: string | null;
  diagnostic: string | null;
}

const unfold = (text: string): string => text.replace(/\r\n/g, '\n').replace(/\n[ \t]+/g, ' ');

/** Header fields of one block, lower-case names; a repeated field keeps its first value. */
function fieldsOf(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of unfold(block).split('\n')) {
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$/.exec(line);
    if (m && !fields.has(m[1]!.toLowerCase())) fields.set(m[1]!.toLowerCase(), m[2]!.trim());
  }
  return fields;
}

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

/** Strips an address-type or diagnostic-type prefix (`rfc822;`, `smtp;`) and angle brackets. */
const typed = (value: string | undefined): string | null => {
  if (!value) return null;
  const rest = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  return rest.trim().replace(/^<|>$/g, '') || null;
};

/** The recipient blocks of a `message/delivery-status` body (the per-message block has neither Action nor Final-Recipient). */
export function parseDeliveryStatus(body: string): DsnRecipient[] {
  const blocks = body.replace(/\r\n/g, '\n').split(/\n[ \t]*\n/);
  const recipients: DsnRecipient[] = [];
  for (const block of blocks) {
    const f = fieldsOf(block);
    if (!f.has('action') && !f.has('final-recipient')) continue;
    const diagnostic = typed(f.get('diagnostic-code'));
    const status = ENHANCED.exec(f.get('status') ?? '')?.[0] ?? ENHANCED.exec(diagnostic ?? '')?.[0] ?? null;
    recipients.push({
      recipient: typed(f.get('final-recipient')) ?? typed(f.get('original-recipient')),
      action:
        f
          .get('action')
          ?.toLowerCase()
          .split(/[\s(;]/)[0] || null,
      status,
      diagnostic: diagnostic?.slice(0, 500) ?? null,
    });
  }
  return recipients;
}

interface MimePart {
  headers: Map<string, string>;
  body: string;
}

function splitPart(raw: string): MimePart {
  const text = raw.replace(/\r\n/g, '\n');
  const end = text.search(/\n[ \t]*\n/);
  const head = end < 0 ? text : text.slice(0, end);
  const body = end < 0 ? '' : text.slice(end).replace(/^\n[ \t]*\n/, '');
  return { headers: fieldsOf(head), body };
}

const param = (value: string, name: string): string | null => {
  const m = new RegExp(`(?:^|;)\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return m ? (m[1] ?? m[2] ?? null) : null;
};

function decode(part: MimePart): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    return part.body.replace(/=\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
  return part.body;
}

/**
 * The bodies of every `message/delivery-status` (or `message/global-delivery-status`, RFC 6533) part
 * of a raw message, walking nested multiparts (a report forwarded inside multipart/mixed included).
 */
export function deliveryStatusBodies(raw: string, depth = 0): string[] {
  if (depth > 5) return [];
  const part = splitPart(raw);
  const type = (part.headers.get('content-type') ?? 'text/plain').toLowerCase();
  if (/^message\/(global-)?delivery-status\b/.test(type)) return [decode(part)];
  if (!type.startsWith('multipart/')) return [];
  const boundary = param(part.headers.get('content-type') ?? '', 'boundary');
  if (!boundary) return [];
  const delimiter = `\n--${boundary}`;
  const text = `\n${part.body}`;
  const pieces = text.split(delimiter).slice(1);
  const found: string[] = [];
  for (const piece of pieces) {
    if (piece.startsWith('--')) break;
    found.push(...deliveryStatusBodies(piece.replace(/^[ \t]*\n/, ''), depth + 1));
  }
  return found;
}

const TEMPORARY_WORDS =
  /\b(delay(ed)?|will (be )?retr(y|ied)|still (being )?(retr(y|ied|ying)|trying)|temporar(y|ily)|not yet (been )?delivered|deferred)\b/i;

function severityOf(r: Pick<DsnRecipient, 'action' | 'status'>): BounceSeverity | null {
  if (r.status?.startsWith('5.') || r.action === 'failed') return 'hard';
  if (r.action === 'delivered' || r.action === 'relayed' || r.action === 'expanded') return 'delivered';
  if (r.action === 'delayed' || r.status?.startsWith('4.')) return 'soft';
  if (r.status?.startsWith('2.')) return 'delivered';
  return null;
}

/**
 * What a delivery report says of the address we mailed (`counterpart`): its recipient block when one
 * names it, else the worst block. Without any delivery-status part (the classic mailer-daemon text), the
 * text's enhanced status code decides: a 5.x.x is hard, a 4.x.x with words of a delay is soft. A report
 * that says nothing readable stays a hard bounce, as a mailer-daemon's "undeliverable" has always meant.
 */
export function bounceVerdict(input: {
  recipients: readonly DsnRecipient[];
  counterpart?: string | null;
  subject?: string | null;
  text?: string | null;
}): BounceVerdict {
  const own = (input.counterpart ?? '').trim().toLowerCase();
  const mine = input.recipients.filter((r) => own && r.recipient?.toLowerCase() === own);
  const pool = mine.length ? mine : input.recipients;
  const rank: Record<BounceSeverity, number> = { hard: 3, soft: 2, delivered: 1 };
  let best: (DsnRecipient & { severity: BounceSeverity }) | null = null;
  for (const r of pool) {
    const severity = severityOf(r);
    if (severity && (!best || rank[severity] > rank[best.severity])) best = { ...r, severity };
  }
  if (best)
    return { severity: best.severity, recipient: best.recipient, action: best.action, status: best.status, diagnostic: best.diagnostic };

  const text = `${input.subject ?? ''}\n${input.text ?? ''}`;
  const codes = [...text.matchAll(new RegExp(ENHANCED.source, 'g'))].map((m) => m[0]);
  const hard = codes.find((c) => c.startsWith('5.'));
  const soft = codes.find((c) => c.startsWith('4.'));
  const diagnosticLine = (code: string | undefined) =>
    code
      ? (text
          .split(/\r?\n/)
          .find((l) => l.includes(code))
          ?.trim()
          .slice(0, 500) ?? null)
      : null;
  const severity: BounceSeverity =
    !hard && (soft || TEMPORARY_WORDS.test(input.subject ?? '')) && TEMPORARY_WORDS.test(text) ? 'soft' : 'hard';
  const status = severity === 'soft' ? (soft ?? null) : (hard ?? null);
  return { severity, recipient: pool[0]?.recipient ?? null, action: null, status, diagnostic: diagnosticLine(status ?? undefined) };
}

/** One line for people: `4.2.2 (452 4.2.2 Mailbox full)`, or the status or diagnostic alone. */
export function bounceSummary(v: Pick<BounceVerdict, 'status' | 'diagnostic'>): string {
  if (v.status && v.diagnostic) return v.diagnostic.includes(v.status) ? v.diagnostic : `${v.status} (${v.diagnostic})`;
  return v.status ?? v.diagnostic ?? 'no status given';
}
