import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { dkimSign, relaxedBody, relaxedHeader } from '../../platform/adapters/mail/dkim';
import { DKIM_OVER_SIGNED_FIELDS, DKIM_SIGNED_FIELDS } from '../../services/outreach/mailbox-sender';

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const record = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const resolver = async (name: string, type: string) => {
  if (type === 'TXT' && name === 'outreach._domainkey.acme.test') return [[record]];
  throw Object.assign(new Error('none'), { code: 'ENOTFOUND' });
};
const verify = async (raw: Buffer) => (await dkimVerify(raw, { resolver })).results[0]!.status.result;

async function signed(extra: Record<string, string> = {}) {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const built = (await composer.sendMail({
    from: { name: 'Sam Sender', address: 'sam@acme.test' },
    to: 'ada@prospects.test',
    subject: 'Hello   there',
    text: 'Hi Ada,  \r\n\r\nsee you.\r\n\r\n\r\n',
    html: '<p>Hi Ada</p>',
    messageId: '<m1@acme.test>',
    list: { unsubscribe: 'https://crm.example.test/outreach/unsubscribe/abc' },
    headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', ...extra },
  })) as unknown as { message: Buffer };
  return dkimSign(
    built.message,
    { domainName: 'acme.test', keySelector: 'outreach', privateKey: pem },
    { fields: DKIM_SIGNED_FIELDS, overSign: DKIM_OVER_SIGNED_FIELDS },
  );
}

describe('DKIM signing', () => {
  it('canonicalizes as RFC 6376 relaxed says', () => {
    expect(relaxedHeader('Subject:  Hello \r\n\t there  ')).toBe('subject:Hello there');
    expect(relaxedHeader('SUBJECT : x')).toBe('subject:x');
    expect(relaxedBody('a  b \r\n\r\n\r\n')).toBe('a b\r\n');
    expect(relaxedBody('')).toBe('');
  });

  it('a signed message verifies (mailauth), multipart and folded headers included; a changed body fails', async () => {
    const raw = await signed();
    expect(await verify(raw)).toBe('pass');
    expect(await verify(Buffer.from(raw.toString('latin1').replace('see you.', 'see me.'), 'latin1'))).not.toBe('pass');
  });

  it('over-signed fields fail when a copy is prepended; others do not', async () => {
    const raw = await signed();
    const prepend = (field: string) => Buffer.concat([Buffer.from(`${field}\r\n`), raw]);
    expect(await verify(prepend('List-Unsubscribe: <https://evil.example/u>'))).not.toBe('pass');
    expect(await verify(prepend('List-Unsubscribe-Post: List-Unsubscribe=One-Click'))).not.toBe('pass');
    expect(await verify(prepend('Subject: Urgent'))).not.toBe('pass');
    expect(await verify(prepend('Received: from mx.example by mx2.example'))).toBe('pass');
    // An over-signed field the message lacks cannot be added either (Reply-To is not over-signed: it can).
    expect(await verify(prepend('Reply-To: mallory@evil.example'))).toBe('pass');
  });
});
