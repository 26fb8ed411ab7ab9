import type { MailboxKind, MailboxOutcome, MailboxStatus } from '../../domain/outreach/mailboxes';
import type { Db } from '../client';
import { keysetPage } from '../kit/keyset';
import { onUnique } from '../kit/unique';
import { columnsOf, setColumns } from '../kit/partial-update';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id.

export interface MailboxRow {
  id: string;
  org_id: string;
  email_address: string;
  display_name: string | null;
  kind: MailboxKind;
  origin: 'connected' | 'provisioned';
  provider: string | null;
  domain_id: string | null;
  status: MailboxStatus;
  daily_limit: number;
  window_start: string;
  window_end: string;
  window_days: number[];
  timezone: string;
  warmup_enabled: boolean;
  warmup_started_at: Date | null;
  warmup_start_per_day: number;
  warmup_days: number;
  /** The random pause after each send, drawn from [min, max] seconds. */
  send_gap_min_seconds: number;
  send_gap_max_seconds: number;
  bounce_count: number;
  failure_count: number;
  last_bounce_at: Date | null;
  last_failure_at: Date | null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_secure: boolean | null;
  smtp_username: string | null;
  imap_host: string | null;
  imap_port: number | null;
  imap_secure: boolean | null;
  imap_username: string | null;
  credential_id: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export type MailboxInsert = Omit<
  MailboxRow,
  | 'org_id'
  | 'status'
  | 'bounce_count'
  | 'failure_count'
  | 'last_bounce_at'
  | 'last_failure_at'
  | 'created_at'
  | 'updated_at'
  | 'send_gap_min_seconds'
  | 'send_gap_max_seconds'
> &
  Partial<Pick<MailboxRow, 'send_gap_min_seconds' | 'send_gap_max_seconds'>>;

export type MailboxSettings = Partial<
  Pick<
    MailboxRow,
    | 'display_name'
    | 'daily_limit'
    | 'window_start'
    | 'window_end'
    | 'window_days'
    | 'timezone'
    | 'warmup_enabled'
    | 'warmup_start_per_day'
    | 'warmup_days'
    | 'send_gap_min_seconds'
    | 'send_gap_max_seconds'
  >
>;

const MAILBOX_COLUMNS = columnsOf<MailboxSettings & Partial<Pick<MailboxRow, 'warmup_started_at'>>>()([
  'display_name',
  'daily_limit',
  'window_start',
  'window_end',
  'window_days',
  'timezone',
  'warmup_enabled',
  'warmup_start_per_day',
  'warmup_days',
  'send_gap_min_seconds',
  'send_gap_max_seconds',
  'warmup_started_at',
]);

const DUPLICATE = 'The organization already has a mailbox with this email address';

export async function insertMailbox(db: Db, orgId: string, values: MailboxInsert): Promise<MailboxRow> {
  const [row] = await onUnique(db<MailboxRow[]>`INSERT INTO outreach_mailboxes ${db({ ...values, org_id: orgId })} RETURNING *`, DUPLICATE);
  return row!;
}

export async function getMailbox(
  db: Db,
  orgId: string,
  mailboxId: string,
  options: { lock?: boolean } = {},
): Promise<MailboxRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE` : db``;
  const [row]: [MailboxRow?] = await db`SELECT * FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ${mailboxId} ${lock}`;
  return row;
}

export async function findByEmail(db: Db, orgId: string, email: string): Promise<MailboxRow | undefined> {
  const [row]: [MailboxRow?] =
    await db`SELECT * FROM outreach_mailboxes WHERE org_id = ${orgId} AND email_address = ${email.toLowerCase()}`;
  return row;
}

export async function listMailboxes(
  db: Db,
  orgId: string,
  filters: { status?: MailboxStatus; domainId?: string },
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (MailboxRow & { cursor_t: string })[]; total: number }> {
  const status = filters.status ? db`AND status = ${filters.status}` : db``;
  const domain = filters.domainId ? db`AND domain_id = ${filters.domainId}` : db``;
  return keysetPage<MailboxRow>(db, {
    select: db`*`,
    from: db`outreach_mailboxes`,
    where: db`org_id = ${orgId} ${status} ${domain}`,
    ...page,
  });
}

export async function updateMailbox(
  db: Db,
  orgId: string,
  mailboxId: string,
  values: MailboxSettings & Partial<Pick<MailboxRow, 'warmup_started_at'>>,
): Promise<MailboxRow | undefined> {
  const [row]: [MailboxRow?] = await db`
    UPDATE outreach_mailboxes SET ${setColumns(db, values, MAILBOX_COLUMNS)}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${mailboxId} RETURNING *`;
  return row;
}

export async function setMailboxStatus(db: Db, orgId: string, mailboxId: string, status: MailboxStatus): Promise<MailboxRow | undefined> {
  const [row]: [MailboxRow?] = await db`
    UPDATE outreach_mailboxes SET status = ${status}, updated_at = now() WHERE org_id = ${orgId} AND id = ${mailboxId} RETURNING *`;
  return row;
}

export async function deleteMailbox(db: Db, orgId: string, mailboxId: string): Promise<MailboxRow | undefined> {
  const [row]: [MailboxRow?] = await db`DELETE FROM outreach_mailboxes WHERE org_id = ${orgId} AND id = ${mailboxId} RETURNING *`;
  return row;
}

/** Adds one bounce or failure to the mailbox's health counters; false when the organization has no such mailbox. */
export async function recordOutcome(db: Db, orgId: string, mailboxId: string, outcome: MailboxOutcome): Promise<boolean> {
  const rows =
    outcome === 'bounce'
      ? await db`UPDATE outreach_mailboxes SET bounce_count = bounce_count + 1, last_bounce_at = now() WHERE org_id = ${orgId} AND id = ${mailboxId} RETURNING id`
      : await db`UPDATE outreach_mailboxes SET failure_count = failure_count + 1, last_failure_at = now() WHERE org_id = ${orgId} AND id = ${mailboxId} RETURNING id`;
  return rows.length > 0;
}

/** Outbound messages of the mailbox counted against a local day (what its daily limit counts). */
export async function sentOnDay(db: Db, orgId: string, mailboxId: string, day: string): Promise<number> {
  const [row] = await db<{ sent: number }[]>`
    SELECT count(*)::int AS sent FROM outreach_messages
    WHERE org_id = ${orgId} AND mailbox_id = ${mailboxId} AND direction = 'outbound' AND status <> 'failed' AND local_day = ${day}`;
  return row!.sent;
}
