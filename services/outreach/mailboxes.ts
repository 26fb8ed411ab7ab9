import type { Db } from '../../db/client';
import * as credentials from '../../db/credentials';
import * as mailboxes from '../../db/outreach/mailboxes';
import * as sequences from '../../db/outreach/sequences';
import type { MailboxRow, MailboxSettings } from '../../db/outreach/mailboxes';
import { conflict, invalid, notFound } from '../../domain/errors';
import {
  canonicalTimeZone,
  dailyCap,
  domainOf,
  localDay,
  mailboxMove,
  warmupToday,
  type MailboxOutcome,
} from '../../domain/outreach/mailboxes';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// Outreach mailboxes: their settings (limits, window, warm-up, spacing), pause/resume, deletion and
// health. Connecting and provisioning: outreach-mailbox-provisioning.ts; the mail servers:
// outreach-mailbox-servers.ts; sending: outreach-mailbox-sender.ts; passwords: outreach-mailbox-secrets.ts.

export type { MailboxRow };
export const mailboxNotFound = () => notFound('Mailbox not found');

export function mailboxView(row: MailboxRow) {
  return {
    id: row.id,
    organization_id: row.org_id,
    email_address: row.email_address,
    display_name: row.display_name,
    kind: row.kind,
    origin: row.origin,
    provider: row.provider,
    domain_id: row.domain_id,
    status: row.status,
    daily_limit: row.daily_limit,
    window_start: row.window_start,
    window_end: row.window_end,
    window_days: row.window_days,
    timezone: row.timezone,
    warmup_enabled: row.warmup_enabled,
    warmup_started_at: iso(row.warmup_started_at),
    warmup_start_per_day: row.warmup_start_per_day,
    warmup_days: row.warmup_days,
    send_gap: { min_seconds: row.send_gap_min_seconds, max_seconds: row.send_gap_max_seconds },
    smtp: row.smtp_host ? { host: row.smtp_host, port: row.smtp_port!, secure: row.smtp_secure!, username: row.smtp_username } : null,
    imap: row.imap_host ? { host: row.imap_host, port: row.imap_port!, secure: row.imap_secure!, username: row.imap_username } : null,
    has_password: row.credential_id !== null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
  };
}

export interface SendGap {
  min_seconds: number;
  max_seconds: number;
}
/** The columns of a spacing given by the API (absent: the table's defaults, or unchanged). */
export const gapColumns = (gap: SendGap | undefined) =>
  gap ? { send_gap_min_seconds: gap.min_seconds, send_gap_max_seconds: gap.max_seconds } : {};

export function checkedTimeZone(zone: string | undefined): string | undefined {
  if (zone === undefined) return undefined;
  const canonical = canonicalTimeZone(zone);
  if (!canonical) throw invalid(`Unknown time zone '${zone}': expected an IANA name such as Europe/Paris`);
  return canonical;
}

export function checkWindow(start: string, end: string) {
  if (start >= end) throw invalid('window_start must be before window_end');
}

// --- Reads and settings ------------------------------------------------------------------------------

export async function listMailboxes(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { status?: 'active' | 'paused'; domain_id?: string; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await mailboxes.listMailboxes(
    deps.sql,
    orgId,
    { status: query.status, domainId: query.domain_id },
    { limit: query.limit, after },
  );
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), mailboxView);
}

export async function getMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string) {
  const row = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!row) throw mailboxNotFound();
  return mailboxView(row);
}

export type MailboxPatch = Omit<MailboxSettings, 'send_gap_min_seconds' | 'send_gap_max_seconds'> & { send_gap?: SendGap };

export async function updateMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string, patch: MailboxPatch) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body');
  const timezone = checkedTimeZone(patch.timezone);
  const row = await deps.sql.begin(async (tx) => {
    const before = await mailboxes.getMailbox(tx, orgId, mailboxId, { lock: true });
    if (!before) throw mailboxNotFound();
    checkWindow(patch.window_start ?? before.window_start, patch.window_end ?? before.window_end);
    // Switching warm-up on starts its ramp today; off forgets it; on while on keeps the ramp where it is.
    const warmupStart =
      patch.warmup_enabled === undefined || patch.warmup_enabled === before.warmup_enabled
        ? {}
        : { warmup_started_at: patch.warmup_enabled ? new Date() : null };
    const { send_gap, ...settings } = patch;
    return (await mailboxes.updateMailbox(tx, orgId, mailboxId, {
      ...settings,
      ...gapColumns(send_gap),
      ...warmupStart,
      ...(timezone ? { timezone } : {}),
    }))!;
  });
  return mailboxView(row);
}

/** Pause or resume; a mailbox already in the target state is a 409. */
export async function moveMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string, move: 'pause' | 'resume') {
  const row = await deps.sql.begin(async (tx) => {
    const before = await mailboxes.getMailbox(tx, orgId, mailboxId, { lock: true });
    if (!before) throw mailboxNotFound();
    const next = mailboxMove(before.status, move);
    if (!next) throw conflict(`Cannot ${move} a mailbox that is ${before.status}`);
    return (await mailboxes.setMailboxStatus(tx, orgId, mailboxId, next))!;
  });
  return mailboxView(row);
}

/** Deletes the mailbox and its password credential together. */
export async function deleteMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    // A sequence that can still send keeps its pool: deleting a mailbox under it would stall its sends.
    const users = await sequences.sequencesUsingMailbox(tx, orgId, mailboxId);
    const row = await mailboxes.deleteMailbox(tx, orgId, mailboxId);
    if (!row) throw mailboxNotFound();
    if (users.length)
      throw conflict(
        `The mailbox is in the pool of ${users.length} sequence(s) that can still send (${users.slice(0, 3).join(', ')}): remove it from their pools, or complete or archive them, first`,
      );
    if (row.credential_id) await credentials.deleteCredential(tx, orgId, row.credential_id);
  });
}

/** Bounces, failures, and what went out on the mailbox's local day against today's cap (the daily limit, or the warm-up volume). */
export async function mailboxHealth(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string, now = new Date()) {
  const row = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!row) throw mailboxNotFound();
  const day = localDay(row, now);
  const sent = await mailboxes.sentOnDay(deps.sql, orgId, mailboxId, day);
  const warmup = warmupToday(row, now);
  const cap = dailyCap(row, now);
  return {
    mailbox_id: row.id,
    status: row.status,
    bounce_count: row.bounce_count,
    failure_count: row.failure_count,
    last_bounce_at: iso(row.last_bounce_at),
    last_failure_at: iso(row.last_failure_at),
    daily_limit: row.daily_limit,
    local_day: day,
    cap_today: cap,
    sent_today: sent,
    remaining_today: Math.max(0, cap - sent),
    warmup: warmup && {
      started_at: iso(row.warmup_started_at ?? now)!,
      day: warmup.day,
      days: row.warmup_days,
      start_per_day: row.warmup_start_per_day,
      volume_today: warmup.volume,
      complete: warmup.complete,
    },
  };
}

/** Adds a bounce or a delivery failure to the mailbox's health counters (no-op for an unknown mailbox). */
export async function recordMailboxOutcome(db: Db, orgId: string, mailboxId: string, outcome: MailboxOutcome): Promise<void> {
  await mailboxes.recordOutcome(db, orgId, mailboxId, outcome);
}

/** The domain of a mailbox address (for From / Message-ID domains). */
export const mailboxDomain = (mailbox: Pick<MailboxRow, 'email_address'>) => domainOf(mailbox.email_address);
