import { simpleParser, type ParsedMail } from 'mailparser';
import type { Db } from '../../db/client';
import * as mail from '../../db/outreach/messages';
import * as seqs from '../../db/outreach/sequences';
import { invalid, unavailable } from '../../domain/errors';
import * as inbound from '../../db/outreach/inbound';
import { autoReplyKind, resumeAfterAutoReply, type AutoReplyKind } from '../../domain/outreach/auto-replies';
import {
  SOFT_BOUNCE_LIMIT,
  SOFT_BOUNCE_WINDOW_DAYS,
  bounceSummary,
  bounceVerdict,
  deliveryStatusBodies,
  parseDeliveryStatus,
  type BounceVerdict,
} from '../../domain/outreach/dsn';
import { classifyReply } from '../../domain/outreach/replies';
import { isBounce, normalizeMessageId, organizationOf, originalMessageIds, threadCandidates } from '../../domain/outreach/threading';
import { newId } from '../../platform/core/ids';
import { fetchNewMessages } from '../../platform/adapters/mail/imap';
import { hasSignatureHeaders, verifyWebhook } from '../../platform/adapters/meetings/webhooks';
import { recordContactEmail } from '../crm-activities';
import type { ServiceDeps } from '../deps';
import { emitOutreachNotice } from './notices';
import { suppressAddress } from './suppressions';
import type { ImapPollInput, ImapPollResult } from '../../workflows/outreach-messages';
import { recordMailboxOutcome } from './mailboxes';
import { mailboxImapSettings } from './mailbox-servers';

// Received mail (the signed inbound-mail webhook and IMAP polling): each message finds its thread by
// the Message-IDs it names, lands in it, and acts on the enrollment it answers: a reply stops it when the
// sequence stops on reply; a permanent bounce (5.x.x, `Action: failed`) stops it and suppresses the
// address; a soft bounce (4.x.x, still being retried) is recorded and the sequence goes on, until
// SOFT_BOUNCE_LIMIT of them suppress the address; an automatic answer pauses it until the sender is back.

export interface InboundResult {
  matched: boolean;
  thread_id: string | null;
  /** `auto_reply`: an out-of-office or other automatic answer, which pauses the enrollment instead of ending it. */
  kind: 'reply' | 'auto_reply' | 'bounce' | 'soft_bounce' | null;
  /** False when the same Message-ID was already stored (a redelivery). */
  stored: boolean;
}

const UNMATCHED: InboundResult = { matched: false, thread_id: null, kind: null, stored: false };

/** The inbound-mail webhook's secrets (Standard Webhooks `whsec_…`, several during a rotation). */
export function inboundSecrets(config: Pick<ServiceDeps['config'], 'OUTREACH_INBOUND_SECRETS'>): string[] {
  return (config.OUTREACH_INBOUND_SECRETS ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Verifies the webhook before its body is looked at: without a configured secret every request is
 * refused (503); a signature no secret verifies, or a timestamp more than five minutes off, is 400.
 */
export async function verifyInbound(
  deps: Pick<ServiceDeps, 'config'>,
  readBody: () => Promise<string>,
  headers: Record<string, string | string[] | undefined>,
): Promise<string> {
  const secrets = inboundSecrets(deps.config);
  if (!secrets.length) throw unavailable('Inbound mail is not configured in this deployment');
  // Without its signature headers (or with a stale timestamp) the body is never read.
  if (!hasSignatureHeaders(headers)) throw invalid('Invalid webhook signature');
  const raw = await readBody();
  if (!verifyWebhook(secrets, raw, headers)) throw invalid('Invalid webhook signature');
  return raw;
}

function partTypes(parsed: ParsedMail): string[] {
  return (parsed.attachments ?? []).map((a) => a.contentType);
}

/**
 * The Message-IDs a bounce names, the returned original's own Message-ID first (then its In-Reply-To and
 * References): the part's headers, or the text's when a server put them inline.
 */
function bouncedIds(parsed: ParsedMail): string[] {
  const ids: string[] = [];
  for (const a of parsed.attachments ?? []) {
    const type = a.contentType.toLowerCase();
    if (type === 'message/rfc822' || type === 'text/rfc822-headers' || type === 'message/rfc822-headers') {
      ids.push(...originalMessageIds(a.content.toString('utf8').split(/\r?\n\r?\n/)[0] ?? ''));
    }
  }
  // Some servers put the original's headers inline in the text part.
  if (!ids.length) ids.push(...originalMessageIds(parsed.text ?? ''));
  return [...new Set(ids)];
}

const addressList = (value: ParsedMail['to']): string[] =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((a) => a.value.map((v) => v.address ?? '').filter(Boolean));

/**
 * Places one received message. `scope` is known for IMAP (the mailbox's organization); a webhook
 * delivery is placed in the organization its referenced Message-IDs name (they are ours, see
 * domain/outreach/threading.ts). A message naming no thread of ours is ignored.
 */
export async function receiveMessage(
  deps: Pick<ServiceDeps, 'sql' | 'logger' | 'config'>,
  raw: string | Buffer,
  scope?: { orgId: string; mailboxId: string },
): Promise<InboundResult> {
  const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  const contentType = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const typeText = contentType ? `${contentType.value ?? ''}; report-type=${contentType.params?.['report-type'] ?? ''}` : '';
  // mailparser folds a message/delivery-status part into the text: the report is read from the raw MIME.
  const reports = deliveryStatusBodies(typeof raw === 'string' ? raw : raw.toString('utf8'));
  const bounce =
    reports.length > 0 ||
    isBounce({ contentType: typeText, partTypes: partTypes(parsed), from: parsed.from?.text, subject: parsed.subject });
  const header = (name: string) => {
    const value = parsed.headers.get(name);
    return value === undefined ? undefined : typeof value === 'string' ? value : String((value as { value?: unknown }).value ?? value);
  };
  const candidates = bounce ? bouncedIds(parsed) : threadCandidates(parsed.inReplyTo, parsed.references as string | string[] | undefined);
  const orgId = scope?.orgId ?? candidates.map(organizationOf).find((o): o is string => !!o);
  if (!orgId || !candidates.length) return UNMATCHED;

  return deps.sql.begin(async (tx) => {
    // A delivery report is about a message we sent: only our own rows can be what it returns (a report
    // stored earlier is named in the References of the next step's copy, never what bounced).
    const known = (await mail.messagesByMessageIds(tx, orgId, candidates)).filter((m) => !bounce || m.direction === 'outbound');
    const parent = candidates.map((id) => known.find((m) => m.message_id === id)).find((m) => !!m);
    if (!parent) return UNMATCHED;
    const thread = (await mail.getThread(tx, orgId, parent.thread_id, true))!;
    if (scope && scope.mailboxId !== thread.mailbox_id) return UNMATCHED;
    // Read against what we sent in the thread: our subject repeated, or our text quoted, is no sign of an automatic answer.
    const sent = bounce ? null : await inbound.ownMail(tx, orgId, thread.id);
    const own = sent && { texts: sent.texts, subjects: [thread.subject, ...sent.subjects] };
    const auto = own ? autoReplyKind({ header, subject: parsed.subject, text: parsed.text, own }) : null;
    const verdict = bounce
      ? bounceVerdict({
          recipients: reports.flatMap(parseDeliveryStatus),
          counterpart: thread.counterpart,
          subject: parsed.subject,
          text: parsed.text,
        })
      : null;
    // A report of a successful delivery (NOTIFY=SUCCESS) is no bounce: nothing to store or do.
    if (verdict?.severity === 'delivered') return { matched: true, thread_id: thread.id, kind: null, stored: false };
    const soft = verdict?.severity === 'soft';
    const kind = verdict ? (soft ? ('soft_bounce' as const) : ('bounce' as const)) : auto ? ('auto_reply' as const) : ('reply' as const);
    const id = newId();
    const now = new Date();
    const stored = await mail.insertMessage(tx, orgId, {
      id,
      thread_id: thread.id,
      mailbox_id: thread.mailbox_id,
      direction: 'inbound',
      kind: bounce ? 'bounce' : 'inbound',
      enrollment_id: thread.enrollment_id,
      step: null,
      variant: null,
      idempotency_key: null,
      status: 'received',
      message_id: normalizeMessageId(parsed.messageId) ?? `<inbound.${id}@outreach.invalid>`,
      in_reply_to: normalizeMessageId(Array.isArray(parsed.inReplyTo) ? parsed.inReplyTo[0] : parsed.inReplyTo),
      references: threadCandidates(null, parsed.references as string | string[] | undefined).reverse(),
      from_address: parsed.from?.value[0]?.address ?? parsed.from?.text ?? '',
      to_addresses: addressList(parsed.to),
      subject: (parsed.subject ?? '').slice(0, 1000),
      text_body: parsed.text ?? null,
      html_body: typeof parsed.html === 'string' ? parsed.html : null,
      received_at: now,
      classification: classifyReply({ bounce, softBounce: soft, autoReply: auto, text: parsed.text }),
    });
    if (!stored) return { matched: true, thread_id: thread.id, kind, stored: false };
    if (verdict) {
      await placeBounce(tx, deps, orgId, thread, { reportId: stored.id, reportedId: parent.id, subject: parent.subject, verdict, now });
      return { matched: true, thread_id: thread.id, kind, stored: true };
    }
    if (auto) {
      // Not a reply: the thread shows it, nobody needs to answer, and the sequence waits, then goes on.
      await mail.touchThread(tx, orgId, thread.id, 'inbound', now, false);
      const resumeAt = resumeAfterAutoReply(
        `${stored.subject}\n${stored.text_body ?? ''}`,
        now,
        deps.config.OUTREACH_AUTO_REPLY_PAUSE_DAYS,
      );
      const paused = await pauseFor(tx, orgId, thread, resumeAt, auto);
      deps.logger.info({ orgId, threadId: thread.id, kind, auto, resumeAt, paused }, 'outreach automatic answer received');
      return { matched: true, thread_id: thread.id, kind, stored: true };
    }
    await mail.touchThread(tx, orgId, thread.id, 'inbound', now, true);
    await stopFor(tx, orgId, thread, 'reply');
    await emitOutreachNotice(tx, orgId, {
      event_type: 'outreach.reply_received',
      thread_id: thread.id,
      enrollment_id: thread.enrollment_id,
      contact_id: thread.contact_id,
      sequence_id: thread.sequence_id,
      mailbox_id: thread.mailbox_id,
      address: stored.from_address || thread.counterpart,
      subject: stored.subject,
    });
    if (thread.contact_id) {
      await recordContactEmail(tx, orgId, thread.contact_id, {
        subject: stored.subject,
        body: stored.text_body,
        direction: 'inbound',
        at: now,
        actor: 'system:outreach',
      });
    }
    deps.logger.info({ orgId, threadId: thread.id, kind }, 'outreach mail received');
    return { matched: true, thread_id: thread.id, kind, stored: true };
  });
}

/**
 * A delivery report, stored in its thread (which then needs no answer). The report and the message it
 * reports on record its status. A permanent failure stops the enrollment, counts against the mailbox,
 * suppresses the address and notifies; a temporary one only counts, until the address has had
 * SOFT_BOUNCE_LIMIT of them within SOFT_BOUNCE_WINDOW_DAYS: then it is suppressed as `soft_bounce`, the
 * enrollment stops, and the owner hears of it like of any bounce.
 */
async function placeBounce(
  tx: Db,
  deps: Pick<ServiceDeps, 'logger'>,
  orgId: string,
  thread: mail.ThreadRow,
  r: { reportId: string; reportedId: string; subject: string; verdict: BounceVerdict; now: Date },
): Promise<void> {
  const { verdict, now } = r;
  const soft = verdict.severity === 'soft';
  const report = { status: verdict.status, action: verdict.action, diagnostic: verdict.diagnostic };
  await mail.touchThread(tx, orgId, thread.id, 'inbound', now, false);
  await inbound.recordDeliveryReport(tx, orgId, r.reportId, report, false);
  await inbound.recordDeliveryReport(tx, orgId, r.reportedId, report, soft);
  const summary = bounceSummary(verdict);
  let note = `bounce report: ${summary}`;
  if (soft) {
    const since = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000);
    const count = await inbound.countSoftBounces(tx, orgId, thread.counterpart, since);
    deps.logger.info({ orgId, threadId: thread.id, status: verdict.status, count }, 'outreach soft bounce recorded; the sequence goes on');
    if (count < SOFT_BOUNCE_LIMIT) return;
    note = `${count} soft bounces within ${SOFT_BOUNCE_WINDOW_DAYS} days; last: ${summary}`;
  }
  await stopFor(tx, orgId, thread, 'bounce');
  await suppressAddress(tx, orgId, thread.counterpart, soft ? 'soft_bounce' : 'bounce', note);
  await emitOutreachNotice(tx, orgId, {
    event_type: 'outreach.message_bounced',
    thread_id: thread.id,
    enrollment_id: thread.enrollment_id,
    contact_id: thread.contact_id,
    sequence_id: thread.sequence_id,
    mailbox_id: thread.mailbox_id,
    address: thread.counterpart,
    subject: r.subject,
    bounce: {
      stage: 'report',
      status: verdict.status,
      diagnostic: soft ? note : verdict.diagnostic,
      enrollment_stopped: !!thread.enrollment_id,
      suppressed: true,
    },
  });
  deps.logger.info({ orgId, threadId: thread.id, status: verdict.status, soft }, 'outreach bounce: address suppressed');
}

/** Messages read from a mailbox per poll; more wait for the next one, which comes at once. */
const IMAP_BATCH = 100;

/**
 * One poll of a connected mailbox (the IMAP poller's activity): reads the messages after its cursor,
 * places each, then moves the cursor. `stop` when the mailbox is gone or has no IMAP settings.
 */
export async function pollMailbox(
  deps: Pick<ServiceDeps, 'sql' | 'logger' | 'config'>,
  { orgId, mailboxId }: ImapPollInput,
): Promise<ImapPollResult> {
  const settings = await mailboxImapSettings(deps, orgId, mailboxId);
  if (!settings) return { stop: true, received: 0, more: false };
  const cursor = await mail.getImapCursor(deps.sql, orgId, mailboxId);
  const result = await fetchNewMessages(settings, cursor?.last_uid ?? null, {
    timeoutMs: deps.config.OUTREACH_IMAP_TIMEOUT_MS,
    maxMessages: IMAP_BATCH,
    uidValidity: cursor?.uid_validity ?? null,
  });
  let received = 0;
  for (const m of result.messages) {
    const placed = await receiveMessage(deps, m.raw, { orgId, mailboxId });
    if (placed.stored) received += 1;
  }
  await mail.saveImapCursor(deps.sql, orgId, mailboxId, result.uidValidity, result.lastUid);
  return { stop: false, received, more: result.messages.length >= IMAP_BATCH };
}

/**
 * An automatic answer holds the active enrollment's next step until `resumeAt` (never earlier than it
 * was due), recording why (`pause_reason`) and until when (`paused_until`); the sender then goes on.
 */
async function pauseFor(tx: Db, orgId: string, thread: mail.ThreadRow, resumeAt: Date, reason: AutoReplyKind): Promise<boolean> {
  if (!thread.enrollment_id) return false;
  return inbound.pauseEnrollment(tx, orgId, thread.enrollment_id, resumeAt, reason);
}

/** A bounce stops the enrollment and counts against the mailbox's health; a reply stops it when the sequence says so. */
async function stopFor(tx: Db, orgId: string, thread: mail.ThreadRow, kind: 'reply' | 'bounce'): Promise<void> {
  if (kind === 'bounce') await recordMailboxOutcome(tx, orgId, thread.mailbox_id, 'bounce');
  if (!thread.enrollment_id) return;
  const enrollment = await seqs.getEnrollmentById(tx, orgId, thread.enrollment_id, true);
  if (enrollment?.status !== 'active') return;
  if (kind === 'bounce') {
    await seqs.stopEnrollment(tx, orgId, enrollment.id, 'bounced');
    return;
  }
  const sequence = await seqs.getSequence(tx, orgId, enrollment.sequence_id);
  if (sequence?.stop_on_reply) await seqs.stopEnrollment(tx, orgId, enrollment.id, 'replied');
}
