import { lookup } from 'node:dns/promises';
import fs from 'node:fs/promises';
import net from 'node:net';
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
import { canonicalTimeZone, domainOf, localDay, mailboxMove, type MailboxOutcome } from '../domain/outreach-mailboxes';
import type { Config } from '../platform/config';
import { newId } from '../platform/ids';
import type { Logger } from '../platform/logger';
import { MailboxProviderError, createMailboxProvider } from '../platform/mailbox-provider';
import { open, seal } from '../platform/secrets';
import { addressRange, isBlockedAddress } from '../platform/web-fetch';
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
    { name: input.name, description: input.description, refresher_workflow_id: null, refresh_input: {}, refresh_policy: { type: 'manual' }, temporal_schedule_id: null },
    actor,
  );
  const sealed = seal(credentialKeyring(config), JSON.stringify(input.value), sealedFor(orgId, id));
  const keys = Object.keys(input.value).sort();
  await credentials.storeSealedValue(
    tx,
    orgId,
    id,
    { keyId: sealed.keyId, ciphertext: sealed.ciphertext, valueKeys: keys, secrets: describeSecrets(input.value, keys, 'input', new Date()), expiresAt: null },
    actor,
  );
  return id;
}

/** The decrypted value of an outreach secret; for senders and activities only. */
export async function readOutreachSecret(db: Db, config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>, orgId: string, id: string | null) {
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
}

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

/**
 * The address to dial for a mailbox's SMTP or IMAP host: resolved once, and refused when any address
 * is neither public nor loopback (private networks, link-local and cloud metadata addresses), unless
 * WEB_FETCH_ALLOW_PRIVATE. The connection then goes to that very address (the host name stays the TLS
 * server name), so what is checked is what is dialled. Loopback stays allowed: a relay on the same
 * machine is a common setup.
 */
async function serverAddress(config: Pick<Config, 'WEB_FETCH_ALLOW_PRIVATE'>, host: string): Promise<{ address: string; servername?: string }> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(bare)) addresses = [bare];
  else {
    try {
      addresses = (await lookup(bare, { all: true })).map((a) => a.address);
    } catch {
      throw invalid(`Cannot resolve ${host}`);
    }
  }
  const allowed = (a: string) => config.WEB_FETCH_ALLOW_PRIVATE || !isBlockedAddress(a) || addressRange(a) === 'loopback';
  if (addresses.length === 0 || !addresses.every(allowed)) throw invalid(`${host} is not a public address`);
  return net.isIP(bare) ? { address: addresses[0]! } : { address: addresses[0]!, servername: bare };
}

const smtpTimeouts = (config: Config) => ({
  connectionTimeout: config.OUTREACH_SMTP_CONNECTION_TIMEOUT_MS,
  greetingTimeout: config.OUTREACH_SMTP_GREETING_TIMEOUT_MS,
  socketTimeout: config.OUTREACH_SMTP_SOCKET_TIMEOUT_MS,
});

async function smtpTransport(config: Config, s: { host: string; port: number; secure: boolean; username: string | null; password: string | null }) {
  const target = await serverAddress(config, s.host);
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

/** An SMTP failure as a short text that names no secret (the server's reply, or the network error's code). */
function smtpFailure(error: unknown): string {
  const e = error as { code?: string; responseCode?: number; response?: string; message?: string };
  if (e.code === 'EAUTH') return `SMTP login refused${e.responseCode ? ` (${e.responseCode})` : ''}`;
  if (e.responseCode) return `SMTP server answered ${e.responseCode}`;
  return `SMTP server unreachable (${e.code ?? 'error'})`;
}

export async function connectMailbox(deps: Deps, orgId: string, actor: string, input: ConnectInput) {
  const email = input.email_address.toLowerCase();
  const timezone = checkedTimeZone(input.timezone) ?? 'UTC';
  const window = { start: input.window_start ?? '09:00', end: input.window_end ?? '17:00' };
  checkWindow(window.start, window.end);
  const smtp = input.smtp;
  if (smtp.password && !smtp.username) throw invalid('smtp.password needs smtp.username');
  if (input.imap && !input.imap.password && !smtp.password) throw invalid('imap needs a password (imap.password, or smtp.password to share)');
  if (input.verify_smtp) {
    let transport;
    try {
      transport = await smtpTransport(deps.config, { host: smtp.host, port: smtp.port, secure: smtp.secure, username: smtp.username ?? null, password: smtp.password ?? null });
    } catch (error) {
      throw invalid(`SMTP check failed: ${(error as Error).message}`);
    }
    try {
      await transport.verify();
    } catch (error) {
      throw invalid(`SMTP check failed: ${smtpFailure(error)}`);
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
        ? await storeOutreachSecret(tx, deps.config, orgId, actor, { name: `outreach-mailbox:${id}`, description: `Passwords of the outreach mailbox ${email}`, value: secret })
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
      warmup_enabled: input.warmup_enabled ?? false,
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
}

/** A mailbox on one of the organization's verified domains, created by the mailbox provider. */
export async function provisionMailbox(deps: Deps, orgId: string, actor: string, input: ProvisionInput) {
  const timezone = checkedTimeZone(input.timezone) ?? 'UTC';
  const domain = await domains.getDomain(deps.sql, orgId, input.domain_id);
  if (!domain) throw notFound('Domain not found');
  if (domain.status !== 'verified') throw conflict('The domain is not verified: run POST /outreach/domains/{domain_id}/verify once its DNS records are published');
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
      warmup_enabled: input.warmup_enabled ?? true,
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
  return mailboxes.listMailboxes(deps.sql, orgId, { status: query.status, domainId: query.domain_id }, { limit: query.limit, after: query.after });
}

export async function getMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string) {
  const row = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!row) throw mailboxNotFound();
  return mailboxView(row);
}

export type MailboxPatch = MailboxSettings;

export async function updateMailbox(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string, patch: MailboxPatch) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body');
  const timezone = checkedTimeZone(patch.timezone);
  const row = await deps.sql.begin(async (tx) => {
    const before = await mailboxes.getMailbox(tx, orgId, mailboxId, { lock: true });
    if (!before) throw mailboxNotFound();
    checkWindow(patch.window_start ?? before.window_start, patch.window_end ?? before.window_end);
    return (await mailboxes.updateMailbox(tx, orgId, mailboxId, { ...patch, ...(timezone ? { timezone } : {}) }))!;
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
    if (users.length) throw conflict(`The mailbox is in the pool of ${users.length} sequence(s) that can still send (${users.slice(0, 3).join(', ')}): remove it from their pools, or complete or archive them, first`);
    if (row.credential_id) await credentials.deleteCredential(tx, orgId, row.credential_id);
  });
}

/** Bounces, failures, and what went out on the mailbox's local day against its daily limit. */
export async function mailboxHealth(deps: Pick<ServiceDeps, 'sql'>, orgId: string, mailboxId: string, now = new Date()) {
  const row = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!row) throw mailboxNotFound();
  const day = localDay(row, now);
  const sent = await mailboxes.sentOnDay(deps.sql, orgId, mailboxId, day);
  return {
    mailbox_id: row.id,
    status: row.status,
    bounce_count: row.bounce_count,
    failure_count: row.failure_count,
    last_bounce_at: iso(row.last_bounce_at),
    last_failure_at: iso(row.last_failure_at),
    daily_limit: row.daily_limit,
    local_day: day,
    sent_today: sent,
    remaining_today: Math.max(0, row.daily_limit - sent),
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
 * How the sequence workflows send through a mailbox: nodemailer over the mailbox's SMTP with its
 * decrypted password (bounded by the OUTREACH_SMTP_* timeouts), or, for a `simulated` mailbox, the
 * message written as an `.eml` file under DATA_DIR/outreach-mail/<mailbox_id>/ with an SMTP-like answer.
 * `from` defaults to the mailbox's address and display name.
 */
export async function mailboxSender(deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>, orgId: string, mailboxId: string): Promise<MailboxSender> {
  const mailbox = await mailboxes.getMailbox(deps.sql, orgId, mailboxId);
  if (!mailbox) throw mailboxNotFound();
  const from = mailbox.display_name ? { name: mailbox.display_name, address: mailbox.email_address } : mailbox.email_address;
  if (mailbox.kind === 'simulated') {
    return { mailbox, send: (mail) => sendToFile(deps.config.dataDir, deps.logger, mailbox, { from, ...mail }) };
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
        const info = await transport.sendMail({ from, ...mail });
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
  const target = await serverAddress(deps.config, mailbox.imap_host);
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
