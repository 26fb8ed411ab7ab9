import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type { Db } from '../db/client';
import * as credentials from '../db/credentials';
import * as domains from '../db/outreach-domains';
import * as mailboxes from '../db/outreach-mailboxes';
import * as sequences from '../db/outreach-sequences';
import type { MailboxRow, MailboxSettings } from '../db/outreach-mailboxes';
import { describeSecrets } from '../domain/credentials';
import { conflict, invalid, notFound, upstream } from '../domain/errors';
import {
  WARMUP_DAYS_DEFAULT,
  WARMUP_START_PER_DAY_DEFAULT,
  canonicalTimeZone,
  dailyCap,
  domainOf,
  localDay,
  mailboxMove,
  warmupToday,
  type MailboxOutcome,
} from '../domain/outreach-mailboxes';
import type { Config } from '../platform/config';
import { newId } from '../platform/ids';
import type { Logger } from '../platform/logger';
import { MailHostRefused, resolveMailHost } from '../platform/mail-hosts';
import { MailboxProviderError, createMailboxProvider } from '../platform/mailbox-provider';
import { open, seal } from '../platform/secrets';
import { credentialKeyring, sealedFor } from './credentials';
import type { ServiceDeps } from './deps';
import { iso } from './views';

// Outreach mailboxes: connected by SMTP/IMAP settings or provisioned on a verified domain; settings
// (limits, window, warm-up), pause/resume, health, and the sender the sequence workflows use.
// Passwords live in a workflow credential (sealed), never in this table, a response or a log line.

export type { MailboxRow };
const mailboxNotFound = () => notFound('Mailbox not found');

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

// --- Secrets (workflow credentials) --------------------------------------------------------------

/**
 * Stores a secret of the outreach area as a new workflow credential, sealed, inside the caller's
 * transaction (so the row that names it and the credential exist together or not at all).
 */
export async function storeOutreachSecret(
  tx: Db,
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  orgId: string,
  actor: string,
  input: { name: string; description: string; value: Record<string, string> },
): Promise<string> {
  const id = newId();
  await credentials.insertCredential(
    tx,
    orgId,
    id,
    {
      name: input.name,
      description: input.description,
      refresher_workflow_id: null,
      refresh_input: {},
      refresh_policy: { type: 'manual' },
      temporal_schedule_id: null,
    },
    actor,
  );
  const sealed = seal(credentialKeyring(config), JSON.stringify(input.value), sealedFor(orgId, id));
  const keys = Object.keys(input.value).sort();
  await credentials.storeSealedValue(
    tx,
    orgId,
    id,
    {
      keyId: sealed.keyId,
      ciphertext: sealed.ciphertext,
      valueKeys: keys,
      secrets: describeSecrets(input.value, keys, 'input', new Date()),
      expiresAt: null,
    },
    actor,
  );
  return id;
}

/** The decrypted value of an outreach secret; for senders and activities only. */
export async function readOutreachSecret(
  db: Db,
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  orgId: string,
  id: string | null,
) {
  if (!id) return null;
  const sealed = await credentials.getSealedValue(db, orgId, id);
  if (!sealed) return null;
  return JSON.parse(open(credentialKeyring(config), sealed.key_id, sealed.ciphertext, sealedFor(orgId, id))) as Record<string, string>;
}

// --- Connect, provision ----------------------------------------------------------------------------

interface ServerSettings {
  host: string;
  port: number;
  secure: boolean;
  username?: string | null;
  password?: string | null;
}

export interface ConnectInput {
  email_address: string;
  display_name?: string | null;
  smtp: ServerSettings;
  imap?: ServerSettings | null;
  /** Log in to the SMTP server before saving (a refused login or an unreachable server is a 400). */
  verify_smtp?: boolean;
  daily_limit?: number;
  window_start?: string;
  window_end?: string;
  window_days?: number[];
  timezone?: string;
  warmup_enabled?: boolean;
  warmup_start_per_day?: number;
  warmup_days?: number;
  send_gap?: SendGap;
}

interface SendGap {
  min_seconds: number;
  max_seconds: number;
}
/** The columns of a spacing given by the API (absent: the table's defaults, or unchanged). */
const gapColumns = (gap: SendGap | undefined) =>
  gap ? { send_gap_min_seconds: gap.min_seconds, send_gap_max_seconds: gap.max_seconds } : {};

/** A new mailbox's warm-up columns: the ramp's shape, and its start now when it warms up. */
const newWarmup = (enabled: boolean, input: { warmup_start_per_day?: number; warmup_days?: number }) => ({
  warmup_enabled: enabled,
  warmup_started_at: enabled ? new Date() : null,
  warmup_start_per_day: input.warmup_start_per_day ?? WARMUP_START_PER_DAY_DEFAULT,
  warmup_days: input.warmup_days ?? WARMUP_DAYS_DEFAULT,
});

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

function checkedTimeZone(zone: string | undefined): string | undefined {
  if (zone === undefined) return undefined;
  const canonical = canonicalTimeZone(zone);
  if (!canonical) throw invalid(`Unknown time zone '${zone}': expected an IANA name such as Europe/Paris`);
  return canonical;
}

function checkWindow(start: string, end: string) {
  if (start >= end) throw invalid('window_start must be before window_end');
}

// --- Where a mailbox server may be --------------------------------------------------------------

type ServerKind = 'smtp' | 'imap';

/**
 * The one answer for a mail server that cannot be used, whatever the reason: a name that does not
 * resolve, a private or loopback address (unless OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS), a refused, silent
 * or non-SMTP port. A caller never learns which, so the API is no probe of our network's hosts and ports.
 */
export const serverUnreachable = (kind: ServerKind) =>
  invalid(`${kind.toUpperCase()} server not reachable: ${kind}.host must name a public mail server that answers on ${kind}.port`);

/**
 * The address to dial for a mailbox's SMTP or IMAP host (platform/mail-hosts.ts: resolved once, within
 * the connect bound; refused unless public). The connection then goes to that very address (the host
 * name stays the TLS server name), so what is checked is what is dialled.
 */
async function serverAddress(
  config: Pick<Config, 'OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS' | 'OUTREACH_SMTP_CONNECTION_TIMEOUT_MS'>,
  host: string,
  kind: ServerKind,
) {
  try {
    return await resolveMailHost(host, {
      allowPrivate: config.OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS,
      timeoutMs: config.OUTREACH_SMTP_CONNECTION_TIMEOUT_MS,
    });
  } catch (error) {
    if (error instanceof MailHostRefused) throw serverUnreachable(kind);
    throw error;
  }
}

const smtpTimeouts = (config: Config) => ({
  connectionTimeout: config.OUTREACH_SMTP_CONNECTION_TIMEOUT_MS,
  greetingTimeout: config.OUTREACH_SMTP_GREETING_TIMEOUT_MS,
  socketTimeout: config.OUTREACH_SMTP_SOCKET_TIMEOUT_MS,
});

async function smtpTransport(
  config: Config,
  s: { host: string; port: number; secure: boolean; username: string | null; password: string | null },
) {
  const target = await serverAddress(config, s.host, 'smtp');
  return nodemailer.createTransport({
    host: target.address,
    ...(target.servername ? { servername: target.servername } : {}),
    port: s.port,
    secure: s.secure,
    ...(s.username ? { auth: { user: s.username, pass: s.password ?? '' } } : {}),
    ...smtpTimeouts(config),
    logger: false,
    debug: false,
  });
}

/**
 * A failed login check: a refused login names its reply code; anything else (refused, timed out, TLS,
 * a port that does not speak SMTP) is the one unreachable answer, never the network error's code.
 */
function smtpFailure(error: unknown) {
  const e = error as { code?: string; responseCode?: number };
  if (e.code === 'EAUTH') return invalid(`SMTP check failed: SMTP login refused${e.responseCode ? ` (${e.responseCode})` : ''}`);
  return serverUnreachable('smtp');
}

export async function connectMailbox(deps: Deps, orgId: string, actor: string, input: ConnectInput) {
  const email = input.email_address.toLowerCase();
  const timezone = checkedTimeZone(input.timezone) ?? 'UTC';
  const window = { start: input.window_start ?? '09:00', end: input.window_end ?? '17:00' };
  checkWindow(window.start, window.end);
  const smtp = input.smtp;
  if (smtp.password && !smtp.username) throw invalid('smtp.password needs smtp.username');
  if (input.imap && !input.imap.password && !smtp.password)
    throw invalid('imap needs a password (imap.password, or smtp.password to share)');
  // Both servers must be where a mailbox may be, checked whether or not the login is: a mailbox that
  // could never send or be polled is refused now rather than failing later.
  await serverAddress(deps.config, smtp.host, 'smtp');
  if (input.imap) await serverAddress(deps.config, input.imap.host, 'imap');
  if (input.verify_smtp) {
    const transport = await smtpTransport(deps.config, {
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      username: smtp.username ?? null,
      password: smtp.password ?? null,
    });
    try {
      await transport.verify();
    } catch (error) {
      throw smtpFailure(error);
    } finally {
      transport.close();
    }
  }
  const id = newId();
  const row = await deps.sql.begin(async (tx) => {
    if (await mailboxes.findByEmail(tx, orgId, email)) throw conflict('The organization already has a mailbox with this email address');
    const secret: Record<string, string> = {};
    if (smtp.password) secret.smtp_password = smtp.password;
    if (input.imap?.password) secret.imap_password = input.imap.password;
    const credentialId =
      Object.keys(secret).length > 0
        ? await storeOutreachSecret(tx, deps.config, orgId, actor, {
            name: `outreach-mailbox:${id}`,
            description: `Passwords of the outreach mailbox ${email}`,
            value: secret,
          })
        : null;
    return mailboxes.insertMailbox(tx, orgId, {
      id,
      email_address: email,
      display_name: input.display_name ?? null,
      kind: 'smtp',
      origin: 'connected',
      provider: null,
      domain_id: null,
      daily_limit: input.daily_limit ?? 50,
      window_start: window.start,
      window_end: window.end,
      window_days: input.window_days ?? [1, 2, 3, 4, 5],
      timezone,
      ...newWarmup(input.warmup_enabled ?? false, input),
      ...gapColumns(input.send_gap),
      smtp_host: smtp.host,
      smtp_port: smtp.port,
      smtp_secure: smtp.secure,
      smtp_username: smtp.username ?? null,
      imap_host: input.imap?.host ?? null,
      imap_port: input.imap?.port ?? null,
      imap_secure: input.imap?.secure ?? null,
      imap_username: input.imap ? (input.imap.username ?? smtp.username ?? email) : null,
      credential_id: credentialId,
      created_by: actor,
    });
  });
  deps.logger.info({ orgId, mailboxId: row.id, kind: row.kind }, 'outreach mailbox connected');
  return mailboxView(row);
}

export interface ProvisionInput {
  domain_id: string;
  local_part: string;
  display_name?: string | null;
  daily_limit?: number;
  timezone?: string;
  warmup_enabled?: boolean;
  warmup_start_per_day?: number;
  warmup_days?: number;
}

/** A mailbox on one of the organization's verified domains, created by the mailbox provider. */
export async function provisionMailbox(deps: Deps, orgId: string, actor: string, input: ProvisionInput) {
  const timezone = checkedTimeZone(input.timezone) ?? 'UTC';
  const domain = await domains.getDomain(deps.sql, orgId, input.domain_id);
  if (!domain) throw notFound('Domain not found');
  if (domain.status !== 'verified')
    throw conflict('The domain is not verified: run POST /outreach/domains/{domain_id}/verify once its DNS records are published');
  const email = `${input.local_part}@${domain.name}`.toLowerCase();
  if (await mailboxes.findByEmail(deps.sql, orgId, email)) throw conflict('The organization already has a mailbox with this email address');
  const provider = createMailboxProvider(deps.config);
  let made;
  try {
    made = await provider.provision({ domain: domain.name, localPart: input.local_part, displayName: input.display_name ?? null });
  } catch (error) {
    if (error instanceof MailboxProviderError) throw upstream(`Mailbox provider ${provider.name} failed: ${error.message}`);
    throw error;
  }
  const id = newId();
  const row = await deps.sql.begin(async (tx) => {
    const credentialId = made.password
      ? await storeOutreachSecret(tx, deps.config, orgId, actor, {
          name: `outreach-mailbox:${id}`,
          description: `Password of the outreach mailbox ${made.emailAddress}`,
          value: { smtp_password: made.password },
        })
      : null;
    return mailboxes.insertMailbox(tx, orgId, {
      id,
      email_address: made.emailAddress.toLowerCase(),
      display_name: input.display_name ?? null,
      kind: made.kind,
      origin: 'provisioned',
      provider: provider.name,
      domain_id: domain.id,
      daily_limit: input.daily_limit ?? 50,
      window_start: '09:00',
      window_end: '17:00',
      window_days: [1, 2, 3, 4, 5],
      timezone,
      ...newWarmup(input.warmup_enabled ?? true, input),
      smtp_host: made.smtp?.host ?? null,
      smtp_port: made.smtp?.port ?? null,
      smtp_secure: made.smtp?.secure ?? null,
      smtp_username: made.smtp?.username ?? null,
      imap_host: made.imap?.host ?? null,
      imap_port: made.imap?.port ?? null,
      imap_secure: made.imap?.secure ?? null,
      imap_username: made.imap?.username ?? null,
      credential_id: credentialId,
      created_by: actor,
    });
  });
  deps.logger.info({ orgId, mailboxId: row.id, provider: provider.name }, 'outreach mailbox provisioned');
  return mailboxView(row);
}

// --- Reads and settings ------------------------------------------------------------------------------

export async function listMailboxes(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { status?: 'active' | 'paused'; domain_id?: string; limit: number; after?: { t: string; id: string } },
) {
  return mailboxes.listMailboxes(
    deps.sql,
    orgId,
    { status: query.status, domainId: query.domain_id },
    { limit: query.limit, after: query.after },
  );
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

// --- Sending ---------------------------------------------------------------------------------------

export interface SendResult {
  messageId: string;
  accepted: string[];
  rejected: string[];
}

export interface MailboxSender {
  mailbox: MailboxRow;
  send(mail: Mail.Options): Promise<SendResult>;
}

const addressText = (a: string | Mail.Address): string => (typeof a === 'string' ? a : (a.address ?? ''));

/**
 * The DKIM signing key of a mailbox: its own domain's (provisioned on it), else the organization's
 * sending domain of the address's domain. Null when the organization has no such domain: the mail goes
 * out unsigned by us (a connected mailbox's own provider may sign it).
 */
async function dkimSigner(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  mailbox: MailboxRow,
): Promise<Mail.Options['dkim'] | null> {
  const domain = mailbox.domain_id
    ? await domains.getDomain(deps.sql, orgId, mailbox.domain_id)
    : await domains.findByName(deps.sql, orgId, domainOf(mailbox.email_address));
  if (!domain?.dkim_credential_id) return null;
  const key = (await readOutreachSecret(deps.sql, deps.config, orgId, domain.dkim_credential_id))?.dkim_private_key;
  return key ? { domainName: domain.name, keySelector: domain.dkim_selector, privateKey: key } : null;
}

/**
 * How the sequence workflows send through a mailbox (DKIM-signed with its sending domain's key): nodemailer over the mailbox's SMTP with its
 * decrypted password (bounded by the OUTREACH_SMTP_* timeouts), or, for a `simulated` mailbox, the
 * message written as an `.eml` file under DATA_DIR/outreach-mail/<mailbox_id>/ with an SMTP-like answer.
 * `from` defaults to the mailbox's address and display name.
 */
export async function mailboxSender(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  orgId: string,
  mailboxId: string,
): Promise<MailboxSender> {
  const mailbox = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!mailbox) throw mailboxNotFound();
  const from = mailbox.display_name ? { name: mailbox.display_name, address: mailbox.email_address } : mailbox.email_address;
  const dkim = await dkimSigner(deps, orgId, mailbox);
  if (mailbox.kind === 'simulated') {
    return { mailbox, send: (mail) => sendToFile(deps.config.dataDir, deps.logger, mailbox, { from, ...mail, ...(dkim ? { dkim } : {}) }) };
  }
  const secret = await readOutreachSecret(deps.sql, deps.config, orgId, mailbox.credential_id);
  return {
    mailbox,
    send: async (mail) => {
      const transport = await smtpTransport(deps.config, {
        host: mailbox.smtp_host!,
        port: mailbox.smtp_port!,
        secure: mailbox.smtp_secure!,
        username: mailbox.smtp_username,
        password: secret?.smtp_password ?? null,
      });
      try {
        const info = await transport.sendMail({ from, ...mail, ...(dkim ? { dkim } : {}) });
        return { messageId: info.messageId, accepted: info.accepted.map(addressText), rejected: info.rejected.map(addressText) };
      } finally {
        transport.close();
      }
    },
  };
}

async function sendToFile(dataDir: string, logger: Logger, mailbox: MailboxRow, mail: Mail.Options): Promise<SendResult> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = (await transport.sendMail(mail)) as unknown as { message: Buffer; messageId: string; envelope: { to: string[] } };
  const dir = path.join(dataDir, 'outreach-mail', mailbox.id);
  await fs.mkdir(dir, { recursive: true });
  const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}.eml`;
  const file = path.join(dir, name);
  await fs.writeFile(file, info.message);
  logger.info({ mailboxId: mailbox.id, file }, 'outreach email written to file (simulated mailbox)');
  return { messageId: info.messageId, accepted: info.envelope.to, rejected: [] };
}

/** The IMAP settings and password of a mailbox that has IMAP, for reply polling; null otherwise. */
export async function mailboxImapSettings(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, mailboxId: string) {
  const mailbox = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!mailbox?.imap_host) return null;
  const secret = await readOutreachSecret(deps.sql, deps.config, orgId, mailbox.credential_id);
  const password = secret?.imap_password ?? secret?.smtp_password;
  if (!password) return null;
  const target = await serverAddress(deps.config, mailbox.imap_host, 'imap');
  return {
    host: target.address,
    ...(target.servername ? { servername: target.servername } : {}),
    port: mailbox.imap_port!,
    secure: mailbox.imap_secure!,
    user: mailbox.imap_username ?? mailbox.smtp_username ?? mailbox.email_address,
    password,
  };
}

/** The domain of a mailbox address (for From / Message-ID domains). */
export const mailboxDomain = (mailbox: Pick<MailboxRow, 'email_address'>) => domainOf(mailbox.email_address);
