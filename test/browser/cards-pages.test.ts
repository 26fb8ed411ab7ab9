import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, dumpDom, screenshot } from '../support/browser';
import { createCard, createShareLink, pngBytes, uploadImage } from '../support/cards';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, type CrmTenant } from '../support/crm-contacts';

// What a person opens in a browser, opened in a real (headless) Chromium: the share page and the
// signature. Screenshots go to CARD_SCREENSHOT_DIR (default: the OS temp dir) for a look by eye.

const chromium = chromiumFor('cards browser tests');
const shots = process.env.CARD_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'card-screenshots');
const HOSTILE = `Ada <img src=x onerror="document.title='pwned'"> "Lovelace"`;

describe.skipIf(!chromium)('cards in a browser', () => {
  let ctx: TestContext;
  let t: CrmTenant;
  let card: Record<string, any>;
  beforeAll(async () => {
    ctx = await createTestContext();
    t = await crmTenant(ctx);
    card = await createCard(ctx, t, {
      name: HOSTILE,
      title: 'Analyst',
      company: 'Analytical Engines',
      email: 'ada@example.com',
      phone: '+44 20 7946 0000',
      website: 'https://example.com',
      links: [{ label: 'Blog', url: 'https://blog.example.com' }],
      primary_color: '#0f766e',
      accent_color: '#7c3aed',
    });
    const photo = (await uploadImage(ctx, t, card.id, await pngBytes('photo', 160))).body.key;
    await ctx.request('PATCH', `/cards/${card.id}`, { token: t.session, body: { photo_key: photo } });
  });
  afterAll(() => ctx?.close());

  it('renders the share page with the card inert and its lead form', async () => {
    const link = await createShareLink(ctx, t, card.id, { source: 'browser' });
    const dom = await dumpDom(chromium!, link.url);
    // The name is text: no element came of it, and its handler never ran.
    expect(dom).not.toContain('<title>pwned</title>');
    expect(dom).not.toContain('<img src="x"');
    expect(dom).toContain('<h1>Ada &lt;img src=x onerror="document.title=\'pwned\'"&gt; "Lovelace"</h1>');
    expect(dom).toMatch(/<form id="lead"[^>]*>/);
    expect(dom).toContain('name="consent"');
    const png = await screenshot(chromium!, link.url, path.join(shots, 'share-page.png'));
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.length).toBeGreaterThan(5_000);
  });

  it('shows a person a page, not JSON, for a revoked link', async () => {
    const link = await createShareLink(ctx, t, card.id, { source: 'revoked' });
    await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: t.session });
    const dom = await dumpDom(chromium!, link.url);
    expect(dom).toContain('<h1>This link is not available</h1>');
    expect(dom).not.toContain('"detail"');
  });

  it('renders the signature with its photo and nothing executed', async () => {
    // The signature needs a token; the browser gets it as a one-off page served from the app's own origin.
    const html = (await ctx.request('GET', `/cards/${card.id}/signature`, { token: t.session })).text;
    const file = path.join(shots, 'signature.html');
    fs.mkdirSync(shots, { recursive: true });
    fs.writeFileSync(file, html);
    const dom = await dumpDom(chromium!, `file://${file}`);
    expect(dom).not.toContain('<title>pwned</title>');
    expect(dom).not.toContain('<img src="x"');
    expect(dom).toContain('Analyst | Analytical Engines');
    expect(dom).toMatch(/<img src="http:\/\/127\.0\.0\.1:\d+\/media\/cards\/[^"]+\.png"/);
    const png = await screenshot(chromium!, `file://${file}`, path.join(shots, 'signature.png'), { width: 640, height: 200 });
    expect(png.length).toBeGreaterThan(2_000);
  });
});
