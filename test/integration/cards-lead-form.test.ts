import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCard, createShareLink } from '../support/cards';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, type CrmTenant } from '../support/crm-contacts';

// The card's lead form without script: the share page's form posted as a plain HTML form
// (application/x-www-form-urlencoded) is taken with the same validation and limits as JSON, and a
// browser gets HTML pages back; a JSON client keeps its JSON.

let ctx: TestContext;
let a: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext({ env: { CARD_LEADS_PER_ADDRESS: '2', CARD_LEADS_PER_LINK: '50', TRUSTED_PROXIES: '127.0.0.1' } });
  a = await crmTenant(ctx);
});
afterAll(() => ctx?.close());

let addresses = 0;
const newAddress = () => `203.0.113.${++addresses}`;
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** What a browser sends for the form: every input, empty ones included, and the ticked checkbox as "on". */
function formBody(fields: Record<string, string>) {
  return new URLSearchParams({ name: '', email: '', phone: '', company: '', note: '', ...fields }).toString();
}

const postForm = (path: string, body: string, { address = newAddress(), accept = BROWSER_ACCEPT } = {}) =>
  ctx.request('POST', path, {
    rawBody: body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: accept, 'X-Forwarded-For': address },
  });

async function cardLink() {
  const card = await createCard(ctx, a, { name: 'Ada <Lovelace>' });
  const link = await createShareLink(ctx, a, card.id);
  return { card, path: `/share/${link.token}/leads` };
}

const email = () => `grace-${crypto.randomBytes(4).toString('hex')}@example.com`;

describe('the lead form as a plain HTML form', () => {
  it('takes the form: a thank-you page naming the card for a browser, the lead pending in the inbox as sent', async () => {
    const { card, path } = await cardLink();
    // The share page's form posts there itself, so it works without script.
    const share = await ctx.request('GET', path.replace(/\/leads$/, ''), { headers: { Accept: BROWSER_ACCEPT } });
    expect(share.text).toMatch(/<form id="lead" method="post" action="[^"]*\/leads"/);

    const address = email();
    const res = await postForm(path, formBody({ name: 'Grace Hopper', email: address, company: 'Navy & Co', consent: 'on' }));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.text).toContain('Your details were shared with Ada &lt;Lovelace&gt;.');
    expect(res.text).not.toContain('<script');

    const inbox = await ctx.request('GET', `/cards/${card.id}/leads?status=pending`, { token: a.session });
    expect(inbox.body.leads).toEqual([
      expect.objectContaining({ name: 'Grace Hopper', email: address, company: 'Navy & Co', phone: null, note: null, status: 'pending' }),
    ]);
  });

  it('a form post from an API client gets the JSON answer; JSON bodies work as before', async () => {
    const { path } = await cardLink();
    const form = await postForm(path, formBody({ name: 'Grace', email: email(), consent: 'on' }), { accept: 'application/json' });
    expect(form.status).toBe(200);
    expect(form.body).toEqual({ status: 'received' });
    const json = await ctx.request('POST', path, {
      body: { name: 'Grace', email: email(), consent: true },
      headers: { 'X-Forwarded-For': newAddress() },
    });
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ status: 'received' });
  });

  it('validates the form as it validates JSON: 422 as a page naming the fields for a browser, the 422 body for a client', async () => {
    const { card, path } = await cardLink();
    const bad = [
      formBody({ name: 'Grace', email: email() }), // no consent
      formBody({ name: 'Grace', email: 'nope', consent: 'on' }),
      formBody({ name: 'x'.repeat(201), email: email(), consent: 'on' }),
      `${formBody({ name: 'Grace', email: email(), consent: 'on' })}&source=injected`,
      formBody({ name: 'Grace', email: email(), consent: 'on', phone: '<script>' }),
    ];
    for (const body of bad) {
      const page = await postForm(path, body);
      expect(page.status, body).toBe(422);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toContain('Please check your details');
      expect(page.text).not.toContain('<script>');
      const json = await postForm(path, body, { accept: 'application/json' });
      expect(json.status).toBe(422);
      expect(json.body.detail[0].loc[0]).toBe('body');
    }
    expect((await postForm(path, formBody({ name: 'Grace', email: email() }))).text).toContain('<strong>consent</strong>');
    const nul = await postForm(path, formBody({ name: 'Gr\u0000ace', email: email(), consent: 'on' }), { accept: 'application/json' });
    expect(nul.status).toBe(422);
    expect((await ctx.request('GET', `/cards/${card.id}/leads`, { token: a.session })).body.leads).toEqual([]);
  });

  it('keeps the limits: 429 (a page with Retry-After), unknown link 404 (a page), other media 415, a large body 413', async () => {
    const { path } = await cardLink();
    const address = newAddress();
    for (let i = 0; i < 2; i++)
      expect((await postForm(path, formBody({ name: 'G', email: email(), consent: 'on' }), { address })).status).toBe(200);
    const limited = await postForm(path, formBody({ name: 'G', email: email(), consent: 'on' }), { address });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const limitedJson = await postForm(path, formBody({ name: 'G', email: email(), consent: 'on' }), {
      address,
      accept: 'application/json',
    });
    expect(limitedJson.status).toBe(429);
    expect(limitedJson.body).toEqual({ detail: 'Too many requests, retry later' });

    const unknown = await postForm('/share/AAAAAAAAAAAAAAAAAAAAAA/leads', formBody({ name: 'G', email: email(), consent: 'on' }));
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);

    const text = await ctx.request('POST', path, {
      rawBody: 'name=G',
      headers: { 'Content-Type': 'text/plain', 'X-Forwarded-For': newAddress() },
    });
    expect(text.status).toBe(415);
    const big = await postForm(path, formBody({ name: 'G', email: email(), consent: 'on', note: 'x'.repeat(70 * 1024) }), {
      accept: 'application/json',
    });
    expect(big.status).toBe(413);
  });

  it('declares both body media types and the HTML answers', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const op = doc.paths['/share/{token}/leads'].post;
    expect(Object.keys(op.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    for (const status of ['200', '404', '422', '429']) expect(Object.keys(op.responses[status].content)).toContain('text/html');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '413', '415']));
  });
});
