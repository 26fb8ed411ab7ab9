import * as mailboxes from '../../db/outreach/mailboxes';
import * as domains from '../../db/outreach/domains';
import { conflict, invalid, notFound, upstream } from '../../domain/errors';
import { WARMUP_DAYS_DEFAULT, WARMUP_START_PER_DAY_DEFAULT } from '../../domain/outreach/mailboxes';
import { newId } from '../../platform/core/ids';
import { MailboxProviderError, createMailboxProvider } from '../../platform/adapters/mail/mailbox-provider';
import type { ServiceDeps } from '../deps';
import { storeOutreachSecret } from './mailbox-secrets';
import { serverAddress, smtpFailure, smtpTransport } from './mailbox-servers';
import { checkWindow, checkedTimeZone, gapColumns, mailboxView, type SendGap } from './mailboxes';

// A new mailbox: connected by its SMTP/IMAP settings, or provisioned on a verified domain by the
// mailbox provider. Its passwords go into a sealed workflow credential created in the same transaction.

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

/** A new mailbox's warm-up columns: the ramp's shape, and its start now when it warms up. */
const newWarmup = (enabled: boolean, input: { warmup_start_per_day?: number; warmup_days?: number }) => ({
  warmup_enabled: enabled,
  warmup_started_at: enabled ? new Date() : null,
  warmup_start_per_day: input.warmup_start_per_day ?? WARMUP_START_PER_DAY_DEFAULT,
  warmup_days: input.warmup_days ?? WARMUP_DAYS_DEFAULT,
});

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

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
  let made: Awaited<ReturnType<typeof provider.provision>>;
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
