import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCard, createShareLink } from '../support/cards';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant } from '../support/crm-contacts';
import { httpClientFrom } from '../support/http-from';

// X-Forwarded-For names the client only when the peer that sent it is a configured proxy
// (TRUSTED_PROXIES); from anyone else it changes nothing a limit counts by.

const LIMITS = {
  AUTH_FAILURE_DELAY_MS: '0',
  AUTH_FAILURES_PER_ADDRESS: '3',
  CARD_LEADS_PER_ADDRESS: '2',
  CARD_LEADS_PER_LINK: '1000',
};
let spoofed = 0;
const spoof = () => `203.0.113.${++spoofed}`;
/** A well-formed ak_ token of an unknown key id: refused after one indexed read, counted per address. */
const unknownKey = () => `ak_${crypto.randomBytes(12).toString('base64url')}.${'y'.repeat(43)}`;
const lead = () => ({ name: 'Grace Hopper', email: `grace-${crypto.randomBytes(4).toString('hex')}@example.com`, consent: true });

async function leadPath(ctx: TestContext): Promise<string> {
  const tenant = await crmTenant(ctx);
  const card = await createCard(ctx, tenant);
  return `/share/${(await createShareLink(ctx, tenant, card.id)).token}/leads`;
}

describe('without TRUSTED_PROXIES (the default)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ env: LIMITS });
  });
  afterAll(() => ctx?.close());

  it('a spoofed X-Forwarded-For does not escape the per-address limit of failed key attempts', async () => {
    const from = httpClientFrom(ctx.baseUrl, '127.0.3.1');
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await from('GET', '/me', { token: unknownKey(), headers: { 'X-Forwarded-For': spoof() } })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(ctx.logs.join('')).toContain('"client_address":"127.0.3.1"');
    expect(ctx.logs.join('')).not.toContain(`"client_address":"203.0.113.`);
  });

  it('a spoofed X-Forwarded-For does not escape the per-address limit of lead submissions', async () => {
    const path = await leadPath(ctx);
    const from = httpClientFrom(ctx.baseUrl, '127.0.3.2');
    const post = () => from('POST', path, { body: lead(), headers: { 'X-Forwarded-For': spoof() } });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    // Another address is not affected.
    expect((await httpClientFrom(ctx.baseUrl, '127.0.3.3')('POST', path, { body: lead() })).status).toBe(200);
  });
});

describe('with TRUSTED_PROXIES', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { ...LIMITS, TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' } });
  });
  afterAll(() => ctx?.close());

  it('counts failed key attempts by the address a trusted proxy forwarded, and ignores what the client wrote before it', async () => {
    const viaProxy = httpClientFrom(ctx.baseUrl, '127.0.0.1');
    // Each forwarded address is a client of its own.
    for (let i = 0; i < 4; i++)
      expect((await viaProxy('GET', '/me', { token: unknownKey(), headers: { 'X-Forwarded-For': spoof() } })).status).toBe(401);
    // Through two trusted hops (10.0.0.0/8 behind 127.0.0.1): the client is 198.51.100.9 whatever it put in front.
    const chain = () => ({ 'X-Forwarded-For': `${spoof()}, 198.51.100.9, 10.1.2.3` });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await viaProxy('GET', '/me', { token: unknownKey(), headers: chain() })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(ctx.logs.join('')).toContain('"client_address":"198.51.100.9"');
  });

  it('does not believe X-Forwarded-For from a peer outside TRUSTED_PROXIES', async () => {
    const path = await leadPath(ctx);
    const stranger = httpClientFrom(ctx.baseUrl, '127.0.0.2');
    const post = () => stranger('POST', path, { body: lead(), headers: { 'X-Forwarded-For': spoof() } });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(429);
    // Through the trusted proxy, forwarded addresses are counted apart.
    const viaProxy = httpClientFrom(ctx.baseUrl, '127.0.0.1');
    for (let i = 0; i < 3; i++)
      expect((await viaProxy('POST', path, { body: lead(), headers: { 'X-Forwarded-For': spoof() } })).status).toBe(200);
  });
});
