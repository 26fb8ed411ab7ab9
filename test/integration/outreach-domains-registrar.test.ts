import http from 'node:http';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';

// The Porkbun-compatible registrar adapter against a local server speaking that JSON API:
// POST /domain/checkDomain/<domain> and POST /domain/create/<domain>, credentials in the body.

const API_KEY = 'pk1_test_key';
const SECRET_KEY = 'sk1_Secret-Registrar-7c6b5a';
const prices: Record<string, string> = { com: '9.73', io: '34.50' };
const registered = new Set<string>(['already-taken.com']);
const calls: { path: string; body: Record<string, unknown> }[] = [];
let failNext = false;

async function startFakeRegistrar(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      calls.push({ path: req.url ?? '', body });
      const send = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      };
      if (failNext) {
        failNext = false;
        return send(500, { status: 'ERROR', message: 'Internal error' });
      }
      if (body.apikey !== API_KEY || body.secretapikey !== SECRET_KEY)
        return send(400, { status: 'ERROR', message: 'Invalid API key. (002)' });
      const check = /^\/domain\/checkDomain\/(.+)$/.exec(req.url ?? '');
      const create = /^\/domain\/create\/(.+)$/.exec(req.url ?? '');
      const domain = decodeURIComponent((check ?? create)?.[1] ?? '');
      const price = prices[domain.slice(domain.lastIndexOf('.') + 1)];
      if (check)
        return send(200, {
          status: 'SUCCESS',
          response: { avail: price && !registered.has(domain) ? 'yes' : 'no', type: 'registration', price: price ?? '0.00' },
        });
      if (create) {
        if (registered.has(domain)) return send(400, { status: 'ERROR', message: 'Domain is not available.' });
        if (Math.round(Number(price) * 100) !== body.cost) return send(400, { status: 'ERROR', message: 'Cost mismatch.' });
        if (body.agreeToTerms !== 'yes') return send(400, { status: 'ERROR', message: 'You must agree to the terms.' });
        registered.add(domain);
        return send(200, { status: 'SUCCESS', domain, cost: body.cost, orderId: 424242 });
      }
      send(404, { status: 'ERROR', message: 'Not found' });
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let ctx: TestContext;
let registrar: Awaited<ReturnType<typeof startFakeRegistrar>>;
let t: Tenant;
const unique = () => `r${crypto.randomBytes(4).toString('hex')}.com`;

beforeAll(async () => {
  registrar = await startFakeRegistrar();
  ctx = await createTestContext({
    env: {
      OUTREACH_REGISTRAR: 'porkbun',
      OUTREACH_REGISTRAR_BASE_URL: registrar.url,
      OUTREACH_REGISTRAR_API_KEY: API_KEY,
      OUTREACH_REGISTRAR_SECRET_KEY: SECRET_KEY,
    },
  });
  t = await newTenant(ctx, ['outreach:provision']);
});
afterAll(async () => {
  await ctx?.close();
  await registrar?.close();
});

const purchase = (body: Record<string, unknown>) => ctx.request('POST', '/outreach/domains/purchase', { token: t.session, body });

describe('Porkbun-compatible registrar', () => {
  it('answers availability and price from checkDomain', async () => {
    const name = unique();
    const res = await ctx.request('GET', `/outreach/domains/availability?name=${name}`, { token: t.session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, available: true, price_cents: 973, currency: 'USD', registrar: 'porkbun' });
    expect(calls.at(-1)).toEqual({ path: `/domain/checkDomain/${name}`, body: { apikey: API_KEY, secretapikey: SECRET_KEY } });
    expect((await ctx.request('GET', '/outreach/domains/availability?name=already-taken.com', { token: t.session })).body.available).toBe(
      false,
    );
  });

  it('buys at the quoted cost in cents, agreeing to the terms, and adds the domain', async () => {
    const name = unique();
    const res = await purchase({ name });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name,
      source: 'purchased',
      registrar: 'porkbun',
      registrar_order_id: '424242',
      price_cents: 973,
      currency: 'USD',
    });
    expect(calls.at(-1)).toEqual({
      path: `/domain/create/${name}`,
      body: { apikey: API_KEY, secretapikey: SECRET_KEY, cost: 973, agreeToTerms: 'yes' },
    });
  });

  it('refuses an unavailable domain or one above the ceiling (409) without calling create', async () => {
    const before = calls.length;
    expect((await purchase({ name: 'already-taken.com' })).status).toBe(409);
    expect((await purchase({ name: unique(), max_price_cents: 500 })).status).toBe(409);
    expect(calls.slice(before).every((c) => c.path.startsWith('/domain/checkDomain/'))).toBe(true);
  });

  it('a term it does not sell is a 400; a registrar failure is a 502 that names no key, and writes nothing', async () => {
    expect((await purchase({ name: unique(), years: 2 })).status).toBe(400);
    const name = unique();
    failNext = true;
    const res = await purchase({ name });
    expect(res.status).toBe(502);
    expect(res.body.detail).toBe('Registrar porkbun failed: registrar refused: Internal error');
    expect(res.text).not.toContain(SECRET_KEY);
    expect(ctx.logs.join('\n')).not.toContain(SECRET_KEY);
    expect(
      (await ctx.request('GET', '/outreach/domains', { token: t.session })).body.data.map((d: { name: string }) => d.name),
    ).not.toContain(name);
  });
});
