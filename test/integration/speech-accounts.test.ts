import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant } from '../support/identity';
import { startFakeDeepgram, type FakeDeepgram } from '../support/voice/fake-deepgram';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/voice/fake-elevenlabs';
import { startFakeCartesia, type FakeCartesia } from '../support/voice/fake-cartesia';
import { startFakeOpenAi, type FakeOpenAi } from '../support/voice/fake-openai';

// The organization's speech and model provider keys, connected through the Integrations area: checked at
// the provider (each provider's cheapest authenticated read on a local server speaking its protocol),
// sealed, never returned, one per provider, replaced by PUT; another organization's connection is a 404.

describe('speech accounts', () => {
  let ctx: TestContext;
  let deepgram: FakeDeepgram;
  let elevenlabs: FakeElevenLabs;
  let cartesia: FakeCartesia;
  let openai: FakeOpenAi;

  beforeAll(async () => {
    [deepgram, elevenlabs, cartesia, openai] = await Promise.all([
      startFakeDeepgram(),
      startFakeElevenLabs('http://127.0.0.1:9'),
      startFakeCartesia('http://127.0.0.1:9'),
      startFakeOpenAi(),
    ]);
    ctx = await createTestContext({
      env: {
        DEEPGRAM_API_BASE_URL: deepgram.url,
        ELEVENLABS_API_BASE_URL: elevenlabs.url,
        CARTESIA_API_BASE_URL: cartesia.url,
        // Nothing listens there: the provider does not answer.
        OPENAI_API_BASE_URL: 'http://127.0.0.1:9/v1',
        INTEGRATION_HTTP_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    await ctx?.close();
    await Promise.all([deepgram, elevenlabs, cartesia, openai].map((f) => f?.close()));
  });

  it('checks each key at its provider, seals it, never returns it, and keeps one per provider', async () => {
    const t = await newTenant(ctx);
    const connect = (body: unknown, token = t.session) => ctx.request('POST', '/integrations/speech-accounts', { token, body });
    deepgram.keys.add('dg-secret-0001');
    elevenlabs.keys.add('el-secret-0001');
    cartesia.keys.add('sk_car_secret01');

    const refused = await connect({ provider: 'deepgram', api_key: 'dg-wrong-0001' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('Deepgram refused the API key');
    expect((await ctx.request('GET', '/integrations/connections', { token: t.session })).body.data).toEqual([]);

    const down = await connect({ provider: 'openai', api_key: 'sk-nothing-listens' });
    expect(down.status).toBe(502);
    expect((await ctx.request('GET', '/integrations/connections', { token: t.session })).body.data).toEqual([]);

    expect((await connect({ provider: 'assemblyai', api_key: 'aai-secret-01' })).status).toBe(422);
    expect((await connect({ provider: 'deepgram', api_key: 'short' })).status).toBe(422);
    expect((await connect({ provider: 'deepgram', api_key: 'dg-secret-0001', extra: 1 })).status).toBe(422);

    const readOnly = await ctx.session({ sub: t.user, org_id: t.org, org_ids: [t.org], permissions: ['api:read'] });
    expect((await connect({ provider: 'deepgram', api_key: 'dg-secret-0001' }, readOnly)).status).toBe(403);

    const made = await connect({ provider: 'deepgram', api_key: 'dg-secret-0001' });
    expect(made.status, made.text).toBe(200);
    expect(made.body).toMatchObject({
      integration: 'deepgram',
      kind: 'api_key',
      provider: { key: 'deepgram', name: 'Deepgram', simulated: false },
      status: 'active',
      external_account_label: 'API key …0001',
      connected_by: `user:${t.user}`,
    });
    expect(made.body.external_account_id).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(JSON.stringify(made.body)).not.toContain('dg-secret-0001');
    const sealed = await ctx.deps.sql`SELECT * FROM workflow_credentials WHERE id = ${made.body.credential_id}`;
    expect(JSON.stringify(sealed)).not.toContain('dg-secret-0001');
    const credential = await ctx.request('GET', `/workflow/credentials/${made.body.credential_id}`, { token: t.session });
    expect(JSON.stringify(credential.body)).not.toContain('dg-secret-0001');

    const second = await connect({ provider: 'deepgram', api_key: 'dg-secret-0001' });
    expect(second.status).toBe(409);
    for (const body of [
      { provider: 'elevenlabs', api_key: 'el-secret-0001' },
      { provider: 'cartesia', api_key: 'sk_car_secret01' },
    ]) {
      const res = await connect(body);
      expect(res.status, res.text).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(body.api_key);
    }
    const listed = await ctx.request('GET', '/integrations/connections', { token: t.session });
    expect(listed.body.data.map((c: { integration: string }) => c.integration).sort()).toEqual(['cartesia', 'deepgram', 'elevenlabs']);

    // A new key: checked first, then the connection follows it.
    const put = (id: string, body: unknown, token = t.session) =>
      ctx.request('PUT', `/integrations/speech-accounts/${id}`, { token, body });
    expect((await put(made.body.id, { provider: 'deepgram', api_key: 'dg-unknown-0002' })).status).toBe(400);
    deepgram.keys.add('dg-secret-0002');
    expect((await put(made.body.id, { provider: 'elevenlabs', api_key: 'el-secret-0001' })).status).toBe(409);
    const rekeyed = await put(made.body.id, { provider: 'deepgram', api_key: 'dg-secret-0002' });
    expect(rekeyed.status, rekeyed.text).toBe(200);
    expect(rekeyed.body.external_account_label).toBe('API key …0002');
    expect(rekeyed.body.external_account_id).not.toBe(made.body.external_account_id);

    // Another organization's connection is not found.
    const other = await newTenant(ctx);
    expect((await put(made.body.id, { provider: 'deepgram', api_key: 'dg-secret-0002' }, other.session)).status).toBe(404);
    expect((await ctx.request('GET', `/integrations/connections/${made.body.id}`, { token: other.session })).status).toBe(404);

    // Revoked through the connections route like every other; a new one may then be connected.
    expect((await ctx.request('DELETE', `/integrations/connections/${made.body.id}`, { token: t.session })).status).toBe(204);
    expect((await put(made.body.id, { provider: 'deepgram', api_key: 'dg-secret-0002' })).status).toBe(409);
    expect((await connect({ provider: 'deepgram', api_key: 'dg-secret-0002' })).status).toBe(200);
  });
});
