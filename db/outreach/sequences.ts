import type { EnrollmentStatus, SequenceStatus } from '../../domain/outreach/sequences';
import { newId } from '../../platform/core/ids';
import type { Db } from '../client';
import { keysetRows } from '../kit/keyset';
import { setColumns } from '../kit/partial-update';

// SQL of outreach sequences and their enrollments: every function takes (db, orgId, ...ids) and filters
// by org_id; the service decides the transaction.

export interface StepVariant {
  subject: string | null;
  body: string;
  body_html: string | null;
}
export interface SequenceStep extends StepVariant {
  delay_days: number;
  variants: StepVariant[];
}

export interface SequenceRow {
  id: string;
  org_id: string;
  name: string;
  status: SequenceStatus;
  steps: SequenceStep[];
  mailbox_ids: string[];
  stop_on_reply: boolean;
  start_at: Date | null;
  rotation: number;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
  completed_at: Date | null;
  archived_at: Date | null;
  cursor_t?: string;
}

export interface EnrollmentRow {
  id: string;
  org_id: string;
  sequence_id: string;
  contact_id: string;
  status: EnrollmentStatus;
  next_step: number;
  next_send_at: Date | null;
  thread_id: string | null;
  last_sent_at: Date | null;
  stopped_at: Date | null;
  /** The one-click unsubscribe capability named in every step's List-Unsubscribe header. */
  unsubscribe_token: string;
  unsubscribed_at: Date | null;
  /** An automatic answer holds the next step until then (see migration 0040). */
  paused_until: Date | null;
  pause_reason: 'out_of_office' | 'auto_reply' | null;
  created_at: Date;
  updated_at: Date;
  cursor_t?: string;
}

export interface SequenceValues {
  name?: string;
  steps?: SequenceStep[];
  mailbox_ids?: string[];
  stop_on_reply?: boolean;
  start_at?: string | null;
}

export async function insertSequence(db: Db, orgId: string, values: Required<SequenceValues>, actor: string): Promise<SequenceRow> {
  const [row] = await db<SequenceRow[]>`
    INSERT INTO outreach_sequences (id, org_id, name, steps, mailbox_ids, stop_on_reply, start_at, created_by, modified_by)
    VALUES (${newId()}, ${orgId}, ${values.name}, ${db.json(values.steps as never)}, ${values.mailbox_ids}::uuid[],
            ${values.stop_on_reply}, ${values.start_at}, ${actor}, ${actor})
    RETURNING *`;
  return row!;
}

export async function getSequence(db: Db, orgId: string, id: string, lock = false): Promise<SequenceRow | undefined> {
  const [row]: [SequenceRow?] = await db`
    SELECT * FROM outreach_sequences WHERE id = ${id} AND org_id = ${orgId} ${lock ? db`FOR UPDATE` : db``}`;
  return row;
}

export async function updateSequence(
  db: Db,
  orgId: string,
  id: string,
  values: SequenceValues,
  actor: string,
): Promise<SequenceRow | undefined> {
  const [row]: [SequenceRow?] = await db`
    UPDATE outreach_sequences SET ${setColumns(db, { ...values, modified_by: actor }, ['name', 'stop_on_reply', 'start_at', 'modified_by'])}, updated_at = now()
      ${values.steps !== undefined ? db`, steps = ${db.json(values.steps as never)}` : db``}
      ${values.mailbox_ids !== undefined ? db`, mailbox_ids = ${values.mailbox_ids}::uuid[]` : db``}
    WHERE id = ${id} AND org_id = ${orgId}
    RETURNING *`;
  return row;
}

export async function listSequences(
  db: Db,
  orgId: string,
  filters: { status?: SequenceStatus; limit: number; after?: { t: string; id: string } },
): Promise<SequenceRow[]> {
  return keysetRows<SequenceRow>(db, {
    select: db`*`,
    from: db`outreach_sequences`,
    where: db`org_id = ${orgId} ${filters.status ? db`AND status = ${filters.status}` : db``}`,
    limit: filters.limit,
    after: filters.after,
  });
}

export async function countSequences(db: Db, orgId: string, status?: SequenceStatus): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_sequences WHERE org_id = ${orgId} ${status ? db`AND status = ${status}` : db``}`;
  return row!.n;
}

/**
 * Moves a sequence to `move.to` only from a status the state table allows, so the row never takes a
 * forbidden move whoever writes it; undefined when the row is elsewhere (or not in the organization).
 */
export async function setSequenceStatus(
  db: Db,
  orgId: string,
  id: string,
  move: { from: readonly SequenceStatus[]; to: SequenceStatus },
  actor: string | null,
): Promise<SequenceRow | undefined> {
  const stamp =
    move.to === 'active'
      ? db`, activated_at = coalesce(activated_at, now())`
      : move.to === 'completed'
        ? db`, completed_at = now()`
        : move.to === 'archived'
          ? db`, archived_at = now()`
          : db``;
  const [row]: [SequenceRow?] = await db`
    UPDATE outreach_sequences SET status = ${move.to}, updated_at = now() ${stamp}
      ${actor ? db`, modified_by = ${actor}` : db``}
    WHERE id = ${id} AND org_id = ${orgId} AND status = ANY(${move.from as SequenceStatus[]}::text[])
    RETURNING *`;
  return row;
}

/** Advances the round-robin position by `by`; the position before. */
export async function advanceRotation(db: Db, orgId: string, id: string, by: number): Promise<number> {
  const [row]: [{ rotation: number }?] = await db`
    UPDATE outreach_sequences SET rotation = rotation + ${by} WHERE id = ${id} AND org_id = ${orgId} RETURNING rotation - ${by} AS rotation`;
  return row?.rotation ?? 0;
}

// --- enrollments ---

/** Contacts of the organization among `ids`, with what templates and sending need. */
export interface EnrollableContact {
  id: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  title: string | null;
  department: string | null;
  phone: string | null;
  account_id: string | null;
}

export async function contactsInOrg(db: Db, orgId: string, ids: string[]): Promise<EnrollableContact[]> {
  if (!ids.length) return [];
  return db<EnrollableContact[]>`
    SELECT id, email, first_name, last_name, company, title, department, phone, account_id
    FROM contacts WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[]) FOR SHARE`;
}

export async function getContactForSend(db: Db, orgId: string, id: string): Promise<EnrollableContact | undefined> {
  const [row]: [EnrollableContact?] = await db`
    SELECT id, email, first_name, last_name, company, title, department, phone, account_id FROM contacts WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

/** Inserts enrollments, skipping contacts already in the sequence; the ids inserted. */
export async function insertEnrollments(
  db: Db,
  orgId: string,
  sequenceId: string,
  contactIds: string[],
  firstDueAt: Date,
): Promise<EnrollmentRow[]> {
  if (!contactIds.length) return [];
  const rows = contactIds.map((contactId) => ({
    id: newId(),
    org_id: orgId,
    sequence_id: sequenceId,
    contact_id: contactId,
    next_send_at: firstDueAt,
  }));
  return db<EnrollmentRow[]>`
    INSERT INTO outreach_enrollments ${db(rows)}
    ON CONFLICT (sequence_id, contact_id) DO NOTHING
    RETURNING *`;
}

export async function getEnrollment(
  db: Db,
  orgId: string,
  sequenceId: string,
  id: string,
  lock = false,
): Promise<EnrollmentRow | undefined> {
  const [row]: [EnrollmentRow?] = await db`
    SELECT * FROM outreach_enrollments WHERE id = ${id} AND sequence_id = ${sequenceId} AND org_id = ${orgId} ${lock ? db`FOR UPDATE` : db``}`;
  return row;
}

export async function getEnrollmentById(db: Db, orgId: string, id: string, lock = false): Promise<EnrollmentRow | undefined> {
  const [row]: [EnrollmentRow?] = await db`
    SELECT * FROM outreach_enrollments WHERE id = ${id} AND org_id = ${orgId} ${lock ? db`FOR UPDATE` : db``}`;
  return row;
}

export async function listEnrollments(
  db: Db,
  orgId: string,
  sequenceId: string,
  filters: { status?: EnrollmentStatus; limit: number; after?: { t: string; id: string } },
): Promise<EnrollmentRow[]> {
  return keysetRows<EnrollmentRow>(db, {
    select: db`*`,
    from: db`outreach_enrollments`,
    where: db`org_id = ${orgId} AND sequence_id = ${sequenceId} ${filters.status ? db`AND status = ${filters.status}` : db``}`,
    order: 'asc',
    limit: filters.limit,
    after: filters.after,
  });
}

export async function countEnrollments(db: Db, orgId: string, sequenceId: string, status?: EnrollmentStatus): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_enrollments
    WHERE org_id = ${orgId} AND sequence_id = ${sequenceId} ${status ? db`AND status = ${status}` : db``}`;
  return row!.n;
}

/** Enrollment counts by status. */
export async function enrollmentStats(db: Db, orgId: string, sequenceId: string): Promise<Record<string, number>> {
  const rows = await db<{ status: string; n: number }[]>`
    SELECT status, count(*)::int AS n FROM outreach_enrollments WHERE org_id = ${orgId} AND sequence_id = ${sequenceId} GROUP BY status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Stops an active enrollment (removed, replied, bounced, failed); undefined when it was not active. */
export async function stopEnrollment(db: Db, orgId: string, id: string, status: EnrollmentStatus): Promise<EnrollmentRow | undefined> {
  const [row]: [EnrollmentRow?] = await db`
    UPDATE outreach_enrollments SET status = ${status}, next_send_at = NULL, stopped_at = now(), updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} AND status = 'active'
    RETURNING *`;
  return row;
}

/** Due enrollments of an active sequence, earliest first, locked (others skip them). */
export async function lockDueEnrollments(db: Db, orgId: string, sequenceId: string, now: Date, limit: number): Promise<EnrollmentRow[]> {
  return db<EnrollmentRow[]>`
    SELECT * FROM outreach_enrollments
    WHERE org_id = ${orgId} AND sequence_id = ${sequenceId} AND status = 'active' AND next_send_at <= ${now}
    ORDER BY next_send_at, id
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

/** The earliest due time of the sequence's active enrollments, or null when none is left. */
export async function nextDueAt(db: Db, orgId: string, sequenceId: string): Promise<Date | null> {
  const [row] = await db<{ at: Date | null }[]>`
    SELECT min(next_send_at) AS at FROM outreach_enrollments WHERE org_id = ${orgId} AND sequence_id = ${sequenceId} AND status = 'active'`;
  return row?.at ?? null;
}

export async function rescheduleEnrollments(db: Db, orgId: string, later: { id: string; at: Date }[]): Promise<void> {
  if (!later.length) return;
  await db`
    UPDATE outreach_enrollments e SET next_send_at = v.at::timestamptz, updated_at = now()
    FROM (SELECT unnest(${later.map((l) => l.id)}::uuid[]) AS id, unnest(${later.map((l) => l.at.toISOString())}::text[]) AS at) v
    WHERE e.id = v.id AND e.org_id = ${orgId} AND e.status = 'active'`;
}

/** Records a step sent: the enrollment's thread, next step and due time (or completion). */
export async function advanceEnrollment(
  db: Db,
  orgId: string,
  id: string,
  step: number,
  values: { status: EnrollmentStatus; next_step: number; next_send_at: Date | null; thread_id: string; sent_at: Date },
): Promise<boolean> {
  const rows = await db`
    UPDATE outreach_enrollments
    SET status = ${values.status}, next_step = ${values.next_step}, next_send_at = ${values.next_send_at}, thread_id = ${values.thread_id},
        last_sent_at = ${values.sent_at}, stopped_at = ${values.status === 'active' ? null : values.sent_at}, updated_at = now()
    WHERE id = ${id} AND org_id = ${orgId} AND status = 'active' AND next_step = ${step}`;
  return rows.count > 0;
}

export async function setEnrollmentThread(db: Db, orgId: string, id: string, threadId: string): Promise<void> {
  await db`UPDATE outreach_enrollments SET thread_id = ${threadId}, updated_at = now() WHERE id = ${id} AND org_id = ${orgId}`;
}

/** Contacts of the organization by id, with what templates and sending need. */
export async function contactsForSend(db: Db, orgId: string, ids: string[]): Promise<Map<string, EnrollableContact>> {
  if (!ids.length) return new Map();
  const rows = await db<EnrollableContact[]>`
    SELECT id, email, first_name, last_name, company, title, department, phone, account_id
    FROM contacts WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

/** Stops every active enrollment of a sequence that will send no more (completed or archived by hand). */
export async function stopActiveEnrollments(db: Db, orgId: string, sequenceId: string, status: EnrollmentStatus): Promise<number> {
  const rows = await db`
    UPDATE outreach_enrollments SET status = ${status}, next_send_at = NULL, stopped_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND sequence_id = ${sequenceId} AND status = 'active'`;
  return rows.count;
}

/** Names of the sequences still able to send (draft, active, paused) whose pool holds the mailbox. */
export async function sequencesUsingMailbox(db: Db, orgId: string, mailboxId: string): Promise<string[]> {
  const rows = await db<{ name: string }[]>`
    SELECT name FROM outreach_sequences
    WHERE org_id = ${orgId} AND ${mailboxId}::uuid = ANY(mailbox_ids) AND status IN ('draft', 'active', 'paused')
    ORDER BY created_at, id`;
  return rows.map((r) => r.name);
}

/** The enrollment an unsubscribe token names, with its contact's address; across organizations (the token is the capability). */
export async function findByUnsubscribeToken(
  db: Db,
  token: string,
  lock = false,
): Promise<(EnrollmentRow & { email: string | null }) | undefined> {
  const [row]: [(EnrollmentRow & { email: string | null })?] = await db`
    SELECT e.*, c.email FROM outreach_enrollments e JOIN contacts c ON c.id = e.contact_id AND c.org_id = e.org_id
    WHERE e.unsubscribe_token = ${token} ${lock ? db`FOR UPDATE OF e` : db``}`;
  return row;
}

/** Records the unsubscribe (the first time only) and stops the enrollment if it still had steps to send. */
export async function markUnsubscribed(db: Db, orgId: string, id: string): Promise<void> {
  await db`
    UPDATE outreach_enrollments
    SET unsubscribed_at = coalesce(unsubscribed_at, now()), updated_at = now(),
        status = CASE WHEN status = 'active' THEN 'suppressed' ELSE status END,
        next_send_at = CASE WHEN status = 'active' THEN NULL ELSE next_send_at END,
        stopped_at = CASE WHEN status = 'active' THEN now() ELSE stopped_at END
    WHERE id = ${id} AND org_id = ${orgId}`;
}
