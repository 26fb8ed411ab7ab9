import { describe, expect, it } from 'vitest';
import { DOMAIN_NAME, domainStatusOf, judgeRecord, normalizeDomain, requiredRecords } from '../../domain/outreach/domains';

const [spf, dkim, dmarc, tracking] = requiredRecords('acme.com', 'MIIBKEY', 'track.example.net');
const found = (...answers: string[]) => ({ answers });

describe('requiredRecords', () => {
  it('lists SPF, DKIM, DMARC and the tracking CNAME for the domain', () => {
    expect(requiredRecords('acme.com', 'KEY', 't.example')).toEqual([
      { purpose: 'spf', type: 'TXT', host: 'acme.com', value: 'v=spf1 mx a ~all' },
      { purpose: 'dkim', type: 'TXT', host: 'outreach._domainkey.acme.com', value: 'v=DKIM1; k=rsa; p=KEY' },
      { purpose: 'dmarc', type: 'TXT', host: '_dmarc.acme.com', value: 'v=DMARC1; p=none; rua=mailto:dmarc@acme.com' },
      { purpose: 'tracking', type: 'CNAME', host: 'track.acme.com', value: 't.example' },
    ]);
  });
});

describe('judgeRecord', () => {
  it('a failed lookup is an error, no answer is missing', () => {
    expect(judgeRecord(spf!, null)).toBe('error');
    for (const r of [spf!, dkim!, dmarc!, tracking!]) expect(judgeRecord(r, found())).toBe('missing');
  });

  it('SPF: exactly one record carrying our mechanisms; other TXT records do not count', () => {
    expect(judgeRecord(spf!, found('v=spf1 mx a ~all'))).toBe('verified');
    expect(judgeRecord(spf!, found('V=SPF1 include:_spf.google.com MX A -all', 'google-site-verification=x'))).toBe('verified');
    expect(judgeRecord(spf!, found('v=spf1 include:_spf.google.com ~all'))).toBe('mismatch');
    expect(judgeRecord(spf!, found('v=spf1 mx a ~all', 'v=spf1 mx ~all'))).toBe('mismatch');
    expect(judgeRecord(spf!, found('google-site-verification=x'))).toBe('missing');
  });

  it('DKIM: our public key in p=, whitespace aside', () => {
    expect(judgeRecord(dkim!, found('v=DKIM1; k=rsa; p=MIIBKEY'))).toBe('verified');
    expect(judgeRecord(dkim!, found('v=DKIM1;k=rsa;p=MIIB KEY'))).toBe('verified');
    expect(judgeRecord(dkim!, found('v=DKIM1; k=rsa; p=OTHER'))).toBe('mismatch');
  });

  it('DMARC: exactly one record, any policy', () => {
    expect(judgeRecord(dmarc!, found('v=DMARC1; p=reject'))).toBe('verified');
    expect(judgeRecord(dmarc!, found('v=DMARC1; p=none', 'v=DMARC1; p=reject'))).toBe('mismatch');
  });

  it('tracking: a CNAME to our host, case and trailing dot aside', () => {
    expect(judgeRecord(tracking!, found('Track.Example.NET.'))).toBe('verified');
    expect(judgeRecord(tracking!, found('elsewhere.example.net'))).toBe('mismatch');
  });

  it('a domain is verified only when every record is', () => {
    expect(domainStatusOf(['verified', 'verified', 'verified', 'verified'])).toBe('verified');
    expect(domainStatusOf(['verified', 'error', 'verified', 'verified'])).toBe('failed');
  });
});

describe('domain names', () => {
  it('normalizes and validates', () => {
    expect(normalizeDomain(' Acme.COM. ')).toBe('acme.com');
    for (const ok of ['acme.com', 'mail.acme.co.uk', 'x-y.io']) expect(DOMAIN_NAME.test(ok), ok).toBe(true);
    for (const bad of ['acme', 'acme.c', '-a.com', 'a-.com', 'a_b.com', 'a..com', '1.2.3.4'])
      expect(DOMAIN_NAME.test(bad), bad).toBe(false);
  });
});
