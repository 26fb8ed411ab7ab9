import nodemailer from 'nodemailer';
import * as mailboxes from '../../db/outreach/mailboxes';
import { invalid } from '../../domain/errors';
import type { Config } from '../../platform/core/config';
import { MailHostRefused, resolveMailHost } from '../../platform/adapters/mail/hosts';
import type { ServiceDeps } from '../deps';
import { readOutreachSecret } from './mailbox-secrets';

// A mailbox's mail servers: where they may be, the SMTP transport to them, and the IMAP settings polling uses.

type ServerKind = 'smtp' | 'imap';

/**
 * The one answer for a mail server that cannot be used, whatever the reason: a name that does not
 * resolve, a private or loopback address (unless OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS), a refused, silent
 * or non-SMTP port. A caller never learns which, so the API is no probe of our network's hosts and ports.
 */
export const serverUnreachable = (kind: ServerKind) =>
  invalid(`${kind.toUpperCase()} server not reachable: ${kind}.host must name a public mail server that answers on ${kind}.port`);

/**
 * The address to dial for a mailbox's SMTP or IMAP host (platform/adapters/mail/hosts.ts: resolved once, within
 * the connect bound; refused unless public). The connection then goes to that very address (the host
 * name stays the TLS server name), so what is checked is what is dialled.
 */
export async function serverAddress(
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

export async function smtpTransport(
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
export function smtpFailure(error: unknown) {
  const e = error as { code?: string; responseCode?: number };
  if (e.code === 'EAUTH') return invalid(`SMTP check failed: SMTP login refused${e.responseCode ? ` (${e.responseCode})` : ''}`);
  return serverUnreachable('smtp');
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
