import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebFetchError, extractPageProfile, fetchPage, isBlockedAddress } from '../../platform/adapters/web/fetch';
import { COMPANY_PAGE, startFakeWebsite, type FakeWebsite } from '../support/fake-website';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isBlockedAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('lets %s through', (address) =>
    expect(isBlockedAddress(address)).toBe(false),
  );
});

describe('fetchPage', () => {
  let site: FakeWebsite;
  const onlyLoopback1 = (a: string) => a === '127.0.0.1';
  beforeAll(async () => {
    site = await startFakeWebsite({
      '/': { body: COMPANY_PAGE },
      '/hop1': { redirect: '/hop2' },
      '/hop2': { redirect: '/', status: 301 },
      '/loop': { redirect: '/loop' },
      '/to-file': { redirect: 'file:///etc/passwd' },
      '/big': { body: 'x'.repeat(5000), contentType: 'text/plain' },
      '/slow': { body: 'late', delayMs: 1000 },
      '/pdf': { body: '%PDF-1.4', contentType: 'application/pdf' },
      '/down': { status: 503, body: 'down' },
    });
    site.pages.set('/to-other-loopback', { redirect: `${site.origin.replace('127.0.0.1', '127.0.0.2')}/` });
  });
  afterAll(() => site?.close());

  const failure = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebFetchError);
    return error as WebFetchError;
  };

  it('fetches a page on an allowed address', async () => {
    const page = await fetchPage(site.url('/'), { allowPrivate: true });
    expect(page.status).toBe(200);
    expect(page.body).toContain('Acme Plumbing');
    expect(page.truncated).toBe(false);
  });

  it('refuses a literal loopback address unless allowed', async () => {
    const error = await failure(fetchPage(site.url('/')));
    expect(error.code).toBe('blocked_address');
    expect(error.retryable).toBe(false);
  });

  it('refuses a host name that resolves to a loopback address, before connecting', async () => {
    const before = site.hits.length;
    const error = await failure(fetchPage(site.url('/').replace('127.0.0.1', 'localhost')));
    expect(error.code).toBe('blocked_address');
    expect(site.hits.length).toBe(before);
  });

  it('follows redirects by hand and reports them', async () => {
    const page = await fetchPage(site.url('/hop1'), { allowPrivate: true });
    expect(page.url).toBe(site.url('/'));
    expect(page.redirects).toEqual([site.url('/hop1'), site.url('/hop2')]);
  });

  it('stops after maxRedirects', async () => {
    const error = await failure(fetchPage(site.url('/loop'), { allowPrivate: true, maxRedirects: 3 }));
    expect(error.code).toBe('too_many_redirects');
  });

  it('checks every hop again: a redirect to a refused address or scheme fails', async () => {
    const before = site.hits.length;
    expect((await failure(fetchPage(site.url('/to-other-loopback'), { allowPrivate: onlyLoopback1 }))).code).toBe('blocked_address');
    expect(site.hits.slice(before)).toEqual(['/to-other-loopback']);
    expect((await failure(fetchPage(site.url('/to-file'), { allowPrivate: true }))).code).toBe('invalid_url');
  });

  it('cuts a body over maxBytes', async () => {
    const page = await fetchPage(site.url('/big'), { allowPrivate: true, maxBytes: 1000 });
    expect(page.truncated).toBe(true);
    expect(page.body.length).toBe(1000);
  });

  it('gives up at the deadline', async () => {
    const error = await failure(fetchPage(site.url('/slow'), { allowPrivate: true, timeoutMs: 150 }));
    expect(error.code).toBe('timeout');
    expect(error.retryable).toBe(true);
  });

  it('refuses what is not a web page, and says which failures are worth retrying', async () => {
    expect((await failure(fetchPage(site.url('/pdf'), { allowPrivate: true }))).code).toBe('unsupported_content_type');
    const missing = await failure(fetchPage(site.url('/nope'), { allowPrivate: true }));
    expect([missing.code, missing.retryable]).toEqual(['http_status', false]);
    const down = await failure(fetchPage(site.url('/down'), { allowPrivate: true }));
    expect([down.code, down.retryable]).toEqual(['http_status', true]);
  });

  it('refuses URLs that are not http(s) or carry credentials', async () => {
    expect((await failure(fetchPage('ftp://example.com/'))).code).toBe('invalid_url');
    expect((await failure(fetchPage('http://user:pw@example.com/'))).code).toBe('invalid_url');
    expect((await failure(fetchPage('not a url'))).code).toBe('invalid_url');
  });
});

describe('extractPageProfile', () => {
  it('takes the title, meta description, headings and readable text', () => {
    const profile = extractPageProfile(COMPANY_PAGE, 'https://acme.example/');
    expect(profile.title).toBe('Acme Plumbing | 24/7 emergency plumbers');
    expect(profile.description).toBe('Acme Plumbing fixes leaks, boilers and drains across Springfield, day and night.');
    expect(profile.headings).toEqual(['Emergency plumbing in Springfield', 'Boiler repair', 'Call us: +1 415 555 0100']);
    expect(profile.text).toContain('We answer in under an hour & charge no call-out fee.');
    expect(profile.text).not.toContain('do not extract me');
    expect(profile.text).not.toContain('color: red');
  });

  it('caps the text', () => {
    const profile = extractPageProfile(`<p>${'word '.repeat(1000)}</p>`, 'https://x.example/', 100);
    expect(profile.text.length).toBe(100);
    expect(profile.title).toBeNull();
  });
});
