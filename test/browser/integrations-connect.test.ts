import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATED_CLIENT_ID } from '../../platform/core/oauth-catalog';
import { freePort } from '../../dev-servers/ports';
import { startSimulatedOAuthProvider, type SimulatedProvider } from '../../dev-servers/simulated-oauth-provider';
import { chromiumFor, dumpDom, screenshot } from '../support/browser';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';

// The connect page as a person opens it, in a real (headless) Chromium, on the embedded defaults:
// the built-in `simulated` provider (the loopback OAuth server npm start runs) is the catalog.
// Screenshots go to INTEGRATION_SCREENSHOT_DIR (default: the OS temp dir) for a look by eye.

const chromium = chromiumFor('integrations browser tests');
const shots = process.env.INTEGRATION_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'integration-screenshots');

describe.skipIf(!chromium)('the connect page in a browser', () => {
  let ctx: TestContext;
  let provider: SimulatedProvider;
  let tenant: Tenant;
  beforeAll(async () => {
    const port = await freePort();
    ctx = await createTestContext({ env: { SIMULATED_OAUTH_ISSUER: `http://127.0.0.1:${port}` } });
    provider = await startSimulatedOAuthProvider({ port, redirectUris: [`${ctx.baseUrl}/integrations/oauth/callback`] });
    tenant = await newTenant(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await provider?.close();
  });

  const mint = async () => {
    const res = await ctx.request('POST', '/integrations/connect-tokens', {
      token: tenant.session,
      body: { allowed_integrations: ['simulated'], success_url: `${ctx.baseUrl}/done`, error_url: `${ctx.baseUrl}/failed` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.connect_url as string;
  };

  it('lists the simulated provider, named as such, and leads to its consent page; the link then works no more', async () => {
    const catalog = await ctx.request('GET', '/integrations', { token: tenant.session });
    expect(catalog.body.data).toEqual([
      expect.objectContaining({ key: 'simulated', simulated: true, name: 'Simulated provider (built in)' }),
    ]);

    const url = await mint();
    const dom = await dumpDom(chromium!, url);
    expect(dom).toContain('Connect an account');
    expect(dom).toContain('Simulated provider (built in)');
    expect(dom).toMatch(/<span class="tag">simulated<\/span>/);
    expect(dom).toContain(`href="${url}/authorize?integration=simulated"`);
    await screenshot(chromium!, url, path.join(shots, 'connect-page.png'));

    // Following the button: the service spends the token and the browser lands on the provider's consent.
    const consent = await dumpDom(chromium!, `${url}/authorize?integration=simulated`);
    expect(consent).toContain('Simulated provider');
    expect(consent).toContain(`Allow Voice CRM?`);
    expect(consent).toContain('contacts.read');
    expect(provider.requests.some((r) => r.path === '/auth')).toBe(true);
    expect(SIMULATED_CLIENT_ID).toBe('voice-crm-simulated');

    const spent = await dumpDom(chromium!, url);
    expect(spent).toContain('Link already used');
    expect(spent).not.toContain('Connect Simulated');
  }, 120_000);
});
