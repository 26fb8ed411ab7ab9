import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import * as domains from '../../db/outreach/domains';
import * as mailboxes from '../../db/outreach/mailboxes';
import type { MailboxRow } from '../../db/outreach/mailboxes';
import { domainOf } from '../../domain/outreach/mailboxes';
import type { Logger } from '../../platform/core/logger';
import { dkimSign, type DkimKey } from '../../platform/adapters/mail/dkim';
import type { ServiceDeps } from '../deps';
import { readOutreachSecret } from './mailbox-secrets';
import { smtpTransport } from './mailbox-servers';
import { mailboxNotFound } from './mailboxes';

// Sending through a mailbox: what the sequence sender and unibox replies use.

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
 * The header fields the DKIM signature covers: those RFC 6376 §5.4.1 suggests, and List-Unsubscribe-Post,
 * so the one-click unsubscribe (RFC 8058 §4 requires both List-Unsubscribe fields signed) cannot be
 * altered on the way without breaking the signature.
 */
export const DKIM_SIGNED_FIELDS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'Resent-Date',
  'Resent-From',
  'Resent-Sender',
  'Resent-To',
  'Resent-Cc',
  'Resent-Message-ID',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
] as const;

/**
 * Fields signed once more than the message carries them (over-signed): a copy added on the way, which
 * a receiver or mail program would read first, breaks the signature instead of passing as ours. From and
 * Subject, as mail systems do, and the two one-click unsubscribe fields, whose added copy would send a
 * click elsewhere.
 */
export const DKIM_OVER_SIGNED_FIELDS = ['From', 'Subject', 'List-Unsubscribe', 'List-Unsubscribe-Post'] as const;

/**
 * The DKIM signing key of a mailbox: its own domain's (provisioned on it), else the organization's
 * sending domain of the address's domain. Null when the organization has no such domain: the mail goes
 * out unsigned by us (a connected mailbox's own provider may sign it).
 */
async function dkimSigner(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, mailbox: MailboxRow): Promise<DkimKey | null> {
  const domain = mailbox.domain_id
    ? await domains.getDomain(deps.sql, orgId, mailbox.domain_id)
    : await domains.findByName(deps.sql, orgId, domainOf(mailbox.email_address));
  if (!domain?.dkim_credential_id) return null;
  const key = (await readOutreachSecret(deps.sql, deps.config, orgId, domain.dkim_credential_id))?.dkim_private_key;
  return key ? { domainName: domain.name, keySelector: domain.dkim_selector, privateKey: key } : null;
}

/** The message as it goes out (CRLF line ends), signed when the mailbox's domain has a key; its envelope and Message-ID. */
async function compose(
  mail: Mail.Options,
  dkim: DkimKey | null,
): Promise<{ raw: Buffer; envelope: { from: string; to: string[] }; messageId: string }> {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const built = (await composer.sendMail(mail)) as unknown as {
    message: Buffer;
    messageId: string;
    envelope: { from: string; to: string[] };
  };
  const raw = dkim ? dkimSign(built.message, dkim, { fields: DKIM_SIGNED_FIELDS, overSign: DKIM_OVER_SIGNED_FIELDS }) : built.message;
  return { raw, envelope: built.envelope, messageId: built.messageId };
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
    return { mailbox, send: async (mail) => sendToFile(deps.config.dataDir, deps.logger, mailbox, await compose({ from, ...mail }, dkim)) };
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
        const message = await compose({ from, ...mail }, dkim);
        const info = await transport.sendMail({ envelope: message.envelope, raw: message.raw });
        return { messageId: message.messageId, accepted: info.accepted.map(addressText), rejected: info.rejected.map(addressText) };
      } finally {
        transport.close();
      }
    },
  };
}

async function sendToFile(
  dataDir: string,
  logger: Logger,
  mailbox: MailboxRow,
  message: { raw: Buffer; envelope: { to: string[] }; messageId: string },
): Promise<SendResult> {
  const dir = path.join(dataDir, 'outreach-mail', mailbox.id);
  await fs.mkdir(dir, { recursive: true });
  const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${message.messageId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}.eml`;
  const file = path.join(dir, name);
  await fs.writeFile(file, message.raw);
  logger.info({ mailboxId: mailbox.id, file }, 'outreach email written to file (simulated mailbox)');
  return { messageId: message.messageId, accepted: message.envelope.to, rejected: [] };
}
