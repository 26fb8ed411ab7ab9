import type { Db } from '../../db/client';
import { mailboxesInOrg } from '../../db/outreach/messages';
import * as db from '../../db/outreach/sequences';
import { suppressedAmong } from '../../db/outreach/suppressions';
import type { EnrollmentRow, SequenceRow, SequenceStep, SequenceValues } from '../../db/outreach/sequences';
import { conflict, notFound, unprocessable, type FieldIssue } from '../../domain/errors';
import {
  ACCEPTS_ENROLLMENTS,
  EDITABLE,
  RENAMABLE,
  SEQUENCE_MOVES,
  sequenceMoveRefusal,
  type EnrollmentStatus,
  type SequenceMove,
  type SequenceStatus,
} from '../../domain/outreach/sequences';
import type { NextSend } from '../../domain/outreach/next-send';
import { unknownVariables } from '../../domain/outreach/templates';
import type { Config } from '../../platform/core/config';
import {
  imapPollerWorkflowId,
  outreachImapPollerWorkflow,
  outreachSequenceSenderWorkflow,
  sequenceWorkflowId,
  wakeSequenceSignal,
  type SequenceSenderInput,
} from '../../workflows/outreach-messages';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { iso } from '../views';
import { nextSends } from './next-send';
import { signalWithStart, startWorkflow } from '../workflow-client';

// Outreach sequences and their enrollments: definitions, the lifecycle (a state table in domain/, the
// sender workflow started in the transaction that activates), adding and removing contacts.

export interface StepInput {
  delay_days: number;
  subject?: string | null;
  body: string;
  body_html?: string | null;
  variants?: { subject?: string | null; body: string; body_html?: string | null }[];
}

export interface SequenceInput {
  name?: string;
  steps?: StepInput[];
  mailbox_ids?: string[];
  stop_on_reply?: boolean;
  start_at?: string | null;
}

export function sequenceView(row: SequenceRow, stats?: Record<string, number>) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    steps: row.steps.map((s, index) => ({
      index,
      delay_days: s.delay_days,
      subject: s.subject,
      body: s.body,
      body_html: s.body_html,
      variants: s.variants,
    })),
    mailbox_ids: row.mailbox_ids,
    stop_on_reply: row.stop_on_reply,
    start_at: iso(row.start_at),
    ...(stats ? { enrollment_counts: stats } : {}),
    created_by: row.created_by,
    modified_by: row.modified_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    activated_at: iso(row.activated_at),
    completed_at: iso(row.completed_at),
    archived_at: iso(row.archived_at),
  };
}

/**
 * An enrollment as read. `next` is its next send as the sender would make it (services/outreach/next-send.ts):
 * the time and why then; without it (a final enrollment) the stored due time and no reason.
 */
export function enrollmentView(row: EnrollmentRow, next?: NextSend, now = new Date()) {
  // Why an active enrollment waits, while it does: an automatic answer's pause until its return date.
  const paused = row.status === 'active' && !!row.paused_until && row.paused_until.getTime() > now.getTime();
  return {
    id: row.id,
    sequence_id: row.sequence_id,
    contact_id: row.contact_id,
    status: row.status,
    next_step: row.next_step,
    next_send_at: iso(next ? next.at : row.next_send_at),
    next_send_reason: next?.reason ?? null,
    thread_id: row.thread_id,
    last_sent_at: iso(row.last_sent_at),
    stopped_at: iso(row.stopped_at),
    paused_until: paused ? iso(row.paused_until) : null,
    pause_reason: paused ? row.pause_reason : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Steps as stored; a template naming a variable the service does not know is a 422 pointing at it. */
function storedSteps(steps: StepInput[]): SequenceStep[] {
  const issues: FieldIssue[] = [];
  const check = (text: string | null | undefined, loc: (string | number)[]) => {
    for (const name of unknownVariables(text ?? ''))
      issues.push({ loc: ['body', 'steps', ...loc], msg: `Unknown template variable: ${name}` });
  };
  const stored = steps.map((s, i) => {
    for (const field of ['subject', 'body', 'body_html'] as const) check(s[field], [i, field]);
    (s.variants ?? []).forEach((v, j) => {
      for (const field of ['subject', 'body', 'body_html'] as const) check(v[field], [i, 'variants', j, field]);
    });
    return {
      delay_days: s.delay_days,
      subject: s.subject ?? null,
      body: s.body,
      body_html: s.body_html ?? null,
      variants: (s.variants ?? []).map((v) => ({ subject: v.subject ?? null, body: v.body, body_html: v.body_html ?? null })),
    };
  });
  if (stored[0] && !stored[0].subject?.trim()) issues.push({ loc: ['body', 'steps', 0, 'subject'], msg: 'The first step needs a subject' });
  stored[0]?.variants.forEach((v, j) => {
    if (!v.subject?.trim()) issues.push({ loc: ['body', 'steps', 0, 'variants', j, 'subject'], msg: 'The first step needs a subject' });
  });
  if (issues.length) throw unprocessable(issues);
  return stored;
}

async function checkMailboxes(tx: Db, orgId: string, ids: string[] | undefined): Promise<void> {
  if (!ids?.length) return;
  const found = await mailboxesInOrg(tx, orgId, ids);
  if (ids.some((id) => !found.has(id))) throw notFound('Mailbox not found');
}

async function sequenceOf(tx: Db, orgId: string, id: string, lock = false): Promise<SequenceRow> {
  const row = await db.getSequence(tx, orgId, id, lock);
  if (!row) throw notFound('Sequence not found');
  return row;
}

export async function createSequence(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: Required<Pick<SequenceInput, 'name'>> & SequenceInput,
) {
  const steps = storedSteps(input.steps ?? []);
  const row = await deps.sql.begin(async (tx) => {
    await checkMailboxes(tx, orgId, input.mailbox_ids);
    return db.insertSequence(
      tx,
      orgId,
      {
        name: input.name,
        steps,
        mailbox_ids: [...new Set(input.mailbox_ids ?? [])],
        stop_on_reply: input.stop_on_reply ?? true,
        start_at: input.start_at ?? null,
      },
      actor,
    );
  });
  return sequenceView(row, {});
}

export async function getSequence(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  const row = await sequenceOf(deps.sql, orgId, id);
  return sequenceView(row, await db.enrollmentStats(deps.sql, orgId, id));
}

export async function listSequences(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  q: { status?: SequenceStatus; limit: number; cursor?: string },
) {
  const after = decodeCursor(q.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    db.listSequences(deps.sql, orgId, { status: q.status, limit: q.limit, after }),
    db.countSequences(deps.sql, orgId, q.status),
  ]);
  return cursorPage(
    rows,
    q.limit,
    total,
    (last) => ({ t: last.cursor_t!, id: last.id }),
    (r) => sequenceView(r),
  );
}

/** Steps, pool and schedule change while the sequence is draft or paused; the name in any status but archived (409 otherwise). */
export async function updateSequence(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, id: string, input: SequenceInput) {
  const values: SequenceValues = {
    name: input.name,
    stop_on_reply: input.stop_on_reply,
    start_at: input.start_at,
    mailbox_ids: input.mailbox_ids ? [...new Set(input.mailbox_ids)] : undefined,
    steps: input.steps ? storedSteps(input.steps) : undefined,
  };
  const row = await deps.sql.begin(async (tx) => {
    const current = await sequenceOf(tx, orgId, id, true);
    const editsDefinition =
      input.steps !== undefined || input.mailbox_ids !== undefined || input.start_at !== undefined || input.stop_on_reply !== undefined;
    if (editsDefinition && !EDITABLE.includes(current.status))
      throw conflict(`Cannot edit the steps, mailboxes or schedule of a sequence that is ${current.status}`);
    if (!RENAMABLE.includes(current.status)) throw conflict(`Cannot edit a sequence that is ${current.status}`);
    await checkMailboxes(tx, orgId, values.mailbox_ids);
    return (await db.updateSequence(tx, orgId, id, values, actor))!;
  });
  return sequenceView(row, await db.enrollmentStats(deps.sql, orgId, id));
}

// --- lifecycle ---

export function senderInput(
  config: Pick<Config, 'OUTREACH_POLL_INTERVAL_MS' | 'OUTREACH_CYCLES_PER_RUN'>,
  orgId: string,
  sequenceId: string,
): SequenceSenderInput {
  return {
    orgId,
    sequenceId,
    settings: { pollIntervalMs: config.OUTREACH_POLL_INTERVAL_MS, cyclesPerRun: config.OUTREACH_CYCLES_PER_RUN },
  };
}

/** Wakes the sequence's sender, starting it when it is not running (the signal is in its history once this returns). */
export async function wakeSender(deps: Pick<ServiceDeps, 'temporal' | 'config'>, orgId: string, sequenceId: string): Promise<void> {
  await signalWithStart(deps, outreachSequenceSenderWorkflow, orgId, {
    workflowId: sequenceWorkflowId(sequenceId),
    args: [senderInput(deps.config, orgId, sequenceId)],
    signal: wakeSequenceSignal,
    signalArgs: [],
  });
}

/**
 * Makes sure each mailbox of the pool has its IMAP poller (replies and bounces reach their threads even
 * without the inbound-mail webhook); a running poller is kept, and one for a mailbox without IMAP
 * settings ends at its first poll.
 */
export async function startImapPollers(deps: Pick<ServiceDeps, 'temporal' | 'config'>, orgId: string, mailboxIds: string[]): Promise<void> {
  for (const mailboxId of mailboxIds) {
    await startWorkflow(deps, outreachImapPollerWorkflow, orgId, {
      workflowId: imapPollerWorkflowId(mailboxId),
      args: [{ orgId, mailboxId, intervalMs: deps.config.OUTREACH_IMAP_POLL_SECONDS * 1000, cyclesPerRun: 100 }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }
}

/**
 * A lifecycle move, refused (409) when the state table does not allow it from the current status.
 * Activating or resuming starts (or wakes) the sender inside the transaction that writes the status:
 * Temporal unreachable rolls the move back (503), so an active sequence never lacks its sender. Other
 * moves wake it best-effort; it sees the new status on its next cycle anyway.
 */
export async function moveSequence(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  id: string,
  move: SequenceMove,
) {
  const row = await deps.sql.begin(async (tx) => {
    const current = await sequenceOf(tx, orgId, id, true);
    const refusal = sequenceMoveRefusal(move, current.status);
    if (refusal) throw conflict(refusal);
    if (SEQUENCE_MOVES[move].to === 'active') {
      const issues: FieldIssue[] = [];
      if (!current.steps.length) issues.push({ loc: ['body', 'steps'], msg: 'A sequence needs at least one step to send' });
      if (!current.mailbox_ids.length) issues.push({ loc: ['body', 'mailbox_ids'], msg: 'A sequence needs at least one mailbox to send' });
      if (issues.length) throw conflict(`Cannot ${move} the sequence: ${issues.map((i) => i.msg.toLowerCase()).join('; ')}`);
    }
    const moved = (await db.setSequenceStatus(tx, orgId, id, SEQUENCE_MOVES[move], actor))!;
    // A sequence that sends no more leaves no enrollment waiting for a step.
    if (moved.status === 'completed' || moved.status === 'archived') await db.stopActiveEnrollments(tx, orgId, id, 'removed');
    if (moved.status === 'active') {
      await wakeSender(deps, orgId, id);
      await startImapPollers(deps, orgId, moved.mailbox_ids);
    }
    return moved;
  });
  if (row.status !== 'active') {
    await wakeSender(deps, orgId, id).catch((error) => deps.logger.warn({ err: error, sequenceId: id }, 'outreach sender not woken'));
  }
  return sequenceView(row, await db.enrollmentStats(deps.sql, orgId, id));
}

// --- enrollments ---

export async function enrollContacts(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  sequenceId: string,
  contactIds: string[],
) {
  const ids = [...new Set(contactIds)];
  const result = await deps.sql.begin(async (tx) => {
    const sequence = await sequenceOf(tx, orgId, sequenceId, true);
    if (!ACCEPTS_ENROLLMENTS.includes(sequence.status)) throw conflict(`Cannot enroll contacts in a sequence that is ${sequence.status}`);
    const contacts = await db.contactsInOrg(tx, orgId, ids);
    if (contacts.length !== ids.length) throw notFound('Contact not found');
    const suppressed = await suppressedAmong(tx, orgId, contacts.map((c) => c.email ?? '').filter(Boolean));
    const isSuppressed = (c: { email: string | null }) => !!c.email && suppressed.has(c.email.trim().toLowerCase());
    const withEmail = contacts.filter((c) => c.email?.trim() && !isSuppressed(c));
    const now = new Date();
    const firstDue = sequence.start_at && sequence.start_at > now ? sequence.start_at : now;
    const firstDelay = sequence.steps[0]?.delay_days ?? 0;
    const inserted = await db.insertEnrollments(
      tx,
      orgId,
      sequenceId,
      ids.filter((id) => withEmail.some((c) => c.id === id)),
      new Date(firstDue.getTime() + firstDelay * 86_400_000),
    );
    const added = new Set(inserted.map((e) => e.contact_id));
    const skipped = ids
      .filter((id) => !added.has(id))
      .map((id) => {
        const contact = contacts.find((c) => c.id === id)!;
        const reason = isSuppressed(contact)
          ? ('suppressed' as const)
          : withEmail.includes(contact)
            ? ('already_enrolled' as const)
            : ('no_email' as const);
        return { contact_id: id, reason };
      });
    return { inserted, skipped, status: sequence.status, sequence };
  });
  if (result.status === 'active' && result.inserted.length) {
    await wakeSender(deps, orgId, sequenceId).catch((error) => deps.logger.warn({ err: error, sequenceId }, 'outreach sender not woken'));
  }
  const next = await nextSends(deps.sql, orgId, result.sequence, result.inserted);
  return { enrolled: result.inserted.map((r) => enrollmentView(r, next.get(r.id))), skipped: result.skipped };
}

export async function listEnrollments(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  sequenceId: string,
  q: { status?: EnrollmentStatus; limit: number; cursor?: string },
) {
  const sequence = await sequenceOf(deps.sql, orgId, sequenceId);
  const after = decodeCursor(q.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    db.listEnrollments(deps.sql, orgId, sequenceId, { status: q.status, limit: q.limit, after }),
    db.countEnrollments(deps.sql, orgId, sequenceId, q.status),
  ]);
  const next = await nextSends(deps.sql, orgId, sequence, rows);
  return cursorPage(
    rows,
    q.limit,
    total,
    (last) => ({ t: last.cursor_t!, id: last.id }),
    (r) => enrollmentView(r, next.get(r.id)),
  );
}

export async function getEnrollment(deps: Pick<ServiceDeps, 'sql'>, orgId: string, sequenceId: string, id: string) {
  const row = await db.getEnrollment(deps.sql, orgId, sequenceId, id);
  if (!row) throw notFound('Enrollment not found');
  const sequence = await sequenceOf(deps.sql, orgId, sequenceId);
  return enrollmentView(row, (await nextSends(deps.sql, orgId, sequence, [row])).get(row.id));
}

/** Takes a contact out of the sequence: no further step goes out; its thread stays. A final enrollment is a 409. */
export async function removeEnrollment(deps: Pick<ServiceDeps, 'sql'>, orgId: string, sequenceId: string, id: string) {
  return deps.sql.begin(async (tx) => {
    const row = await db.getEnrollment(tx, orgId, sequenceId, id, true);
    if (!row) throw notFound('Enrollment not found');
    if (row.status !== 'active') throw conflict(`Cannot remove an enrollment that is ${row.status}`);
    return enrollmentView((await db.stopEnrollment(tx, orgId, id, 'removed'))!);
  });
}
