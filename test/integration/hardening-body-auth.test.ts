import crypto from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, type Tenant } from '../support/identity';

// A request is authenticated (bearer token, or a webhook's signature headers) before its body is read:
// the caller sends the headers and a few bytes of a declared 48 MB body, and the answer must come
// while the rest is still unsent. Before authentication came first, no answer came until the whole
// body had arrived.

const MB = 1024 * 1024;
const WHSEC = `whsec_${crypto.randomBytes(24).toString('base64')}`;

let ctx: TestContext;
let tenant: Tenant;

beforeAll(async () => {
  ctx = await createTestContext({
    env: { MEETING_WEBHOOK_SECRETS: WHSEC, OUTREACH_INBOUND_SECRETS: WHSEC, DIALER_CALLBACK_SECRET: 'dialer-callback-secret-for-tests' },
  });
  tenant = await newTenant(ctx);
});
afterAll(() => ctx?.close());

interface EarlyAnswer {
  status: number;
  body: { detail?: unknown };
  connection: string | undefined;
  ms: number;
}

/**
 * Sends the headers and `prefix` of a body declared `declared` bytes long, and never the rest. Resolves
 * with the answer, or rejects when none comes within `timeoutMs` (the server is waiting for the body).
 */
function sendPartialBody(
  path: string,
  headers: Record<string, string>,
  declared = 48 * MB,
  prefix = '{"rows":[',
  timeoutMs = 15_000, // an answer sent at once, on a loaded machine; a server waiting for the body never answers
): Promise<EarlyAnswer> {
  const url = new URL(path, ctx.baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(declared), ...headers },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: the server waits for the body`));
    }, timeoutMs);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({
          status: res.statusCode!,
          body: text ? JSON.parse(text) : {},
          connection: res.headers.connection,
          ms: Date.now() - started,
        });
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.write(prefix);
  });
}

const REPLACE = '/core/custom-data/tables/orders/replace';

describe('a bearer route answers before reading the body', () => {
  it.each([
    ['no Authorization header', {}, 'Not authenticated'],
    ['a scheme other than Bearer', { Authorization: 'Basic dXNlcjpwYXNz' }, 'Not authenticated'],
    ['a token that is no JWT', { Authorization: 'Bearer not.a.jwt' }, 'Invalid token'],
    ['an unknown ak_ key', { Authorization: `Bearer ak_${'Q'.repeat(16)}.${'r'.repeat(43)}` }, 'Invalid API key'],
  ])('%s: 401 on the 64 MiB custom-data replace, the body unread', async (_name, headers, detail) => {
    const res = await sendPartialBody(REPLACE, headers);
    expect(res).toMatchObject({ status: 401, body: { detail } });
    // The rest of the body is not drained either: the connection ends with the answer.
    expect(res.connection).toBe('close');
  });

  it('401 on an ordinary route too (POST /tags)', async () => {
    const res = await sendPartialBody('/tags', {}, 4 * MB);
    expect(res).toMatchObject({ status: 401, body: { detail: 'Not authenticated' } });
  });

  it('403 for an authenticated caller without the scope, the body unread', async () => {
    const reader = await createOrgKey(ctx, tenant.session, { scopes: ['api:read'] });
    const res = await sendPartialBody(REPLACE, { Authorization: `Bearer ${reader}` });
    expect(res).toMatchObject({ status: 403, body: { detail: 'Insufficient permissions' } });
  });

  it('reads the body of an authenticated caller with the scope', async () => {
    const name = `t_${crypto.randomBytes(3).toString('hex')}`;
    const define = await ctx.request('PUT', `/core/custom-data/tables/${name}`, {
      token: tenant.session,
      body: { key: ['id'], properties: [{ name: 'id', type: 'string' }] },
    });
    expect(define.status, define.text).toBe(200);
    const res = await ctx.request('POST', `/core/custom-data/tables/${name}/replace`, {
      token: tenant.session,
      body: { rows: [{ id: 'a' }, { id: 'b' }] },
    });
    expect(res.status, res.text).toBe(200);
    // The same caller, the body cut short: it is being read, so the answer waits for it.
    await expect(
      sendPartialBody(`/core/custom-data/tables/${name}/replace`, { Authorization: `Bearer ${tenant.session}` }, 1 * MB, '{"rows":[', 1000),
    ).rejects.toThrow(/no answer/);
  });

  it('still answers 413 first for a declared length over the route’s limit', async () => {
    const res = await sendPartialBody(REPLACE, {}, 65 * MB);
    expect(res).toMatchObject({ status: 413, connection: 'close' });
  });
});

describe('a signed webhook answers before reading the body when its signature headers are missing', () => {
  it('meeting capture: 400', async () => {
    const res = await sendPartialBody('/meetings/webhooks/capture', {}, 4 * MB);
    expect(res).toMatchObject({ status: 400, body: { detail: 'Invalid webhook signature' } });
  });

  it('meeting capture: a timestamp out of tolerance is refused before reading too', async () => {
    const stale = String(Math.floor(Date.now() / 1000) - 3600);
    const res = await sendPartialBody(
      '/meetings/webhooks/capture',
      { 'webhook-id': 'msg_1', 'webhook-timestamp': stale, 'webhook-signature': 'v1,AAAA' },
      4 * MB,
    );
    expect(res).toMatchObject({ status: 400, body: { detail: 'Invalid webhook signature' } });
  });

  it('outreach inbound mail: 400', async () => {
    const res = await sendPartialBody('/outreach/inbound-mail', { 'Content-Type': 'message/rfc822' }, 4 * MB, 'From: a@b.test\r\n');
    expect(res).toMatchObject({ status: 400, body: { detail: 'Invalid webhook signature' } });
  });

  it('dialer callback: 401 without X-Dialer-Signature', async () => {
    const res = await sendPartialBody('/campaign/call-events', {}, 4 * MB);
    expect(res).toMatchObject({ status: 401, body: { detail: 'Invalid signature' } });
  });
});

describe('unauthenticated routes keep their own body limits', () => {
  it('POST /pat/exchange reads its (small) body and answers', async () => {
    const res = await ctx.request('POST', '/pat/exchange', { body: { token: `ak_${'Q'.repeat(16)}.${'r'.repeat(43)}` } });
    expect(res.status).toBe(401);
  });

  it('POST /pat/exchange refuses a declared length over its limit with 413, unread', async () => {
    const res = await sendPartialBody('/pat/exchange', {}, 1 * MB, '{"token":"');
    expect(res).toMatchObject({ status: 413, body: { detail: 'Request body too large' } });
  });

  it('the lead form refuses a declared length over its limit with 413, unread', async () => {
    const res = await sendPartialBody('/share/some-token/leads', {}, 1 * MB, '{"email":"');
    expect(res).toMatchObject({ status: 413, body: { detail: 'Request body too large' } });
  });
});
