import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../../core/config';
import type { Logger } from '../../core/logger';

/** One message to one recipient. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per logical email: it becomes the Message-ID, so a receiver can drop a duplicate. */
  idempotencyKey: string;
}

export interface MailTransport {
  /** `smtp` or `files` (the embedded default), as logs and docs name it. */
  readonly name: 'smtp' | 'files';
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** A Message-ID derived from the idempotency key (hashed: keys carry ids, not meant for display). */
export const messageIdFor = (key: string, domain = 'voice-crm.local'): string =>
  `<${createHash('sha256').update(key).digest('hex').slice(0, 32)}@${domain}>`;

const envelope = (from: string, m: MailMessage) => ({
  from,
  to: m.to,
  subject: m.subject,
  text: m.text,
  html: m.html,
  messageId: messageIdFor(m.idempotencyKey),
  headers: { 'X-Idempotency-Key': m.idempotencyKey },
});

/**
 * Through an SMTP server (nodemailer). Every wait is bounded, so an activity sending mail fails
 * cleanly and is retried instead of hanging on a silent server.
 */
export function createSmtpTransport(url: string, from: string): MailTransport {
  const transporter = nodemailer.createTransport(url, {
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10_000,
  } as never);
  return {
    name: 'smtp',
    send: async (m) => {
      await transporter.sendMail(envelope(from, m));
    },
    close: () => transporter.close(),
  };
}

/**
 * The embedded default without SMTP_URL: each message becomes an `.eml` file under `dir` (the exact
 * bytes an SMTP server would receive) and one log line, so a developer can open what would have been sent.
 */
export function createFileTransport(dir: string, from: string, logger: Logger): MailTransport {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    name: 'files',
    send: async (m) => {
      const info = (await transporter.sendMail(envelope(from, m))) as unknown as { message: Buffer };
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${messageIdFor(m.idempotencyKey).slice(1, 17)}.eml`);
      await fs.writeFile(file, info.message);
      logger.info({ file, subject: m.subject }, 'email written to file (no SMTP_URL set)');
    },
    close: () => transporter.close(),
  };
}

export function createMailTransport(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM' | 'dataDir'>, logger: Logger): MailTransport {
  return config.SMTP_URL
    ? createSmtpTransport(config.SMTP_URL, config.MAIL_FROM)
    : createFileTransport(path.join(config.dataDir, 'mail'), config.MAIL_FROM, logger);
}
