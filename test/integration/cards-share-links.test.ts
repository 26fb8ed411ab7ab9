import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCard, createShareLink } from '../support/cards';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, createContact, crmTenant, insertAccount, readOnlyKey, type CrmTenant } from '../support/crm-contacts';

let ctx: TestContext;
let a: CrmTenant;
let b: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext({
    // The test client stands in for a proxy chain (127.0.0.1, then 10.0.0.1) forwarding each visitor's address.
    env: {
      CARD_READS_PER_ADDRESS: '8',
      CARD_READS_PER_LINK: '12',
      CARD_LEADS_PER_ADDRESS: '2',
      CARD_LEADS_PER_LINK: '3',
      TRUSTED_PROXIES: '127.0.0.1,10.0.0.1',
    },
  });
  [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
});
afterAll(() => ctx?.close());

/** A client address of its own for each caller, so the per-address limits of tests never meet. */
let addresses = 0;
const newAddress = () => `203.0.${Math.floor(++addresses / 250)}.${(addresses % 250) + 1}, 10.0.0.1`;
const visitor = (address = newAddress()) => ({
  get: (path: string, headers: Record<string, string> = {}) =>
    ctx.request('GET', path, { headers: { 'X-Forwarded-For': address, ...headers } }),
  post: (path: string, body: unknown) => ctx.request('POST', path, { body, headers: { 'X-Forwarded-For': address } }),
});
const sharePath = (link: Record<string, any>) => `/share/${link.token}`;
const lead = (extra: Record<string, unknown> = {}) => ({
  name: 'Grace Brewster Hopper',
  email: `grace-${crypto.randomBytes(4).toString('hex')}@example.com`,
  consent: true,
  ...extra,
});

async function cardWithLink(tenant: CrmTenant, card: Record<string, unknown> = {}, link: Record<string, unknown> = {}) {
  const c = await createCard(ctx, tenant, {
    title: 'Engineer',
    email: 'ada@example.com',
    phone: '+1 555 0100',
    links: [{ label: 'Blog', url: 'https://blog.example.com/ada' }],
    ...card,
  });
  return { card: c, link: await createShareLink(ctx, tenant, c.id, link) };
}

async function contactsByEmail(tenant: CrmTenant, email: string) {
  return (await ctx.request('GET', `/contacts?search=${encodeURIComponent(email)}`, { token: tenant.session })).body as Record<
    string,
    any
  >[];
}

describe('managing share links', () => {
  it('creates a link with its page, QR and vCard URLs, lists it, and revokes it idempotently', async () => {
    const card = await createCard(ctx, a);
    const link = await createShareLink(ctx, a, card.id, { source: 'websummit-booth' });
    expect(link).toMatchObject({
      card_id: card.id,
      source: 'websummit-booth',
      state: 'active',
      url: `${ctx.baseUrl}/share/${link.token}`,
      qr_url: `${ctx.baseUrl}/share/${link.token}?via=qr`,
      qr_png_url: `${ctx.baseUrl}/share/${link.token}/qr.png`,
      vcard_url: `${ctx.baseUrl}/share/${link.token}/vcard`,
      expires_at: null,
      revoked_at: null,
    });
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // Newest first; the card's own email-signature link was made with the card.
    expect((await ctx.request('GET', `/cards/${card.id}/share-links`, { token: a.session })).body.share_links).toEqual([
      link,
      expect.objectContaining({ source: 'email-signature', state: 'active' }),
    ]);
    expect((await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: a.session })).status).toBe(204);
    expect((await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: a.session })).status).toBe(204);
    const after = await ctx.request('GET', `/cards/${card.id}/share-links/${link.id}`, { token: a.session });
    expect(after.body).toMatchObject({ state: 'revoked', revoked_at: expect.any(String) });
  });

  it('refuses an expiry in the past (422), and is 404 across organizations and 403 for read-only keys', async () => {
    const card = await createCard(ctx, a);
    const past = await ctx.request('POST', `/cards/${card.id}/share-links`, {
      token: a.session,
      body: { expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(422);
    expect((await ctx.request('POST', `/cards/${card.id}/share-links`, { token: b.session, body: {} })).status).toBe(404);
    expect((await ctx.request('GET', `/cards/${card.id}/share-links`, { token: b.session })).status).toBe(404);
    const link = await createShareLink(ctx, a, card.id);
    expect((await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: b.session })).status).toBe(404);
    const readOnly = await readOnlyKey(ctx, a);
    expect((await ctx.request('POST', `/cards/${card.id}/share-links`, { token: readOnly, body: {} })).status).toBe(403);
    expect((await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('GET', `/cards/${card.id}/share-links`, { token: readOnly })).status).toBe(200);
  });
});

describe('the public side of a link', () => {
  it('shows the card as JSON without internal ids', async () => {
    const { card, link } = await cardWithLink(a, { account_id: await insertAccount(ctx, a.orgId) });
    const res = await visitor().get(`${sharePath(link)}/card`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({
      name: card.name,
      title: 'Engineer',
      email: 'ada@example.com',
      vcard_url: `${link.url}/vcard`,
      leads_url: `${link.url}/leads`,
    });
    expect(res.body.links).toEqual([{ label: 'Blog', url: 'https://blog.example.com/ada', click_url: `${link.url}/links/0` }]);
    for (const secret of [a.orgId, card.id, card.account_id, a.user, link.id]) expect(res.text).not.toContain(secret);
  });

  it('serves an HTML page with the card escaped, a nonce-only script policy and the lead form', async () => {
    const { link } = await cardWithLink(a, { name: `<script>alert("x")</script> O'Hara` });
    const res = await visitor().get(`${sharePath(link)}?utm_source=newsletter&fbclid=abc`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; O&#39;Hara');
    expect(res.text.match(/<script/g)).toHaveLength(1);
    expect(res.text).toContain(`<script nonce="${nonce}">`);
    expect(res.text).toContain(`action="${link.url}/leads?utm_source=newsletter"`);
    expect(res.text).toContain(`href="${link.url}/vcard?utm_source=newsletter"`);
  });

  it('downloads a vCard and shows QR codes as PNG and SVG', async () => {
    const { link } = await cardWithLink(a, { name: 'Ada King, Countess; of Lovelace', company: 'Analytical Engines' });
    const v = await visitor().get(`${sharePath(link)}/vcard`);
    expect(v.status).toBe(200);
    expect(v.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
    expect(v.headers.get('content-disposition')).toContain('.vcf');
    expect(v.text.startsWith('BEGIN:VCARD\r\nVERSION:3.0\r\n')).toBe(true);
    expect(v.text).toContain('FN:Ada King\\, Countess\\; of Lovelace\r\n');
    expect(v.text).toContain('ORG:Analytical Engines\r\n');
    expect(v.text).toContain('TEL;TYPE=CELL,VOICE:+1 555 0100\r\n');
    expect(v.text.endsWith('END:VCARD\r\n')).toBe(true);

    const png = await fetch(`${ctx.baseUrl}${sharePath(link)}/qr.png?size=256`, { headers: { 'X-Forwarded-For': newAddress() } });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(0, 8)
        .toString('hex'),
    ).toBe('89504e470d0a1a0a');
    const svg = await visitor().get(`${sharePath(link)}/qr.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svg.text).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect((await visitor().get(`${sharePath(link)}/qr.png?size=5000`)).status).toBe(422);
  });

  it('redirects a link click to the card’s link, and 404s an index the card lacks', async () => {
    const { link } = await cardWithLink(a);
    const res = await fetch(`${ctx.baseUrl}${sharePath(link)}/links/0`, {
      redirect: 'manual',
      headers: { 'X-Forwarded-For': newAddress() },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://blog.example.com/ada');
    expect((await visitor().get(`${sharePath(link)}/links/1`)).status).toBe(404);
  });

  it('reveals nothing of a revoked, expired, unknown or malformed link: the same 404 everywhere', async () => {
    const { card, link: revoked } = await cardWithLink(a);
    await ctx.request('DELETE', `/cards/${card.id}/share-links/${revoked.id}`, { token: a.session });
    const expired = await createShareLink(ctx, a, card.id, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    await ctx.deps.sql`UPDATE card_share_links SET expires_at = now() - interval '1 second' WHERE id = ${expired.id}`;
    const tokens = [revoked.token, expired.token, 'AAAAAAAAAAAAAAAAAAAAAA', 'not-a-token', '..%2F..%2Fetc'];
    for (const token of tokens) {
      const v = visitor();
      for (const suffix of ['', '/card', '/vcard', '/qr.png', '/qr.svg', '/links/0']) {
        const res = await v.get(`/share/${token}${suffix}`);
        expect(res.status, `${token}${suffix}`).toBe(404);
        expect(res.body, `${token}${suffix}`).toEqual({ detail: 'Share link not found' });
      }
      const posted = await v.post(`/share/${token}/leads`, lead());
      expect(posted.status).toBe(404);
      expect(posted.body).toEqual({ detail: 'Share link not found' });
    }
  });
});

describe('lead capture', () => {
  it('keeps a lead in the card inbox, touching no contact, and notifies the owner', async () => {
    const accountId = await insertAccount(ctx, a.orgId);
    const { card, link } = await cardWithLink(a, { account_id: accountId });
    const body = lead({ phone: '+1 555 0199', company: 'Navy', note: 'Met at the booth' });
    const res = await visitor().post(`${sharePath(link)}/leads`, body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: 'received' });
    expect(await contactsByEmail(a, body.email)).toEqual([]);
    const inbox = await ctx.request('GET', `/cards/${card.id}/leads?status=pending`, { token: a.session });
    expect(inbox.status).toBe(200);
    expect(inbox.body.leads).toEqual([
      expect.objectContaining({
        status: 'pending',
        name: body.name,
        email: body.email,
        company: 'Navy',
        note: 'Met at the booth',
        contact_id: null,
        source: null,
      }),
    ]);
    const [outbox] = await ctx.deps.sql`
      SELECT event_type, entity_type, entity_id, payload, recipient_user_ids FROM notification_outbox
      WHERE org_id = ${a.orgId} AND entity_id = ${card.id}`;
    const [owner] = await ctx.deps.sql`SELECT id FROM users WHERE external_id = ${a.user}`;
    expect(outbox).toMatchObject({ event_type: 'card.lead_submitted', entity_type: 'card', recipient_user_ids: [owner!.id] });
    expect(outbox!.payload).toMatchObject({ name: body.name, email: body.email, lead_id: inbox.body.leads[0].id, card_name: card.name });
    expect(ctx.logs.join('')).not.toContain(body.email);
  });

  it('accepts a lead into a new contact (source card, the card owner’s, on the card’s account when the company matches)', async () => {
    const accountId = await insertAccount(ctx, a.orgId);
    const [account] = await ctx.deps.sql<{ name: string }[]>`SELECT name FROM accounts WHERE id = ${accountId}`;
    const accountName = account!.name;
    const { card, link } = await cardWithLink(a, { account_id: accountId });
    const same = lead({ phone: '+1 555 0199', company: `${accountName.toUpperCase()}, Inc.`, note: 'Met at the booth' });
    const other = lead({ company: 'Somewhere Else Ltd' });
    for (const body of [same, other]) expect((await visitor().post(`${sharePath(link)}/leads`, body)).status).toBe(200);
    const pending = (await ctx.request('GET', `/cards/${card.id}/leads`, { token: a.session })).body.leads;
    const idOf = (email: string) => pending.find((l: { email: string }) => l.email === email).id;

    expect(
      (await ctx.request('POST', `/cards/${card.id}/leads/${idOf(same.email)}/accept`, { token: await readOnlyKey(ctx, a) })).status,
    ).toBe(403);
    const accepted = await ctx.request('POST', `/cards/${card.id}/leads/${idOf(same.email)}/accept`, { token: a.session });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ status: 'accepted', contact_created: true, decided_by: `user:${a.user}` });
    const [contact] = await contactsByEmail(a, same.email);
    expect(contact).toMatchObject({
      id: accepted.body.contact_id,
      first_name: 'Grace Brewster',
      last_name: 'Hopper',
      phone: '+1 555 0199',
      notes: 'Met at the booth',
      source: 'card',
      owner_id: a.user,
      account_id: accountId,
    });
    expect((await ctx.request('POST', `/cards/${card.id}/leads/${idOf(same.email)}/accept`, { token: a.session })).status).toBe(409);

    // Another company is not filed under the card's account.
    await ctx.request('POST', `/cards/${card.id}/leads/${idOf(other.email)}/accept`, { token: a.session });
    expect((await contactsByEmail(a, other.email))[0]).toMatchObject({ account_id: null, company: 'Somewhere Else Ltd' });
  });

  it('accepting fills only the gaps of a known contact (email case aside), and never touches another organization', async () => {
    const { card, link } = await cardWithLink(a);
    const email = `known-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const known = await createContact(ctx, a, { first_name: 'Original', last_name: 'Name', email, source: 'import', phone: '+1 555 0000' });
    const elsewhere = await createContact(ctx, b, { first_name: 'B', email });
    const res = await visitor().post(
      `${sharePath(link)}/leads`,
      lead({ name: 'Someone Else', email: email.toUpperCase(), phone: '+1 555 0123', company: 'Evil' }),
    );
    expect(res.body).toEqual({ status: 'received' });
    // Until a person accepts it, the known contact is untouched.
    expect((await contactsByEmail(a, email))[0]).toMatchObject({ id: known.id, phone: '+1 555 0000', company: null });
    const [pending] = (await ctx.request('GET', `/cards/${card.id}/leads`, { token: a.session })).body.leads;
    const accepted = await ctx.request('POST', `/cards/${card.id}/leads/${pending.id}/accept`, { token: a.session });
    expect(accepted.body).toMatchObject({ contact_id: known.id, contact_created: false });
    const contacts = await contactsByEmail(a, email);
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject({
      id: known.id,
      first_name: 'Original',
      last_name: 'Name',
      source: 'import',
      phone: '+1 555 0000',
      company: 'Evil',
    });
    const other = (await ctx.request('GET', `/contacts/${elsewhere.id}`, { token: b.session })).body;
    expect(other).toMatchObject({ first_name: 'B', phone: null, company: null });
  });

  it('dismisses a lead, exports the inbox as spreadsheet-safe CSV, and is 404 across organizations', async () => {
    const { card, link } = await cardWithLink(a);
    const formula = lead({ name: '=HYPERLINK("http://evil.example","x")', company: '+cmd' });
    const plain = lead({ company: 'Plain, "Quoted" Co' });
    for (const body of [formula, plain]) expect((await visitor().post(`${sharePath(link)}/leads`, body)).status).toBe(200);
    const [newest] = (await ctx.request('GET', `/cards/${card.id}/leads?limit=1`, { token: a.session })).body.leads;
    expect(newest.email).toBe(plain.email);
    const dismissed = await ctx.request('POST', `/cards/${card.id}/leads/${newest.id}/dismiss`, { token: a.session });
    expect(dismissed.body).toMatchObject({ status: 'dismissed', contact_id: null, contact_created: null });
    expect(await contactsByEmail(a, plain.email)).toEqual([]);
    expect((await ctx.request('POST', `/cards/${card.id}/leads/${newest.id}/accept`, { token: a.session })).status).toBe(409);

    const csv = await ctx.request('GET', `/cards/${card.id}/leads/export`, { token: a.session });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe('id,created_at,status,name,email,phone,company,note,source,contact_id,consent_at');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(',dismissed,');
    expect(lines[1]).toContain('"Plain, ""Quoted"" Co"');
    expect(lines[2]).toContain(`,pending,"'=HYPERLINK(""http://evil.example"",""x"")",`);
    expect(lines[2]).toContain(",'+cmd,");
    expect(
      (await ctx.request('GET', `/cards/${card.id}/leads/export?status=pending`, { token: a.session })).text.trim().split('\n'),
    ).toHaveLength(2);

    expect((await ctx.request('GET', `/cards/${card.id}/leads`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('POST', `/cards/${card.id}/leads/${newest.id}/dismiss`, { token: b.session })).status).toBe(404);
  });

  it('validates the form strictly (422) and requires consent', async () => {
    const { link } = await cardWithLink(a);
    const bad = [
      lead({ consent: false }),
      { name: 'x', email: 'x@example.com' },
      lead({ email: 'nope' }),
      lead({ name: '' }),
      lead({ name: 'x'.repeat(201) }),
      lead({ note: 'x'.repeat(2001) }),
      lead({ phone: '<script>' }),
      lead({ source: 'injected' }),
    ];
    const v = visitor();
    for (const body of bad) expect((await v.post(`${sharePath(link)}/leads`, body)).status, JSON.stringify(body)).toBe(422);
  });
});

describe('rate limits', () => {
  it('limits reads per client address (429 with Retry-After), guesses included; another address goes on', async () => {
    const { link } = await cardWithLink(a);
    const v = visitor();
    for (let i = 0; i < 6; i++) expect((await v.get(`${sharePath(link)}/card`)).status).toBe(200);
    expect((await v.get('/share/AAAAAAAAAAAAAAAAAAAAAA/card')).status).toBe(404);
    expect((await v.get('/share/BBBBBBBBBBBBBBBBBBBBBB/card')).status).toBe(404);
    const limited = await v.get(`${sharePath(link)}/card`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toEqual({ detail: 'Too many requests, retry later' });
    expect((await visitor().get(`${sharePath(link)}/card`)).status).toBe(200);
  });

  it('limits reads per link whatever the address; other links go on', async () => {
    const { card, link } = await cardWithLink(a);
    for (let i = 0; i < 12; i++) expect((await visitor().get(`${sharePath(link)}/vcard`)).status).toBe(200);
    expect((await visitor().get(`${sharePath(link)}/vcard`)).status).toBe(429);
    const other = await createShareLink(ctx, a, card.id);
    expect((await visitor().get(`${sharePath(other)}/vcard`)).status).toBe(200);
  });

  it('limits lead submissions per address and per link', async () => {
    const { link } = await cardWithLink(a);
    const v = visitor();
    expect((await v.post(`${sharePath(link)}/leads`, lead())).status).toBe(200);
    expect((await v.post(`${sharePath(link)}/leads`, lead())).status).toBe(200);
    expect((await v.post(`${sharePath(link)}/leads`, lead())).status).toBe(429);
    expect((await visitor().post(`${sharePath(link)}/leads`, lead())).status).toBe(200);
    expect((await visitor().post(`${sharePath(link)}/leads`, lead())).status).toBe(429);
  });
});

describe('attribution', () => {
  it('records each event with its link, source, UTM, cleaned referrer and time, never the address', async () => {
    const { card, link } = await cardWithLink(a, {}, { source: 'booth' });
    const other = await createShareLink(ctx, a, card.id, { source: 'email' });
    const address = '198.51.100.77';
    const v = visitor(address);
    const utm = 'utm_source=conf&utm_medium=print&utm_campaign=spring';
    await v.get(`${sharePath(link)}?via=qr&${utm}`, { Referer: 'https://social.example.com/post/1?session=secret#x' });
    await v.get(`${sharePath(link)}/card`);
    await v.get(`${sharePath(link)}/vcard?${utm}`);
    await fetch(`${ctx.baseUrl}${sharePath(link)}/links/0`, { redirect: 'manual', headers: { 'X-Forwarded-For': address } });
    await v.post(`${sharePath(link)}/leads?${utm}`, lead());
    await visitor().get(`${sharePath(other)}/card`);

    const list = await ctx.request('GET', `/cards/${card.id}/events?share_link_id=${link.id}`, { token: a.session });
    expect(list.status).toBe(200);
    const types = list.body.events.map((e: { event_type: string }) => e.event_type);
    expect(types.sort()).toEqual(['lead_submitted', 'link_click', 'qr_scan', 'vcard_download', 'view', 'view']);
    const qr = list.body.events.find((e: { event_type: string }) => e.event_type === 'qr_scan');
    expect(qr).toMatchObject({
      share_link_id: link.id,
      source: 'booth',
      utm_source: 'conf',
      utm_medium: 'print',
      utm_campaign: 'spring',
      referrer: 'https://social.example.com/post/1',
    });
    expect(list.body.events.find((e: { event_type: string }) => e.event_type === 'link_click').detail).toEqual({
      index: 0,
      label: 'Blog',
      url: 'https://blog.example.com/ada',
    });
    const stored = JSON.stringify(await ctx.deps.sql`SELECT * FROM card_events WHERE card_id = ${card.id}`);
    expect(stored).not.toContain(address);
    expect(stored).not.toContain('secret');

    const today = new Date().toISOString().slice(0, 10);
    const summary = await ctx.request('GET', `/cards/${card.id}/events/summary`, { token: a.session });
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      card_id: card.id,
      share_link_id: null,
      to: today,
      totals: { view: 3, qr_scan: 1, vcard_download: 1, link_click: 1, lead_submitted: 1 },
      conversion_rate: 0.3333,
    });
    expect(summary.body.by_day).toHaveLength(30);
    expect(summary.body.by_day.at(-1)).toEqual({
      date: today,
      view: 3,
      qr_scan: 1,
      vcard_download: 1,
      link_click: 1,
      lead_submitted: 1,
      conversion_rate: 0.3333,
    });
    expect(summary.body.by_day[0]).toMatchObject({ view: 0, conversion_rate: null });
    const byLink = Object.fromEntries(summary.body.by_link.map((l: { source: string }) => [l.source, l]));
    expect(byLink.booth).toMatchObject({ share_link_id: link.id, totals: { view: 2, lead_submitted: 1 }, conversion_rate: 0.5 });
    expect(byLink.email).toMatchObject({ share_link_id: other.id, totals: { view: 1, lead_submitted: 0 }, conversion_rate: 0 });

    const perLink = await ctx.request('GET', `/cards/${card.id}/share-links/${link.id}/events/summary?from=${today}&to=${today}`, {
      token: a.session,
    });
    expect(perLink.body).toMatchObject({
      share_link_id: link.id,
      from: today,
      to: today,
      totals: { view: 2, lead_submitted: 1 },
      conversion_rate: 0.5,
    });
    expect(perLink.body.by_day).toHaveLength(1);
    expect(perLink.body.by_link).toBeUndefined();
  });

  it('reads with a CRM read scope, 404s across organizations, and validates ranges and filters', async () => {
    const { card, link } = await cardWithLink(a);
    const readOnly = await readOnlyKey(ctx, a);
    expect((await ctx.request('GET', `/cards/${card.id}/events/summary`, { token: readOnly })).status).toBe(200);
    expect((await ctx.request('GET', `/cards/${card.id}/events`, { token: readOnly })).status).toBe(200);
    expect((await ctx.request('GET', `/cards/${card.id}/events/summary`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', `/cards/${card.id}/events`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', `/cards/${card.id}/share-links/${MISSING_ID}/events/summary`, { token: a.session })).status).toBe(404);
    expect((await ctx.request('GET', `/cards/${card.id}/share-links/${link.id}/events/summary`, { token: b.session })).status).toBe(404);
    expect((await ctx.request('GET', `/cards/${card.id}/events/summary?from=2025-02-01&to=2025-01-01`, { token: a.session })).status).toBe(
      422,
    );
    expect((await ctx.request('GET', `/cards/${card.id}/events/summary?from=2023-01-01&to=2025-01-01`, { token: a.session })).status).toBe(
      422,
    );
    expect((await ctx.request('GET', `/cards/${card.id}/events?event_type=bogus`, { token: a.session })).status).toBe(400);
    expect((await ctx.request('GET', `/cards/${card.id}/events?ip=1`, { token: a.session })).status).toBe(400);
  });
});

describe('what people and link previews see', () => {
  const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  it('does not count crawlers and link expanders as views; a person counts', async () => {
    const { card, link } = await cardWithLink(a);
    for (const agent of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'facebookexternalhit/1.1',
      'LinkedInBot/1.0 (compatible; Mozilla/5.0)',
    ]) {
      expect((await visitor().get(`${sharePath(link)}?via=qr`, { 'User-Agent': agent })).status).toBe(200);
    }
    expect((await visitor().get(sharePath(link))).status).toBe(200);
    const events = (await ctx.request('GET', `/cards/${card.id}/events?share_link_id=${link.id}`, { token: a.session })).body.events;
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual(['view']);
  });

  it('gives the page Open Graph and Twitter card tags, escaped', async () => {
    const { link } = await cardWithLink(a, { name: 'Ada "Countess" Lovelace', bio: 'Writes <programs>' });
    const page = (await visitor().get(sharePath(link))).text;
    expect(page).toContain('<meta property="og:title" content="Ada &quot;Countess&quot; Lovelace">');
    expect(page).toContain('<meta property="og:type" content="profile">');
    expect(page).toMatch(new RegExp(`<meta property="og:url" content="https?://[^"]+/share/${link.token}">`));
    expect(page).toMatch(/<meta property="og:description" content="Engineer[^"]*Writes &lt;programs&gt;">/);
    expect(page).toContain('<meta name="twitter:card" content="summary">');
  });

  it('answers a person a small HTML page for a dead link and a rate limit; API clients keep JSON', async () => {
    const { card, link } = await cardWithLink(a);
    await ctx.request('DELETE', `/cards/${card.id}/share-links/${link.id}`, { token: a.session });
    const page = await visitor().get(sharePath(link), { Accept: HTML });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('This link is not available');
    expect(page.text).not.toContain('{"detail"');
    const api = await visitor().get(sharePath(link), { Accept: 'application/json' });
    expect(api.body).toEqual({ detail: 'Share link not found' });
    expect((await visitor().get(sharePath(link))).body).toEqual({ detail: 'Share link not found' });

    const v = visitor();
    let limited = await v.get(`/share/${'A'.repeat(22)}`, { Accept: HTML });
    while (limited.status === 404) limited = await v.get(`/share/${'A'.repeat(22)}`, { Accept: HTML });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
    expect(limited.text).toContain('Too many requests');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('ignores tracking parameters on card images, like the share page', async () => {
    const res = await ctx.request('GET', `/media/cards/${card0()}/00000000-0000-4000-8000-000000000000.png?fbclid=abc&gclid=x`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: expect.any(String) });
    expect(
      (await ctx.request('GET', `/media/cards/${card0()}/00000000-0000-4000-8000-000000000000.png?fbclid=1`, { headers: { Accept: HTML } }))
        .text,
    ).toContain('<!DOCTYPE html>');
  });
});

const card0 = () => '00000000-0000-4000-8000-000000000001';
