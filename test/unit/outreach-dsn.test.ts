import { describe, expect, it } from 'vitest';
import { bounceSummary, bounceVerdict, deliveryStatusBodies, parseDeliveryStatus } from '../../domain/outreach/dsn';

// Delivery reports as Postfix, Exchange and Gmail write them (RFC 3464 multipart/report).

const report = (type: string, status: string, extra: string[] = [], encoding?: string) =>
  [
    'From: MAILER-DAEMON@mx.prospects.test (Mail Delivery System)',
    'Subject: Delayed Mail (still being retried)',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;',
    '\tboundary="8F1E2A0B.1700000000/mx.prospects.test"',
    '',
    'This is a MIME-encapsulated message.',
    '',
    '--8F1E2A0B.1700000000/mx.prospects.test',
    'Content-Description: Notification',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host mx.prospects.test.',
    '',
    '--8F1E2A0B.1700000000/mx.prospects.test',
    'Content-Description: Delivery report',
    `Content-Type: ${type}`,
    ...(encoding ? [`Content-Transfer-Encoding: ${encoding}`] : []),
    '',
    status,
    '',
    '--8F1E2A0B.1700000000/mx.prospects.test',
    'Content-Type: text/rfc822-headers',
    '',
    'Message-ID: <a@b>',
    ...extra,
    '',
    '--8F1E2A0B.1700000000/mx.prospects.test--',
    '',
  ].join('\r\n');

const POSTFIX_DELAYED = [
  'Reporting-MTA: dns; mx.prospects.test',
  'X-Postfix-Queue-ID: 8F1E2A0B',
  'Arrival-Date: Mon,  3 Nov 2026 10:00:00 +0000 (UTC)',
  '',
  'Final-Recipient: rfc822; ada@prospects.test',
  'Original-Recipient: rfc822;ada@prospects.test',
  'Action: delayed',
  'Status: 4.2.2',
  'Remote-MTA: dns; in.prospects.test',
  'Diagnostic-Code: smtp; 452 4.2.2 <ada@prospects.test>: Recipient address',
  '    rejected: Mailbox full',
  'Will-Retry-Until: Fri, 7 Nov 2026 10:00:00 +0000',
].join('\r\n');

const EXCHANGE_FAILED = [
  'Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.outlook.com',
  'Received-From-MTA: dns;AM0PR01MB1234.eurprd01.prod.outlook.com',
  'Arrival-Date: Mon, 3 Nov 2026 10:00:00 +0000',
  '',
  'Final-Recipient: rfc822;ada@prospects.test',
  'Action: failed',
  'Status: 5.1.10',
  'Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
].join('\r\n');

const parse = (raw: string) => deliveryStatusBodies(raw).flatMap(parseDeliveryStatus);

describe('delivery status notifications', () => {
  it('reads the per-recipient fields of a Postfix delay report, folded lines included', () => {
    const recipients = parse(report('message/delivery-status', POSTFIX_DELAYED));
    expect(recipients).toEqual([
      {
        recipient: 'ada@prospects.test',
        action: 'delayed',
        status: '4.2.2',
        diagnostic: '452 4.2.2 <ada@prospects.test>: Recipient address rejected: Mailbox full',
      },
    ]);
    expect(bounceVerdict({ recipients, counterpart: 'Ada@Prospects.test' })).toMatchObject({ severity: 'soft', status: '4.2.2' });
  });

  it('an Exchange failure (5.1.10) is hard', () => {
    const recipients = parse(report('message/delivery-status', EXCHANGE_FAILED));
    const verdict = bounceVerdict({ recipients, counterpart: 'ada@prospects.test' });
    expect(verdict).toMatchObject({ severity: 'hard', action: 'failed', status: '5.1.10' });
    expect(bounceSummary(verdict)).toContain('RecipientNotFound');
  });

  it('Action: failed is hard even with a 4.x.x status (the retries ran out)', () => {
    const status = [
      'Reporting-MTA: dns; mx.test',
      '',
      'Final-Recipient: rfc822; ada@prospects.test',
      'Action: failed',
      'Status: 4.4.7',
    ].join('\n');
    expect(bounceVerdict({ recipients: parse(report('message/delivery-status', status)) }).severity).toBe('hard');
  });

  it('a 5.x.x is hard whatever the action; a status taken from the diagnostic when Status is missing', () => {
    expect(bounceVerdict({ recipients: [{ recipient: null, action: 'delayed', status: '5.7.1', diagnostic: null }] }).severity).toBe(
      'hard',
    );
    const status = [
      'Final-Recipient: rfc822; ada@prospects.test',
      'Action: delayed',
      'Diagnostic-Code: smtp; 421 4.7.0 Try again later',
    ].join('\n');
    expect(parseDeliveryStatus(status)[0]).toMatchObject({ status: '4.7.0', action: 'delayed' });
  });

  it('a success report (delivered / relayed) is no bounce', () => {
    const status = [
      'Reporting-MTA: dns; mx.test',
      '',
      'Final-Recipient: rfc822; ada@prospects.test',
      'Action: relayed',
      'Status: 2.0.0',
    ].join('\n');
    expect(bounceVerdict({ recipients: parse(report('message/delivery-status', status)) }).severity).toBe('delivered');
  });

  it('picks the block of the address mailed among several recipients', () => {
    const status = [
      'Reporting-MTA: dns; mx.test',
      '',
      'Final-Recipient: rfc822; other@prospects.test',
      'Action: failed',
      'Status: 5.1.1',
      '',
      'Final-Recipient: rfc822; ada@prospects.test',
      'Action: delayed',
      'Status: 4.2.2',
    ].join('\n');
    const recipients = parse(report('message/delivery-status', status));
    expect(recipients).toHaveLength(2);
    expect(bounceVerdict({ recipients, counterpart: 'ada@prospects.test' }).severity).toBe('soft');
    // Without the address, the worst block decides.
    expect(bounceVerdict({ recipients }).severity).toBe('hard');
  });

  it('reads base64 and global (RFC 6533) reports, and reports nested in multipart/mixed', () => {
    const b64 = Buffer.from(POSTFIX_DELAYED)
      .toString('base64')
      .replace(/(.{76})/g, '$1\r\n');
    expect(parse(report('message/delivery-status', b64, [], 'base64'))[0]).toMatchObject({ status: '4.2.2' });
    expect(parse(report('message/global-delivery-status', EXCHANGE_FAILED))[0]).toMatchObject({ status: '5.1.10' });
    const nested = [
      'Subject: Fwd: report',
      'Content-Type: multipart/mixed; boundary=outer',
      '',
      '--outer',
      'Content-Type: text/plain',
      '',
      'see below',
      '--outer',
      report('message/delivery-status', EXCHANGE_FAILED).replace(/^From:.*\r\nSubject:.*\r\nMIME-Version: 1.0\r\n/, ''),
      '--outer--',
    ].join('\r\n');
    expect(parse(nested)[0]).toMatchObject({ status: '5.1.10' });
  });

  it('without a delivery-status part, the text decides: a 4.x.x delay is soft, a 5.x.x or nothing readable is hard', () => {
    expect(
      bounceVerdict({
        recipients: [],
        subject: 'Warning: message delayed',
        text: 'The message has not yet been delivered: 452 4.2.2 mailbox full. Will retry for 4 more days.',
      }),
    ).toMatchObject({ severity: 'soft', status: '4.2.2' });
    expect(bounceVerdict({ recipients: [], subject: 'Undeliverable', text: '550 5.1.1 user unknown' })).toMatchObject({
      severity: 'hard',
      status: '5.1.1',
    });
    expect(bounceVerdict({ recipients: [], subject: 'failure notice', text: 'Sorry, it did not work.' }).severity).toBe('hard');
  });
});
