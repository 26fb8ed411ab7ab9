import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WIDGETS_PER_AGENT } from '../../domain/agent-widgets';
import { verifyVoiceSessionToken } from '../../services/conversations/session-tokens';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

// An agent's widgets: CRUD under the agent (scopes, tenancy, validation), and the public side: the page, the
// embed script, the launcher's config and session minting (Origin, CORS, published version, limits).

const SITE = 'https://shop.example';
const VOICE = 'wss://voice.example.test';

let ctx: TestContext;
let tenant: Tenant;
let orgId: string;
beforeAll(async () => {
  ctx = await createTestContext({
    env: {
      VOICE_PUBLIC_URL: VOICE,
      TRUSTED_PROXIES: '127.0.0.1',
      WIDGET_SESSIONS_PER_ADDRESS: '3',
      WIDGET_SESSIONS_PER_WIDGET: '5',
    },
  });
  tenant = await newTenant(ctx);
  orgId = await orgUuid(ctx, tenant);
});
afterAll(() => ctx?.close());

const call = (method: string, path: string, body?: unknown, token = tenant.session) => ctx.request(method, path, { token, body });

let addresses = 0;
/** A client address of its own per request group: the per-address limit never spills between tests. */
const newAddress = () => `198.51.100.${++addresses}`;

async function createAgent(token = tenant.session) {
  const res = await call('POST', '/core/agents', { name: 'Front desk' }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string };
}

async function publishedAgent(token = tenant.session) {
  const agent = await createAgent(token);
  expect((await call('POST', `/core/agents/${agent.id}/versions`, { config: { instructions: 'Help visitors.' } }, token)).status).toBe(200);
  expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {}, token)).status).toBe(200);
  return agent;
}

async function createWidget(agentId: string, body: Record<string, unknown> = {}, token = tenant.session) {
  const res = await call('POST', `/core/agents/${agentId}/widgets`, { name: 'Site bubble', allowed_origins: [SITE], ...body }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; [k: string]: any };
}

const mint = (widgetId: string, origin?: string, address = newAddress()) =>
  ctx.request('POST', `/widgets/${widgetId}/sessions`, {
    headers: { ...(origin === undefined ? {} : { Origin: origin }), 'X-Forwarded-For': address },
  });

describe('widgets: create, read, update, delete', () => {
  it('creates a widget with the config defaults filled and its origins trimmed and normalized, once each', async () => {
    const agent = await createAgent();
    const res = await call('POST', `/core/agents/${agent.id}/widgets`, {
      name: '  Site bubble ',
      allowed_origins: [' https://Shop.Example:443/\n', 'https://shop.example', 'http://localhost:5173', 'http://127.0.0.1:80'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agent_id: agent.id,
      name: 'Site bubble',
      allowed_origins: ['https://shop.example', 'http://localhost:5173', 'http://127.0.0.1'],
      config: { title: null, greeting: null, theme_color: '#0f766e', button_label: 'Talk to us', position: 'bottom-right' },
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect((await call('GET', `/core/agents/${agent.id}/widgets/${res.body.id}`)).body).toEqual(res.body);
    expect((await call('GET', `/core/agents/${agent.id}/widgets`)).body).toEqual({ data: [res.body] });
    expect((await call('GET', `/core/agents/${agent.id}`)).body.widgets).toEqual([res.body]);
  });

  it('keeps the config given, its color in lower case', async () => {
    const agent = await createAgent();
    const config = {
      title: 'Acme help',
      greeting: 'Hi! Ask about your order.',
      theme_color: '#AA3300',
      button_label: 'Call us',
      position: 'bottom-left',
    };
    const widget = await createWidget(agent.id, { config: { ...config, theme_color: ' #AA3300 ' } });
    expect(widget.config).toEqual({ ...config, theme_color: '#aa3300' });
  });

  it('lists widgets oldest first, of this agent only', async () => {
    const agent = await createAgent();
    const other = await createAgent();
    const first = await createWidget(agent.id, { name: 'First' });
    const second = await createWidget(agent.id, { name: 'Second' });
    await createWidget(other.id, { name: 'Elsewhere' });
    const list = await call('GET', `/core/agents/${agent.id}/widgets`);
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([first.id, second.id]);
  });

  it.each([
    ['no name', { name: undefined }, 'missing', ['body', 'name']],
    ['a blank name', { name: '   ' }, 'string_too_short', ['body', 'name']],
    ['no origins', { allowed_origins: [] }, 'too_short', ['body', 'allowed_origins']],
    [
      '51 origins',
      { allowed_origins: Array.from({ length: 51 }, (_, i) => `https://s${i}.example`) },
      'too_long',
      ['body', 'allowed_origins'],
    ],
    ['a wildcard', { allowed_origins: ['*'] }, 'string_pattern_mismatch', ['body', 'allowed_origins', 0]],
    ['a wildcard host', { allowed_origins: ['https://*.example.com'] }, 'string_pattern_mismatch', ['body', 'allowed_origins', 0]],
    [
      'an origin with a path',
      { allowed_origins: ['https://shop.example/help'] },
      'string_pattern_mismatch',
      ['body', 'allowed_origins', 0],
    ],
    [
      'an origin with a query',
      { allowed_origins: ['https://shop.example?a=1'] },
      'string_pattern_mismatch',
      ['body', 'allowed_origins', 0],
    ],
    [
      'plain http off loopback',
      { allowed_origins: [SITE, 'http://shop.example'] },
      'string_pattern_mismatch',
      ['body', 'allowed_origins', 1],
    ],
    ['a user in the origin', { allowed_origins: ['https://user@shop.example'] }, 'string_pattern_mismatch', ['body', 'allowed_origins', 0]],
    ['port 0', { allowed_origins: ['https://shop.example:0'] }, 'string_pattern_mismatch', ['body', 'allowed_origins', 0]],
    ['an unknown config key', { config: { colour: 'red' } }, 'extra_forbidden', ['body', 'config', 'colour']],
    ['a theme color by name', { config: { theme_color: 'red' } }, 'string_pattern_mismatch', ['body', 'config', 'theme_color']],
    ['a greeting of 501 characters', { config: { greeting: 'x'.repeat(501) } }, 'string_too_long', ['body', 'config', 'greeting']],
    [
      'a button label of 41 characters',
      { config: { button_label: 'x'.repeat(41) } },
      'string_too_long',
      ['body', 'config', 'button_label'],
    ],
    ['an unknown position', { config: { position: 'top-left' } }, 'enum', ['body', 'config', 'position']],
    ['an unknown field', { colour: 'red' }, 'extra_forbidden', ['body', 'colour']],
  ])('refuses %s with 422 and writes nothing', async (_name, patch, type, loc) => {
    const agent = await createAgent();
    const body = { name: 'Site bubble', allowed_origins: [SITE], ...patch };
    const res = await call('POST', `/core/agents/${agent.id}/widgets`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type, loc });
    expect((await call('GET', `/core/agents/${agent.id}/widgets`)).body.data).toEqual([]);
  });

  it('updates only the fields sent, and only the config keys sent; null clears the title', async () => {
    const agent = await createAgent();
    const widget = await createWidget(agent.id, { config: { title: 'Acme', greeting: 'Hello', theme_color: '#112233' } });
    const res = await call('PATCH', `/core/agents/${agent.id}/widgets/${widget.id}`, { config: { title: null, position: 'bottom-left' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Site bubble',
      allowed_origins: [SITE],
      config: { title: null, greeting: 'Hello', theme_color: '#112233', button_label: 'Talk to us', position: 'bottom-left' },
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(widget.updated_at).getTime());
    const renamed = await call('PATCH', `/core/agents/${agent.id}/widgets/${widget.id}`, {
      name: 'Checkout',
      allowed_origins: ['https://checkout.example'],
    });
    expect(renamed.body).toMatchObject({ name: 'Checkout', allowed_origins: ['https://checkout.example'], config: res.body.config });
  });

  it('refuses an empty update with 400 and a bad one with 422, changing nothing', async () => {
    const agent = await createAgent();
    const widget = await createWidget(agent.id);
    const path = `/core/agents/${agent.id}/widgets/${widget.id}`;
    expect(await call('PATCH', path, {})).toMatchObject({ status: 400, body: { detail: 'Nothing to update' } });
    const bad = await call('PATCH', path, { name: 'New', allowed_origins: ['*'] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'allowed_origins', 0] });
    expect((await call('PATCH', path, { config: { theme_color: '#12345' } })).status).toBe(422);
    expect((await call('GET', path)).body).toEqual(widget);
  });

  it('deletes with 204; the widget is then gone, its page and sessions too', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const path = `/core/agents/${agent.id}/widgets/${widget.id}`;
    expect((await call('DELETE', path)).status).toBe(204);
    expect((await call('GET', path)).status).toBe(404);
    expect((await call('DELETE', path)).status).toBe(404);
    expect((await mint(widget.id, SITE)).status).toBe(404);
    expect((await ctx.request('GET', `/widgets/${widget.id}`)).status).toBe(404);
  });

  it('deleting the agent deletes its widgets', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    expect((await call('DELETE', `/core/agents/${agent.id}`)).status).toBe(204);
    expect((await mint(widget.id, SITE)).status).toBe(404);
  });

  it(`holds an agent to ${MAX_WIDGETS_PER_AGENT} widgets (409)`, async () => {
    const agent = await createAgent();
    for (let i = 0; i < MAX_WIDGETS_PER_AGENT; i++) await createWidget(agent.id, { name: `W${i}` });
    const res = await call('POST', `/core/agents/${agent.id}/widgets`, { name: 'One more', allowed_origins: [SITE] });
    expect(res).toMatchObject({ status: 409, body: { detail: `An agent has at most ${MAX_WIDGETS_PER_AGENT} widgets` } });
    expect((await call('GET', `/core/agents/${agent.id}/widgets`)).body.data).toHaveLength(MAX_WIDGETS_PER_AGENT);
  });

  it("answers 404 for another organization's agent or widget, and for a widget of another agent", async () => {
    const other = await newTenant(ctx);
    const theirAgent = await createAgent(other.session);
    const theirWidget = await createWidget(theirAgent.id, {}, other.session);
    const mine = await createAgent();
    const myWidget = await createWidget(mine.id);
    for (const [method, path, body] of [
      ['GET', `/core/agents/${theirAgent.id}/widgets`],
      ['POST', `/core/agents/${theirAgent.id}/widgets`, { name: 'x', allowed_origins: [SITE] }],
      ['GET', `/core/agents/${theirAgent.id}/widgets/${theirWidget.id}`],
      ['PATCH', `/core/agents/${theirAgent.id}/widgets/${theirWidget.id}`, { name: 'x' }],
      ['DELETE', `/core/agents/${theirAgent.id}/widgets/${theirWidget.id}`],
      ['GET', `/core/agents/${mine.id}/widgets/${theirWidget.id}`],
      ['PATCH', `/core/agents/${mine.id}/widgets/${theirWidget.id}`, { name: 'x' }],
      ['DELETE', `/core/agents/${mine.id}/widgets/${theirWidget.id}`],
    ] as [string, string, unknown?][]) {
      expect((await call(method, path, body)).status, `${method} ${path}`).toBe(404);
    }
    const otherAgent = await createAgent();
    expect((await call('GET', `/core/agents/${otherAgent.id}/widgets/${myWidget.id}`)).status).toBe(404);
    expect((await call('GET', `/core/agents/${theirAgent.id}/widgets/${theirWidget.id}`, undefined, other.session)).body.name).toBe(
      'Site bubble',
    );
  });

  it('reads with agents:read; writes need agents:manage (403); a CRM-only key gets 403 on both', async () => {
    const readKey = await createOrgKey(ctx, tenant.session, { scopes: ['agents:read'] });
    const crmKey = await createOrgKey(ctx, tenant.session, { scopes: ['api:read', 'api:manage'] });
    const agent = await createAgent();
    const widget = await createWidget(agent.id);
    const one = `/core/agents/${agent.id}/widgets/${widget.id}`;
    for (const path of [`/core/agents/${agent.id}/widgets`, one]) {
      expect((await call('GET', path, undefined, readKey)).status, path).toBe(200);
      expect((await call('GET', path, undefined, crmKey)).status, path).toBe(403);
    }
    for (const [method, path, body] of [
      ['POST', `/core/agents/${agent.id}/widgets`, { name: 'x', allowed_origins: [SITE] }],
      ['PATCH', one, { name: 'x' }],
      ['DELETE', one],
    ] as [string, string, unknown?][]) {
      for (const key of [readKey, crmKey]) {
        expect(await call(method, path, body, key), `${method} ${path}`).toMatchObject({
          status: 403,
          body: { detail: 'Insufficient permissions' },
        });
      }
    }
    expect((await call('GET', one)).body).toEqual(widget);
  });
});

describe('widget sessions', () => {
  it('mints a token for an allowed origin: readable by it (CORS), verified by the engine, with the right claims', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id, { allowed_origins: ['https://www.example.org', SITE] });
    const before = Date.now();
    const res = await mint(widget.id, SITE);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(SITE);
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.agent).toEqual({ name: 'Front desk' });
    expect(res.body.websocket_url).toBe(`${VOICE}/widget?token=${encodeURIComponent(res.body.token)}`);
    const expiresAt = new Date(res.body.expires_at).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 119_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 121_000);
    const claims = await verifyVoiceSessionToken(ctx.config, res.body.token);
    expect(claims).toEqual({
      org: orgId,
      agent: agent.id,
      version: 1,
      channel: 'widget',
      direction: 'inbound',
      widget: widget.id,
      origin: SITE,
    });
    const [, payload] = res.body.token.split('.');
    const { iat, exp } = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(exp - iat).toBe(120);
  });

  it('names the version served now: a later publish is what the next session runs', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    await call('POST', `/core/agents/${agent.id}/versions`, { config: { instructions: 'Version two.' } });
    await call('POST', `/core/agents/${agent.id}/versions/2/publish`, {});
    const res = await mint(widget.id, SITE);
    expect((await verifyVoiceSessionToken(ctx.config, res.body.token))?.version).toBe(2);
  });

  it("accepts the widget page's own origin (the API's), whose framing the page's policy limits", async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const res = await mint(widget.id, ctx.baseUrl);
    expect(res.status).toBe(200);
    expect((await verifyVoiceSessionToken(ctx.config, res.body.token))?.origin).toBe(ctx.baseUrl);
  });

  it.each([
    ['another origin', 'https://evil.example'],
    ['a look-alike of an allowed origin', 'https://shop.example.evil.example'],
    ['the allowed host over http', 'http://shop.example'],
    ['another port', 'https://shop.example:8443'],
    ['an opaque origin', 'null'],
    ['no Origin header', undefined],
  ])('refuses %s with 403 and no CORS headers', async (_name, origin) => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const res = await mint(widget.id, origin);
    expect(res).toMatchObject({ status: 403, body: { detail: 'Origin not allowed for this widget' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('matches a stored origin written with capitals or its default port', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id, { allowed_origins: ['https://WWW.Shop.Example:443'] });
    expect((await mint(widget.id, 'https://www.shop.example')).status).toBe(200);
  });

  it('answers 409 (readable by the allowed origin) when the agent has no published version or is not active', async () => {
    const draftOnly = await createAgent();
    await call('POST', `/core/agents/${draftOnly.id}/versions`, { config: {} });
    const unpublished = await createWidget(draftOnly.id);
    const res = await mint(unpublished.id, SITE);
    expect(res).toMatchObject({ status: 409, body: { detail: 'The agent has no published version' } });
    expect(res.headers.get('access-control-allow-origin')).toBe(SITE);

    const paused = await publishedAgent();
    await call('PUT', `/core/agents/${paused.id}`, { active: false });
    const inactive = await createWidget(paused.id);
    expect(await mint(inactive.id, SITE)).toMatchObject({ status: 409, body: { detail: 'The agent is not active' } });
  });

  it('answers 404 for an unknown widget and 422 for a malformed id', async () => {
    expect(await mint('0190a0b0-0000-7000-8000-00000000beef', SITE)).toMatchObject({ status: 404, body: { detail: 'Widget not found' } });
    expect((await mint('not-a-uuid', SITE)).status).toBe(422);
  });

  it('limits sessions per client address (429 with Retry-After); another address goes on', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const address = newAddress();
    for (let i = 0; i < 3; i++) expect((await mint(widget.id, SITE, address)).status).toBe(200);
    const refused = await mint(widget.id, SITE, address);
    expect(refused).toMatchObject({ status: 429, body: { detail: 'Too many sessions, retry later' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await mint(widget.id, SITE, newAddress())).status).toBe(200);
  });

  it('limits sessions per widget, whatever the address; other widgets go on', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    for (let i = 0; i < 5; i++) expect((await mint(widget.id, SITE)).status).toBe(200);
    const refused = await mint(widget.id, SITE);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('access-control-allow-origin')).toBe(SITE);
    expect((await mint((await createWidget(agent.id)).id, SITE)).status).toBe(200);
  });

  it('answers the CORS preflight for an allowed origin, and refuses others', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const preflight = (id: string, origin: string) =>
      ctx.request('OPTIONS', `/widgets/${id}/sessions`, {
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
    const ok = await preflight(widget.id, SITE);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SITE);
    expect(ok.headers.get('access-control-allow-methods')).toBe('POST');
    expect(ok.headers.get('access-control-allow-headers')).toBe('Content-Type');
    expect(ok.headers.get('vary')).toContain('Origin');
    const refused = await preflight(widget.id, 'https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight('0190a0b0-0000-7000-8000-00000000beef', SITE)).status).toBe(404);
    // An OPTIONS that is not a preflight is refused as on every path.
    expect((await ctx.request('OPTIONS', `/widgets/${widget.id}/sessions`, { headers: { Origin: SITE } })).status).toBe(405);
  });

  it('takes a JSON request from the site, as a browser sends it after the preflight', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id);
    const res = await ctx.request('POST', `/widgets/${widget.id}/sessions`, {
      body: {},
      headers: { Origin: SITE, 'X-Forwarded-For': newAddress() },
    });
    expect(res.status).toBe(200);
  });
});

describe("the widget's page, script and launcher", () => {
  it('serves the page with its config applied, escaped, framed only by the allowed origins', async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id, {
      allowed_origins: [SITE, 'http://localhost:3000'],
      config: { title: 'Acme <b>help</b>', greeting: 'Ask "anything" & more', button_label: 'Speak', theme_color: '#123456' },
    });
    const res = await ctx.request('GET', `/widgets/${widget.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain(`frame-ancestors ${SITE} http://localhost:3000`);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${VOICE}`);
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toContain('<h1 id="title">Acme &lt;b&gt;help&lt;/b&gt;</h1>');
    expect(res.text).toContain('<p id="greeting">Ask &quot;anything&quot; &amp; more</p>');
    expect(res.text).toContain('>Speak</button>');
    const block = /<script id="widget-data" type="application\/json">([^<]*)<\/script>/.exec(res.text)![1]!;
    expect(JSON.parse(block)).toEqual({
      widget_id: widget.id,
      agent_name: 'Front desk',
      config: {
        title: 'Acme <b>help</b>',
        greeting: 'Ask "anything" & more',
        button_label: 'Speak',
        theme_color: '#123456',
        position: 'bottom-right',
      },
    });
    // The agent's name is the title when the widget has none; an empty greeting leaves its paragraph empty.
    const plain = await ctx.request('GET', `/widgets/${(await createWidget(agent.id)).id}`);
    expect(plain.text).toContain('<h1 id="title">Front desk</h1>');
    expect(plain.text).toContain('<p id="greeting"></p>');
    expect((await ctx.request('GET', '/widgets/0190a0b0-0000-7000-8000-00000000beef')).status).toBe(404);
  });

  it('serves the embed script and the page files as static JavaScript and CSS; other names are 422', async () => {
    const script = await ctx.request('GET', '/widget.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.text).toContain('data-widget-id');
    for (const [file, type] of [
      ['page.js', 'text/javascript'],
      ['page.css', 'text/css'],
      ['capture-worklet.js', 'text/javascript'],
      ['playback-worklet.js', 'text/javascript'],
    ]) {
      const res = await ctx.request('GET', `/widget-assets/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toBe(`${type}; charset=utf-8`);
    }
    expect((await ctx.request('GET', '/widget-assets/..%2Fwidget.ts')).status).toBe(422);
  });

  it("gives the launcher's config to an allowed origin only", async () => {
    const agent = await publishedAgent();
    const widget = await createWidget(agent.id, { config: { button_label: 'Ask us', position: 'bottom-left' } });
    const res = await ctx.request('GET', `/widgets/${widget.id}/config`, { headers: { Origin: SITE } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(SITE);
    expect(res.body).toEqual({
      widget_id: widget.id,
      page_url: `${ctx.baseUrl}/widgets/${widget.id}`,
      config: { title: null, greeting: null, theme_color: '#0f766e', button_label: 'Ask us', position: 'bottom-left' },
    });
    const refused = await ctx.request('GET', `/widgets/${widget.id}/config`, { headers: { Origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});
