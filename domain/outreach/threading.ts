// Threading rules of outreach mail: the Message-IDs the service writes, and how a received message finds
// its thread (Message-ID / In-Reply-To / References), bounces included.

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const OURS = new RegExp(`^<(${UUID})\\.(${UUID})@[^<>\\s]+>$`, 'i');

/**
 * The Message-ID of a message the service sends: `<message-id.organization-id@sender-domain>`. Both
 * parts are random UUIDs; the organization part lets an unauthenticated inbound delivery (webhook) be
 * matched inside one organization only, every query staying filtered by it.
 */
export function makeMessageId(messageRowId: string, orgId: string, fromAddress: string): string {
  const domain = fromAddress.split('@')[1]?.trim().toLowerCase() || 'localhost';
  return `<${messageRowId}.${orgId}@${domain}>`;
}

/** The organization a Message-ID of ours names, or null for anyone else's. */
export function organizationOf(messageId: string): string | null {
  const match = OURS.exec(normalizeMessageId(messageId) ?? '');
  return match ? match[2]!.toLowerCase() : null;
}

/** `<id>` form of one Message-ID, or null when it is none. */
export function normalizeMessageId(value: string | null | undefined): string | null {
  const trimmed = (value ?? '').trim();
  if (!trimmed) return null;
  const inner = trimmed.replace(/^<|>$/g, '').trim();
  if (!inner || /[\s<>]/.test(inner)) return null;
  return `<${inner}>`;
}

/** The Message-IDs of a References or In-Reply-To header (a string, or mailparser's string[]). */
export function messageIdsIn(header: string | string[] | null | undefined): string[] {
  const text = Array.isArray(header) ? header.join(' ') : (header ?? '');
  const found = text.match(/<[^<>\s]+>/g) ?? [];
  return [...new Set(found.map((id) => normalizeMessageId(id)!).filter(Boolean))];
}

/** Ids a reply names, closest first: In-Reply-To, then References from the end. */
export function threadCandidates(
  inReplyTo: string | string[] | null | undefined,
  references: string | string[] | null | undefined,
): string[] {
  return [...new Set([...messageIdsIn(inReplyTo), ...messageIdsIn(references).reverse()])];
}

/** Headers of a message answering `parent`: In-Reply-To its id, References its chain plus its id (the last 20). */
export function replyHeaders(parent: { message_id: string; references: readonly string[] }): { inReplyTo: string; references: string[] } {
  return { inReplyTo: parent.message_id, references: [...parent.references, parent.message_id].slice(-20) };
}

/** `Re: subject`, once. */
export const replySubject = (subject: string): string => (/^\s*re\s*:/i.test(subject) ? subject.trim() : `Re: ${subject.trim()}`);

/**
 * A delivery status notification (RFC 3464): `multipart/report; report-type=delivery-status`, or the
 * classic mailer-daemon shape. Content types are those of the top-level message and its parts.
 */
export function isBounce(input: {
  contentType?: string | null;
  partTypes: readonly string[];
  from?: string | null;
  subject?: string | null;
}): boolean {
  const type = (input.contentType ?? '').toLowerCase();
  if (type.includes('multipart/report') && type.includes('delivery-status')) return true;
  if (input.partTypes.some((t) => t.toLowerCase() === 'message/delivery-status')) return true;
  const from = (input.from ?? '').toLowerCase();
  const subject = (input.subject ?? '').toLowerCase();
  return /mailer-daemon|postmaster/.test(from) && /(undeliver|delivery (status|failure)|returned mail|failure notice)/.test(subject);
}

/**
 * Message-IDs named in the headers of a returned original (the `message/rfc822` or `text/rfc822-headers`
 * part of a bounce), the original's own id first: a bounce is about that message, and its In-Reply-To
 * and References (the steps before it) only help when its own id is unknown. Then In-Reply-To, then
 * References from the end.
 */
export function originalMessageIds(headersText: string): string[] {
  const unfolded = headersText.replace(/\r?\n[ \t]+/g, ' ');
  const found: Record<'message-id' | 'in-reply-to' | 'references', string[]> = { 'message-id': [], 'in-reply-to': [], references: [] };
  for (const line of unfolded.split(/\r?\n/)) {
    const match = /^(message-id|in-reply-to|references)\s*:\s*(.*)$/i.exec(line);
    if (match) found[match[1]!.toLowerCase() as keyof typeof found].push(...messageIdsIn(match[2]!));
  }
  return [...new Set([...found['message-id'], ...found['in-reply-to'], ...found.references.reverse()])];
}
