import type { ReplyClass } from '../../domain/outreach/replies';
import { newId } from '../../platform/core/ids';
import type { Db } from '../client';
import type { MailboxRow } from './mailboxes';
import { keysetRows } from '../kit/keyset';
import { isUniqueViolation } from '../kit/unique';

// SQL of outreach mail: unibox threads, every message sent or received, the daily count per mailbox,
// and where IMAP polling left off. Every function takes (db, orgId, ...ids) and filters by org_id.

/** What sending needs of a mailbox (table of the mailboxes area). */
export interface PoolMailbox
  extends Pick<
    MailboxRow,
    | 'id'
    | 'email_address'
    | 'display_name'
    | 'kind'
    | 'status'
    | 'daily_limit'
    | 'window_start'
    | 'window_end'
    | 'window_days'
    | 'timezone'
    | 'warmup_enabled'
    | 'warmup_started_at'
    | 'warmup_start_per_day'
    | 'warmup_days'
    | 'send_gap_min_seconds'
    | 'send_gap_max_seconds'
  > {
  /** The earliest this mailbox sends again: its last send plus the random gap drawn for it. */
  next_send_not_before: Date | null;
}

const MAILBOX_COLUMNS = (db: Db) =>
  db`id, email_address, display_name, kind, status, daily_limit, window_start, window_end, window_days, timezone,
     warmup_enabled, warmup_started_at, warmup_start_per_day, warmup_days, send_gap_min_seconds, send_gap_max_seconds, next_send_not_before`;

/** The organization's mailboxes among `ids`, locked in id order until commit (sends through them serialize on the lock). */
export async function lockMailboxes(db: Db, orgId: string, ids: string[]): Promise<PoolMailbox[]> {
  if (!ids.length) return [];
  return db<PoolMailbox[]>`
    SELECT ${MAILBOX_COLUMNS(db)} FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
}

export async function getMailbox(db: Db, orgId: string, id: string): Promise<PoolMailbox | undefined> {
  const [row]: [PoolMailbox?] = await db`SELECT ${MAILBOX_COLUMNS(db)} FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

/** Holds the mailbox's next send until `at` at least (the spacing between two sends of one mailbox). */
export async function holdMailboxUntil(db: Db, orgId: string, id: string, at: Date): Promise<void> {
  await db`
    UPDATE outreach_mailboxes SET next_send_not_before = greatest(next_send_not_before, ${at}::timestamptz)
    WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Those of `ids` that are mailboxes of the organization. */
export async function mailboxesInOrg(db: Db, orgId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db<{ id: string }[]>`SELECT id FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** Outbound messages counted against each mailbox's limit on a local day (`YYYY-MM-DD`), keyed `mailbox_id|day`. */
export async function sentPerMailboxDay(db: Db, orgId: string, pairs: { mailbox_id: string; day: string }[]): Promise<Map<string, number>> {
  if (!pairs.length) return new Map();
  const rows = await db<{ mailbox_id: string; day: string; n: number }[]>`
    SELECT m.mailbox_id, m.local_day::text AS day, count(*)::int AS n
    FROM outreach_messages m
    JOIN (SELECT unnest(${pairs.map((p) => p.mailbox_id)}::uuid[]) AS mailbox_id, unnest(${pairs.map((p) => p.day)}::date[]) AS day) p
      ON p.mailbox_id = m.mailbox_id AND p.day = m.local_day
    WHERE m.org_id = ${orgId} AND m.direction = 'outbound' AND m.status <> 'failed'
    GROUP BY m.mailbox_id, m.local_day`;
  return new Map(rows.map((r) => [`${r.mailbox_id}|${r.day}`, r.n]));
}

// --- threads ---

export interface ThreadRow {
  id: string;
  org_id: string;
  mailbox_id: string;
  sequence_id: string | null;
  enrollment_id: string | null;
  contact_id: string | null;
  subject: string;
  counterpart: string;
  unread_count: number;
  needs_reply: boolean;
  last_message_at: Date;
  created_at: Date;
  updated_at: Date;
}

export async function insertThread(
  db: Db,
  orgId: string,
  values: Pick<ThreadRow, 'mailbox_id' | 'sequence_id' | 'enrollment_id' | 'contact_id' | 'subject' | 'counterpart'>,
): Promise<ThreadRow> {
  const [row] = await db<ThreadRow[]>`INSERT INTO outreach_threads ${db({ id: newId(), org_id: orgId, ...values })} RETURNING *`;
  return row!;
}

export async function getThread(db: Db, orgId: string, id: string, lock = false): Promise<ThreadRow | undefined> {
  const [row]: [ThreadRow?] =
    await db`SELECT * FROM outreach_threads WHERE id = ${id} AND org_id = ${orgId} ${lock ? db`FOR UPDATE` : db``}`;
  return row;
}

export interface ThreadFilters {
  mailbox_id?: string;
  sequence_id?: string;
  unread?: boolean;
  needs_reply?: boolean;
}

const threadWhere = (db: Db, orgId: string, f: ThreadFilters) => db`
  org_id = ${orgId}
  ${f.mailbox_id ? db`AND mailbox_id = ${f.mailbox_id}` : db``}
  ${f.sequence_id ? db`AND sequence_id = ${f.sequence_id}` : db``}
  ${f.unread === undefined ? db`` : f.unread ? db`AND unread_count > 0` : db`AND unread_count = 0`}
  ${f.needs_reply === undefined ? db`` : db`AND needs_reply = ${f.needs_reply}`}`;

/** Threads, most recent message first; keyset after (last_message_at, id). */
export async function listThreads(
  db: Db,
  orgId: string,
  filters: ThreadFilters & { limit: number; after?: { t: string; id: string } },
): Promise<(ThreadRow & { cursor_t: string })[]> {
  return keysetRows<ThreadRow>(db, {
    select: db`*`,
    from: db`outreach_threads`,
    where: threadWhere(db, orgId, filters),
    at: 'last_message_at',
    limit: filters.limit,
    after: filters.after,
  });
}

export async function countThreads(db: Db, orgId: string, filters: ThreadFilters): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM outreach_threads WHERE ${threadWhere(db, orgId, filters)}`;
  return row!.n;
}

/** A message joined the thread: outbound answers it, inbound makes it unread and waiting for a reply. */
export async function touchThread(
  db: Db,
  orgId: string,
  id: string,
  direction: 'outbound' | 'inbound',
  at: Date,
  countsAsReply = true,
): Promise<void> {
  await db`
    UPDATE outreach_threads SET
      last_message_at = greatest(last_message_at, ${at}),
      ${direction === 'inbound' ? db`unread_count = unread_count + 1, needs_reply = ${countsAsReply}` : db`needs_reply = false`},
      updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId}`;
}

export async function markThreadRead(db: Db, orgId: string, id: string, read: boolean): Promise<ThreadRow | undefined> {
  const [row]: [ThreadRow?] = await db`
    UPDATE outreach_threads SET unread_count = ${read ? 0 : db`greatest(unread_count, 1)`}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} RETURNING *`;
  return row;
}

// --- messages ---

export type MessageStatus = 'reserved' | 'sent' | 'unconfirmed' | 'failed' | 'received';

export interface MessageRow {
  id: string;
  org_id: string;
  thread_id: string;
  mailbox_id: string;
  direction: 'outbound' | 'inbound';
  kind: 'sequence' | 'reply' | 'inbound' | 'bounce';
  enrollment_id: string | null;
  step: number | null;
  variant: number | null;
  idempotency_key: string | null;
  status: MessageStatus;
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  from_address: string;
  to_addresses: string[];
  subject: string;
  text_body: string | null;
  html_body: string | null;
  local_day: string | null;
  sent_at: Date | null;
  received_at: Date | null;
  error: string | null;
  /** Of a received message: what it says (domain/outreach/replies.ts); null on outbound ones. */
  classification: ReplyClass | null;
  created_at: Date;
}

export type NewMessage = Omit<
  MessageRow,
  'org_id' | 'created_at' | 'sent_at' | 'received_at' | 'error' | 'local_day' | 'classification'
> & {
  classification?: ReplyClass | null;
  local_day?: string | null;
  sent_at?: Date | null;
  received_at?: Date | null;
};

/** Inserts a message; undefined when its Message-ID or idempotency key is already stored (a repeat delivery or send). */
export async function insertMessage(db: Db, orgId: string, m: NewMessage): Promise<MessageRow | undefined> {
  try {
    const [row]: [MessageRow?] = await db`
      INSERT INTO outreach_messages (id, org_id, thread_id, mailbox_id, direction, kind, enrollment_id, step, variant, idempotency_key, status,
        message_id, in_reply_to, "references", from_address, to_addresses, subject, text_body, html_body, local_day, sent_at, received_at, classification)
      VALUES (${m.id}, ${orgId}, ${m.thread_id}, ${m.mailbox_id}, ${m.direction}, ${m.kind}, ${m.enrollment_id}, ${m.step}, ${m.variant},
        ${m.idempotency_key}, ${m.status}, ${m.message_id}, ${m.in_reply_to}, ${m.references}::text[], ${m.from_address}, ${m.to_addresses}::text[],
        ${m.subject}, ${m.text_body}, ${m.html_body}, ${m.local_day ?? null}::date, ${m.sent_at ?? null}, ${m.received_at ?? null}, ${m.classification ?? null})
      ON CONFLICT DO NOTHING
      RETURNING *, local_day::text AS local_day`;
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

export async function getMessageByKey(db: Db, orgId: string, key: string): Promise<MessageRow | undefined> {
  const [row]: [MessageRow?] = await db`
    SELECT *, local_day::text AS local_day FROM outreach_messages WHERE org_id = ${orgId} AND idempotency_key = ${key}`;
  return row;
}

export async function setMessageStatus(
  db: Db,
  orgId: string,
  id: string,
  values: { status: MessageStatus; sent_at?: Date | null; error?: string | null },
): Promise<void> {
  await db`
    UPDATE outreach_messages SET status = ${values.status}, sent_at = ${values.sent_at ?? null}, error = ${values.error ?? null}
    WHERE id = ${id} AND org_id = ${orgId}`;
}

/** Messages of the organization carrying any of the Message-IDs. */
export async function messagesByMessageIds(db: Db, orgId: string, messageIds: string[]): Promise<MessageRow[]> {
  if (!messageIds.length) return [];
  return db<MessageRow[]>`
    SELECT *, local_day::text AS local_day FROM outreach_messages WHERE org_id = ${orgId} AND message_id = ANY(${messageIds}::text[])`;
}

export async function threadMessages(db: Db, orgId: string, threadId: string): Promise<MessageRow[]> {
  return db<MessageRow[]>`
    SELECT *, local_day::text AS local_day FROM outreach_messages
    WHERE org_id = ${orgId} AND thread_id = ${threadId}
    ORDER BY coalesce(sent_at, received_at, created_at), id`;
}

/**
 * The thread's latest message a person's reply from the unibox answers: one that went out, or came in
 * from a person or their automatic answer, never a delivery report (a mailer-daemon is no one to answer).
 */
export async function lastDeliveredMessage(db: Db, orgId: string, threadId: string): Promise<MessageRow | undefined> {
  const [row]: [MessageRow?] = await db`
    SELECT *, local_day::text AS local_day FROM outreach_messages
    WHERE org_id = ${orgId} AND thread_id = ${threadId} AND status IN ('sent', 'unconfirmed', 'received') AND kind <> 'bounce'
    ORDER BY coalesce(sent_at, received_at, created_at) DESC, id DESC LIMIT 1`;
  return row;
}

// --- IMAP polling ---

export async function getImapCursor(
  db: Db,
  orgId: string,
  mailboxId: string,
): Promise<{ uid_validity: string; last_uid: number } | undefined> {
  const [row]: [{ uid_validity: string; last_uid: string }?] = await db`
    SELECT uid_validity, last_uid::text AS last_uid FROM outreach_imap_cursors WHERE org_id = ${orgId} AND mailbox_id = ${mailboxId}`;
  return row ? { uid_validity: row.uid_validity, last_uid: Number(row.last_uid) } : undefined;
}

export async function saveImapCursor(db: Db, orgId: string, mailboxId: string, uidValidity: string, lastUid: number): Promise<void> {
  await db`
    INSERT INTO outreach_imap_cursors (mailbox_id, org_id, uid_validity, last_uid) VALUES (${mailboxId}, ${orgId}, ${uidValidity}, ${lastUid})
    ON CONFLICT (mailbox_id) DO UPDATE SET uid_validity = EXCLUDED.uid_validity, last_uid = EXCLUDED.last_uid, polled_at = now()
    WHERE outreach_imap_cursors.org_id = ${orgId}`;
}

export async function threadsByIds(db: Db, orgId: string, ids: string[]): Promise<Map<string, ThreadRow>> {
  if (!ids.length) return new Map();
  const rows = await db<ThreadRow[]>`SELECT * FROM outreach_threads WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Per thread, the latest message we sent (what the next step answers): a step only ever threads on our
 * own mail, never on a delivery report or an automatic answer received in between, so the recipient's
 * thread stays the one they saw and a report about the next step names our message.
 */
export async function lastSentMessages(db: Db, orgId: string, threadIds: string[]): Promise<Map<string, MessageRow>> {
  if (!threadIds.length) return new Map();
  const rows = await db<MessageRow[]>`
    SELECT DISTINCT ON (thread_id) *, local_day::text AS local_day FROM outreach_messages
    WHERE org_id = ${orgId} AND thread_id = ANY(${threadIds}::uuid[]) AND direction = 'outbound' AND status IN ('sent', 'unconfirmed')
    ORDER BY thread_id, coalesce(sent_at, created_at) DESC, id DESC`;
  return new Map(rows.map((r) => [r.thread_id, r]));
}

/**
 * A send the server refused before accepting it: failed, its idempotency key freed for a later attempt.
 * A refusal at the recipient or the message (`report`) records what the server said and counts as one
 * soft bounce of the address (db/outreach/inbound.ts countSoftBounces).
 */
export async function failBeforeAcceptance(
  db: Db,
  orgId: string,
  id: string,
  error: string,
  report: { status: string | null; diagnostic: string } | null = null,
): Promise<void> {
  await db`
    UPDATE outreach_messages SET status = 'failed', error = ${error}, idempotency_key = idempotency_key || ':failed:' || id::text
      ${report ? db`, delivery_status = ${report.status?.slice(0, 20) ?? null}, delivery_action = 'delayed', delivery_diagnostic = ${report.diagnostic.slice(0, 500)}, soft_bounces = 1` : db``}
    WHERE id = ${id} AND org_id = ${orgId}`;
}

/** Attempts at one step of an enrollment the server refused (each is a failed row of its own). */
export async function failedAttempts(db: Db, orgId: string, enrollmentId: string, step: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_messages
    WHERE org_id = ${orgId} AND enrollment_id = ${enrollmentId} AND step = ${step} AND direction = 'outbound' AND status = 'failed'`;
  return row!.n;
}

/** Mailboxes of the organization among `ids`, as the sender reads them, without a lock (a read that shows when it sends). */
export async function poolMailboxes(db: Db, orgId: string, ids: string[]): Promise<PoolMailbox[]> {
  if (!ids.length) return [];
  return db<PoolMailbox[]>`SELECT ${MAILBOX_COLUMNS(db)} FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[])`;
}

/** Per enrollment, the attempts at its current step the server refused (`enrollment_id|step` → count). */
export async function refusedAttempts(
  db: Db,
  orgId: string,
  steps: { enrollment_id: string; step: number }[],
): Promise<Map<string, number>> {
  if (!steps.length) return new Map();
  const rows = await db<{ enrollment_id: string; step: number; n: number }[]>`
    SELECT m.enrollment_id, m.step, count(*)::int AS n
    FROM outreach_messages m
    JOIN (SELECT unnest(${steps.map((s) => s.enrollment_id)}::uuid[]) AS enrollment_id, unnest(${steps.map((s) => s.step)}::int[]) AS step) s
      ON s.enrollment_id = m.enrollment_id AND s.step = m.step
    WHERE m.org_id = ${orgId} AND m.direction = 'outbound' AND m.status = 'failed'
    GROUP BY m.enrollment_id, m.step`;
  return new Map(rows.map((r) => [`${r.enrollment_id}|${r.step}`, r.n]));
}
