import { describe, expect, it } from 'vitest';
import { SEND_ATTEMPTS, classifySmtpFailure, retryDelayMs } from '../../domain/outreach/smtp-failures';

// nodemailer's errors as it builds them (code, command, response, responseCode; originalCode and
// timeoutType on socket errors and timeouts).
const smtp = (command: string, response: string, code = 'EENVELOPE') =>
  Object.assign(new Error(`Failed: ${response}`), { code, command, response, responseCode: Number(response.slice(0, 3)) });

describe('an SMTP failure at send time', () => {
  it('a 5xx at the recipient or after DATA is a bounce, with the enhanced status and the server words', () => {
    expect(classifySmtpFailure(smtp('RCPT TO', '550 5.1.1 User unknown'))).toEqual({
      kind: 'bounce',
      status: '5.1.1',
      detail: '550 5.1.1 User unknown',
    });
    expect(classifySmtpFailure(smtp('DATA', '554 5.7.1 Message rejected as spam', 'EMESSAGE'))).toMatchObject({
      kind: 'bounce',
      status: '5.7.1',
    });
    expect(classifySmtpFailure(smtp('RCPT TO', '554 Transaction failed'))).toMatchObject({ kind: 'bounce', status: '554' });
  });

  it('a 4xx at the recipient or after DATA is a soft bounce', () => {
    expect(classifySmtpFailure(smtp('RCPT TO', '452 4.2.2 Mailbox full'))).toEqual({
      kind: 'soft_bounce',
      status: '4.2.2',
      detail: '452 4.2.2 Mailbox full',
    });
    expect(classifySmtpFailure(smtp('DATA', '451 4.7.1 Greylisted, try again', 'EMESSAGE'))).toMatchObject({ kind: 'soft_bounce' });
  });

  it("before the recipient it is our mailbox's: a 5xx is refused, a 4xx or no connection is tried again", () => {
    expect(classifySmtpFailure(smtp('AUTH PLAIN', '535 5.7.8 Authentication failed', 'EAUTH'))).toMatchObject({ kind: 'refused' });
    expect(classifySmtpFailure(smtp('MAIL FROM', '553 5.7.1 Sender not allowed'))).toMatchObject({ kind: 'refused' });
    expect(classifySmtpFailure(smtp('CONN', '554 No SMTP service here', 'EPROTOCOL'))).toMatchObject({ kind: 'refused' });
    expect(classifySmtpFailure(smtp('MAIL FROM', '421 4.7.0 Too many connections'))).toMatchObject({ kind: 'retry' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), {
      code: 'ESOCKET',
      originalCode: 'ECONNREFUSED',
      command: 'CONN',
    });
    // Without a reply, the thread and the notice say what happened without the server's address.
    expect(classifySmtpFailure(refused)).toMatchObject({
      kind: 'retry',
      detail: "No connection to the mailbox's mail server (ECONNREFUSED)",
    });
    const greeting = Object.assign(new Error('Greeting never received'), {
      code: 'ETIMEDOUT',
      timeoutType: 'GREETING_TIMEOUT',
      command: 'CONN',
    });
    expect(classifySmtpFailure(greeting)).toMatchObject({ kind: 'retry' });
  });

  it("a mailbox whose server may not be used is refused before any connection, with the service's words", async () => {
    const { invalid } = await import('../../domain/errors');
    const refused = invalid('SMTP server not reachable: smtp.host must name a public mail server that answers on smtp.port');
    expect(classifySmtpFailure(refused)).toEqual({ kind: 'refused', status: null, detail: refused.message });
  });

  it('a connection lost once the message may have been taken is in doubt (counted as sent, never sent twice)', () => {
    const idle = Object.assign(new Error('Timeout'), { code: 'ETIMEDOUT', timeoutType: 'SOCKET_TIMEOUT', command: 'CONN' });
    expect(classifySmtpFailure(idle)).toMatchObject({ kind: 'doubt' });
    expect(classifySmtpFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ESOCKET', originalCode: 'ECONNRESET' }))).toMatchObject(
      {
        kind: 'doubt',
      },
    );
  });

  it('is tried at most SEND_ATTEMPTS times, waiting 5, 15, 45 then 135 minutes', () => {
    expect(SEND_ATTEMPTS).toBe(5);
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n) / 60_000)).toEqual([5, 15, 45, 135]);
  });
});
