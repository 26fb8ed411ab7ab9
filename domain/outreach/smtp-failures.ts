import { isDomainError } from '../errors';

// What an SMTP failure at send time means for a step (no I/O: the sender and its tests read it). The
// server we speak to answers for the recipient at `RCPT TO` and for the message after `DATA`; before
// that (greeting, login, `MAIL FROM`) it answers for our mailbox. A 5xx is for good, a 4xx for now.

/**
 * - `bounce`: refused for good at the recipient or the message (5xx at RCPT TO / DATA): the enrollment
 *   stops, the address is suppressed, the owner hears of it, analytics count it bounced.
 * - `soft_bounce`: refused for now at the recipient or the message (4xx at RCPT TO / DATA): tried again,
 *   and counted toward the address's soft-bounce rule (domain/outreach/dsn.ts SOFT_BOUNCE_LIMIT).
 * - `refused`: refused for good before the recipient (5xx at greeting, login, MAIL FROM): our mailbox's
 *   problem; the step fails and the owner hears of it, the address is not suppressed.
 * - `retry`: refused for now before the recipient (4xx), or no connection: tried again.
 * - `doubt`: the connection broke after the message may have been taken: counted as sent, never resent.
 */
export type SmtpFailureKind = 'bounce' | 'soft_bounce' | 'refused' | 'retry' | 'doubt';

export interface SmtpFailure {
  kind: SmtpFailureKind;
  /** The enhanced status code (`5.7.1`) the server gave, else its reply code (`554`), else null. */
  status: string | null;
  /** The server's own words (its reply line), else the error's message; at most 500 characters. */
  detail: string;
}

/** Attempts at one step refused for now (`retry`, `soft_bounce`) before it is given up: the enrollment fails and the owner hears of it. */
export const SEND_ATTEMPTS = 5;

/** The wait after the n-th refused attempt (n from 1): 5 minutes, then three times longer each time (15, 45, 135). */
export const retryDelayMs = (attempts: number): number => 5 * 60_000 * 3 ** Math.max(0, attempts - 1);

/** Failures before anything was handed over: nothing was accepted, so trying again sends at most once. */
const BEFORE_ACCEPTANCE = new Set(['ECONNECTION', 'EDNS', 'EAUTH', 'ETLS', 'ECONNREFUSED', 'ENOTFOUND', 'ECONFIG']);
/** A socket error's own code (nodemailer keeps it as `originalCode` under ESOCKET) when no connection was made. */
const NO_CONNECTION = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** Timeouts before the server could take anything (connecting, its greeting, the TLS upgrade), not the socket's idle one. */
const SETUP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);

/**
 * What to say of a failure without a server reply, when its message would name the server's address
 * (a connect error names host and port: the thread and the notice show no mailbox settings).
 */
function ownWords(e: { code?: string; originalCode?: string; timeoutType?: string }): string | null {
  if (NO_CONNECTION.has(e.originalCode ?? e.code ?? '')) return `No connection to the mailbox's mail server (${e.originalCode ?? e.code})`;
  if (e.code === 'EDNS') return "The mailbox's mail server name did not resolve (EDNS)";
  if (SETUP_TIMEOUTS.has(e.timeoutType ?? '')) return `The mailbox's mail server did not answer in time (${e.timeoutType})`;
  return null;
}

const ENHANCED = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/** The error nodemailer gives (its `code`, `command`, `response`, `responseCode`), or anything thrown. */
export function classifySmtpFailure(error: unknown): SmtpFailure {
  const e = (error ?? {}) as {
    code?: string;
    originalCode?: string;
    timeoutType?: string;
    command?: string;
    response?: string;
    responseCode?: number;
    message?: string;
  };
  const response = typeof e.response === 'string' ? e.response.trim() : '';
  const detail = (response || ownWords(e) || e.message || String(error)).slice(0, 500);
  const status = ENHANCED.exec(response)?.[1] ?? (typeof e.responseCode === 'number' ? String(e.responseCode) : null);
  // Refused before any connection (the mailbox's server is not a public host, its settings are gone):
  // nothing was sent, and trying again would not help.
  if (isDomainError(error, 'invalid') || isDomainError(error, 'not_found')) return { kind: 'refused', status: null, detail };
  const code = e.responseCode;
  const command = (e.command ?? '').toUpperCase();
  const atRecipient = command === 'RCPT TO' || command === 'DATA';
  if (typeof code === 'number' && code >= 500) return { kind: atRecipient ? 'bounce' : 'refused', status, detail };
  if (typeof code === 'number' && code >= 400) return { kind: atRecipient ? 'soft_bounce' : 'retry', status, detail };
  if (BEFORE_ACCEPTANCE.has(e.code ?? '') || NO_CONNECTION.has(e.originalCode ?? '') || SETUP_TIMEOUTS.has(e.timeoutType ?? ''))
    return { kind: 'retry', status, detail };
  return { kind: 'doubt', status, detail };
}
