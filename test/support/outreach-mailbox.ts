import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestContext } from './context';

/**
 * Connects an `smtp` mailbox through the API (POST /outreach/mailboxes) that sends to the tests' SMTP
 * server (test/support/smtp-server.ts: no login), open all week round the clock unless `overrides` say
 * otherwise. `apiKey` is any token with outreach manage scope. Returns the mailbox JSON.
 */
export async function connectTestMailbox(
  ctx: Pick<TestContext, 'request'>,
  apiKey: string,
  smtp: { host: string; port: number },
  overrides: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const body = {
    email_address: `sender-${crypto.randomBytes(4).toString('hex')}@outreach.test`,
    display_name: 'Test Sender',
    smtp: { host: smtp.host, port: smtp.port, secure: false },
    window_start: '00:00',
    window_end: '24:00',
    window_days: [1, 2, 3, 4, 5, 6, 7],
    timezone: 'UTC',
    ...overrides,
  };
  const res = await ctx.request('POST', '/outreach/mailboxes', { token: apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** host and port of an smtp://host:port URL (as startSmtpServer() gives it). */
export function smtpAddress(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}
