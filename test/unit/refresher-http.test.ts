import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeHttp } from '../../platform/adapters/refreshers';
import { WebFetchError } from '../../platform/adapters/web/guarded-http';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';

// The refreshers' HTTP goes through the guarded client of web fetching, with its own rules: redirects
// are answered rather than followed, a body over the bound is refused rather than cut.
describe('createSafeHttp', () => {
  let site: FakeWebsite;
  beforeAll(async () => {
    site = await startFakeWebsite({
      '/token': { body: '{"access_token":"a"}', contentType: 'application/json' },
      '/moved': { redirect: '/token' },
      '/big': { body: `{"x":"${'y'.repeat(2000)}"}`, contentType: 'application/json' },
      '/slow': { body: '{}', contentType: 'application/json', delayMs: 1000 },
    });
  });
  afterAll(() => site?.close());
  const http = createSafeHttp({ allowPrivate: true, timeoutMs: 300, maxBytes: 1000 });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.unreachable(),
      (e: unknown) => {
        expect(e).toBeInstanceOf(WebFetchError);
        return e as WebFetchError;
      },
    );

  it('sends the request and parses a JSON answer', async () => {
    const response = await http({ method: 'POST', url: site.url('/token'), body: 'grant_type=x' });
    expect(response).toMatchObject({ status: 200, json: { access_token: 'a' } });
  });

  it('answers a redirect as it is, never following it', async () => {
    const before = site.hits.length;
    expect((await http({ method: 'GET', url: site.url('/moved') })).status).toBe(302);
    expect(site.hits.slice(before)).toEqual(['/moved']);
  });

  it('refuses a body over the bound, private addresses unless allowed, and a server that hangs', async () => {
    const big = await failure(http({ method: 'GET', url: site.url('/big') }));
    expect([big.code, big.retryable, big.message]).toEqual(['network', false, `Response from ${site.origin} larger than 1000 bytes`]);
    const strict = createSafeHttp({ allowPrivate: false, timeoutMs: 300 });
    expect((await failure(strict({ method: 'POST', url: site.url('/token') }))).code).toBe('blocked_address');
    const slow = await failure(http({ method: 'GET', url: site.url('/slow') }));
    expect([slow.code, slow.retryable, slow.message]).toEqual(['timeout', true, `Timed out calling ${site.origin}`]);
  });
});
