import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCard, pngBytes, rawGet, uploadImage } from '../support/cards';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, crmTenant, insertAccount, readOnlyKey, type CrmTenant } from '../support/crm-contacts';
import { externalId } from '../support/identity';

let ctx: TestContext;
let a: CrmTenant;
let b: CrmTenant;
let readOnlyA: string;
beforeAll(async () => {
  ctx = await createTestContext({ s3: true, env: { CARD_MEDIA_MAX_BYTES: '4096' } });
  [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
  readOnlyA = await readOnlyKey(ctx, a);
});
afterAll(() => ctx?.close());

const get = (path: string, token = a.session) => ctx.request('GET', path, { token });
const patch = (id: string, body: unknown, token = a.session) => ctx.request('PATCH', `/cards/${id}`, { token, body });

describe('cards CRUD', () => {
  it('creates a card owned by the caller, with default colours', async () => {
    const res = await ctx.request('POST', '/cards', {
      token: a.session,
      body: {
        name: ' Ada Lovelace ',
        title: 'Engineer',
        email: 'ada@example.com',
        links: [{ label: 'LinkedIn', url: 'https://linkedin.com/in/ada' }],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      owner_id: a.user,
      name: 'Ada Lovelace',
      title: 'Engineer',
      company: null,
      links: [{ label: 'LinkedIn', url: 'https://linkedin.com/in/ada' }],
      photo_key: null,
      photo_url: null,
      primary_color: '#1f2937',
      accent_color: '#2563eb',
      account_id: null,
      created_by: `user:${a.user}`,
    });
    expect((await get(`/cards/${res.body.id}`)).body).toEqual(res.body);
  });

  it('validates every field strictly (422)', async () => {
    const bad = [
      {},
      { name: '' },
      { name: 'x', primary_color: 'red' },
      { name: 'x', website: 'javascript:alert(1)' },
      { name: 'x', links: [{ label: 'x', url: 'ftp://example.com' }] },
      { name: 'x', links: Array.from({ length: 11 }, (_, i) => ({ label: `l${i}`, url: 'https://example.com' })) },
      { name: 'x', email: 'not-an-email' },
      { name: 'x', phone: 'call me <b>' },
      { name: 'x', photo_key: 'cards/a/b.png' },
      { name: 'x', extra: true },
    ];
    for (const body of bad)
      expect((await ctx.request('POST', '/cards', { token: a.session, body })).status, JSON.stringify(body)).toBe(422);
  });

  it('takes an owner among the organization’s members and an account of the organization; others are 404', async () => {
    const colleague = externalId('user');
    await ctx.request('GET', '/me', {
      token: await ctx.session({ sub: colleague, org_id: a.org, org_ids: [a.org], permissions: ['api:read'] }),
    });
    expect((await createCard(ctx, a, { owner_id: colleague })).owner_id).toBe(colleague);
    const stranger = await ctx.request('POST', '/cards', { token: a.session, body: { name: 'x', owner_id: b.user } });
    expect(stranger.status).toBe(404);
    const accountA = await insertAccount(ctx, a.orgId);
    expect((await createCard(ctx, a, { account_id: accountA })).account_id).toBe(accountA);
    const accountB = await insertAccount(ctx, b.orgId);
    expect((await ctx.request('POST', '/cards', { token: a.session, body: { name: 'x', account_id: accountB } })).status).toBe(404);
  });

  it('lists newest first, filters by owner, and never shows another organization’s cards', async () => {
    const t = await crmTenant(ctx);
    const first = await createCard(ctx, t, { name: 'First' });
    const second = await createCard(ctx, t, { name: 'Second' });
    await createCard(ctx, b, { name: 'Elsewhere' });
    const res = await get('/cards', t.session);
    expect(res.status).toBe(200);
    expect(res.body.cards.map((c: { id: string }) => c.id)).toEqual([second.id, first.id]);
    expect(res.body).toMatchObject({ limit: 50, offset: 0 });
    expect((await get(`/cards?owner_id=${t.user}&limit=1`, t.session)).body.cards.map((c: { id: string }) => c.id)).toEqual([second.id]);
    expect((await get('/cards?owner_id=nobody', t.session)).body.cards).toEqual([]);
    expect((await get('/cards?color=red', t.session)).status).toBe(400);
  });

  it('updates only the fields sent, null clears, an empty body is 400', async () => {
    const card = await createCard(ctx, a, { title: 'CTO', company: 'Acme' });
    const res = await patch(card.id, { title: null, accent_color: '#ff0000' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: null, company: 'Acme', accent_color: '#ff0000' });
    expect((await patch(card.id, {})).status).toBe(400);
    expect((await patch(card.id, { name: null })).status).toBe(422);
  });

  it('is 404 across organizations, and a read-only key reads but never writes (403)', async () => {
    const card = await createCard(ctx, a);
    expect((await get(`/cards/${card.id}`, b.session)).status).toBe(404);
    expect((await patch(card.id, { name: 'x' }, b.session)).status).toBe(404);
    expect((await ctx.request('DELETE', `/cards/${card.id}`, { token: b.session })).status).toBe(404);
    expect((await get(`/cards/${MISSING_ID}`)).status).toBe(404);
    expect((await get(`/cards/${card.id}`, readOnlyA)).status).toBe(200);
    expect((await get(`/cards/${card.id}/signature`, readOnlyA)).status).toBe(200);
    expect((await ctx.request('POST', '/cards', { token: readOnlyA, body: { name: 'x' } })).status).toBe(403);
    expect((await patch(card.id, { name: 'x' }, readOnlyA)).status).toBe(403);
    expect((await ctx.request('DELETE', `/cards/${card.id}`, { token: readOnlyA })).status).toBe(403);
    expect((await uploadImage(ctx, { ...a, session: readOnlyA }, card.id, await pngBytes())).status).toBe(403);
  });

  it('deletes a card (204), then it is 404', async () => {
    const card = await createCard(ctx, a);
    expect((await ctx.request('DELETE', `/cards/${card.id}`, { token: a.session })).status).toBe(204);
    expect((await get(`/cards/${card.id}`)).status).toBe(404);
    expect((await ctx.request('DELETE', `/cards/${card.id}`, { token: a.session })).status).toBe(404);
  });
});

describe('GET /cards/{card_id}/signature', () => {
  const hostile = `<script>alert("x")</script> O'Brien "Q" & Co`;

  it('escapes every card value and uses email-safe markup', async () => {
    const card = await createCard(ctx, a, {
      name: hostile,
      title: '<img src=x onerror=alert(1)>',
      company: 'A&B "Quotes"',
      email: 'ada@example.com',
      phone: '+44 (20) 7946-0000',
      website: 'https://example.com/?a="b"&c=<d>',
      links: [{ label: '<b>Blog</b>', url: 'https://blog.example.com/"onmouseover="x' }],
    });
    const res = await get(`/cards/${card.id}/signature`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = res.text;
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>Blog');
    expect(html).not.toMatch(/"onmouseover=/);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; O&#39;Brien &quot;Q&quot; &amp; Co');
    expect(html).toContain('A&amp;B &quot;Quotes&quot;');
    expect(html).toContain('href="tel:+442079460000"');
    expect(html).toContain('href="mailto:ada@example.com"');
    // Mail-client-safe: tables and inline styles, no stylesheet, class or script.
    expect(html).toContain('<table');
    expect(html).not.toMatch(/<style|class=|<script/i);
  });

  it('is rendered fresh from the current card after every update, with absolute image URLs', async () => {
    const card = await createCard(ctx, a, { title: 'Engineer' });
    expect((await get(`/cards/${card.id}/signature?format=fragment`)).text).toContain('Engineer');
    await patch(card.id, { title: 'Chief Engineer', company: 'Analytical Engines' });
    const after = (await get(`/cards/${card.id}/signature?format=fragment`)).text;
    expect(after).toContain('Chief Engineer | Analytical Engines');
    expect(after.startsWith('<table')).toBe(true);

    const uploaded = await uploadImage(ctx, a, card.id, await pngBytes());
    await patch(card.id, { photo_key: uploaded.body.key });
    const withPhoto = (await get(`/cards/${card.id}/signature`)).text;
    expect(withPhoto).toContain(`src="${ctx.baseUrl}/media/${uploaded.body.key}"`);
    expect(withPhoto).toMatch(/<img [^>]*width="80" height="80"/);
    expect((await get(`/cards/${card.id}/signature?include_photo=false`)).text).not.toContain('<img');
    expect((await get(`/cards/${card.id}/signature?layout=compact`)).text).not.toContain('<img');
  });

  it('offers a plain-text variant', async () => {
    const card = await createCard(ctx, a, { name: hostile, title: 'CEO', email: 'x@example.com' });
    const res = await get(`/cards/${card.id}/signature?format=text`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toMatch(
      /^-- \n[^\n]+\nCEO\nView my card: https?:\/\/[^\n]+\/share\/[A-Za-z0-9_-]{22}\?utm_source=email-signature&utm_medium=email\nx@example\.com\n$/,
    );
    expect(res.text.split('\n')[1]).toBe(hostile);
  });

  it('links to the card through its tracked signature link, so signature visits are attributed', async () => {
    const card = await createCard(ctx, a, { email: 'sig@example.com' });
    const html = (await get(`/cards/${card.id}/signature?format=fragment`)).text;
    const href =
      /href="(https?:\/\/[^"]+\/share\/([A-Za-z0-9_-]{22})\?utm_source=email-signature&amp;utm_medium=email)"[^>]*>View my card</.exec(
        html,
      );
    expect(href, html).not.toBeNull();
    const links = (await ctx.request('GET', `/cards/${card.id}/share-links`, { token: a.session })).body.share_links;
    expect(links).toEqual([expect.objectContaining({ token: href![2], source: 'email-signature', state: 'active' })]);
    // A person opening it counts a view from the signature.
    expect((await ctx.request('GET', `/share/${href![2]}?utm_source=email-signature&utm_medium=email`)).status).toBe(200);
    const events = (await ctx.request('GET', `/cards/${card.id}/events`, { token: a.session })).body.events;
    expect(events).toEqual([
      expect.objectContaining({ event_type: 'view', source: 'email-signature', utm_source: 'email-signature', utm_medium: 'email' }),
    ]);
    // Revoked, the signature no longer links to the card (nothing is stored by rendering it).
    await ctx.request('DELETE', `/cards/${card.id}/share-links/${links[0].id}`, { token: a.session });
    expect((await get(`/cards/${card.id}/signature?format=fragment`)).text).not.toContain('View my card');
    expect((await ctx.request('GET', `/cards/${card.id}/share-links`, { token: a.session })).body.share_links).toHaveLength(1);
  });

  it('refuses unknown options (400) and is 404 across organizations', async () => {
    const card = await createCard(ctx, a);
    expect((await get(`/cards/${card.id}/signature?layout=fancy`)).status).toBe(400);
    expect((await get(`/cards/${card.id}/signature?theme=dark`)).status).toBe(400);
    expect((await get(`/cards/${card.id}/signature?include_photo=yes`)).status).toBe(400);
    const other = await get(`/cards/${card.id}/signature`, b.session);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: 'Card not found' });
  });
});

describe('public media', () => {
  it('uploads a card image and serves it to anyone with its type and cache headers', async () => {
    const card = await createCard(ctx, a);
    const bytes = await pngBytes();
    const res = await uploadImage(ctx, a, card.id, bytes);
    expect(res.status).toBe(200);
    expect(res.body.key).toMatch(new RegExp(`^cards/${card.id}/[0-9a-f-]{36}\\.png$`));
    expect(res.body).toMatchObject({ url: `${ctx.baseUrl}/media/${res.body.key}`, content_type: 'image/png', size_bytes: bytes.length });
    const image = await fetch(res.body.url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await image.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('refuses bodies that are not the declared image (415), too large ones (413), and other organizations’ cards (404)', async () => {
    const card = await createCard(ctx, a);
    expect((await uploadImage(ctx, a, card.id, Buffer.from('<html><script>alert(1)</script></html>'), 'image/png')).status).toBe(415);
    expect((await uploadImage(ctx, a, card.id, await pngBytes(), 'image/jpeg')).status).toBe(415);
    expect((await uploadImage(ctx, a, card.id, Buffer.from('<svg/>'), 'image/svg+xml')).status).toBe(415);
    expect((await uploadImage(ctx, a, card.id, await pngBytes('a long text to make a big image', 900))).status).toBe(413);
    expect((await uploadImage(ctx, b, card.id, await pngBytes())).status).toBe(404);
  });

  it('sets only images of the same card as photo or logo', async () => {
    const card = await createCard(ctx, a);
    const other = await createCard(ctx, a);
    const mine = (await uploadImage(ctx, a, card.id, await pngBytes())).body.key;
    const theirs = (await uploadImage(ctx, a, other.id, await pngBytes())).body.key;
    expect((await patch(card.id, { logo_key: theirs })).status).toBe(404);
    expect((await patch(card.id, { logo_key: `cards/${card.id}/${MISSING_ID}.png` })).status).toBe(404);
    const res = await patch(card.id, { logo_key: mine });
    expect(res.body).toMatchObject({ logo_key: mine, logo_url: `${ctx.baseUrl}/media/${mine}` });
  });

  it('answers 404 for every key outside the allowlisted shape, traversal attempts included', async () => {
    const card = await createCard(ctx, a);
    const key: string = (await uploadImage(ctx, a, card.id, await pngBytes())).body.key;
    const file = key.split('/')[2]!;
    const stem = file.replace('.png', '');
    const paths = [
      `/media/cards/${card.id}/${stem}.jpg`,
      `/media/cards/${card.id}/${stem}.PNG`,
      `/media/cards/${card.id.toUpperCase()}/${file}`,
      `/media/cards/${card.id}/${MISSING_ID}.png`,
      `/media/cards/${card.id}/`,
      `/media/cards/${card.id}`,
      `/media/cards/`,
      `/media/`,
      `/media/cards/${card.id}/..%2F..%2F..%2Fpackage.json`,
      `/media/cards/..%2F..%2F/package.json`,
      `/media/cards/${card.id}/%2e%2e%2f%2e%2e%2fpackage.json`,
      `/media/cards/${card.id}/../../../package.json`,
      `/media/cards/${card.id}/${stem}.png.html`,
      `/media/files/${card.id}/${file}`,
    ];
    // A NUL character is refused by validation before anything else, naming the parameter (422).
    const nul = await rawGet(ctx.baseUrl, `/media/cards/${card.id}/${file}%00.html`);
    expect(nul.status).toBe(422);
    expect(JSON.parse(nul.body).detail[0].loc).toEqual(['path', 'file']);
    for (const path of paths) {
      const res = await rawGet(ctx.baseUrl, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toBe('{"detail":"Not Found"}');
    }
    expect((await rawGet(ctx.baseUrl, `/media/${key}`)).status).toBe(200);
  });

  it('stops serving a card’s images once the card is deleted', async () => {
    const card = await createCard(ctx, a);
    const { url } = (await uploadImage(ctx, a, card.id, await pngBytes())).body;
    expect((await fetch(url)).status).toBe(200);
    await ctx.request('DELETE', `/cards/${card.id}`, { token: a.session });
    expect((await fetch(url)).status).toBe(404);
  });
});
