import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contact, conversationsOf, createCampaign, move, tenantWithAgent, waitForStatus, type CampaignTenant } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { PUBLIC_BASE_URL, appFetch } from '../support/public-base';
import { signTwilio, startFakeTwilio, type FakeTwilio } from '../support/fake-twilio';
import { startTwilioInbound, type TwilioInbound } from '../support/fake-twilio-inbound';
import { startFakeVapi, type FakeVapi } from '../support/fake-vapi';

// Each organization's own telephony account, connected through the Integrations area with its API keys,
// through the real app, dispatcher and worker against local servers that speak Twilio's and Vapi's
// protocols: the keys checked at the provider and never echoed, one account per organization, each
// organization's calls placed at its own account and its callbacks verified with that account's keys,
// a refused key turning the connection to needs_reconnect (and its calls failed with the reason) until
// new keys are put, and no simulated calls where the deployment does not allow them.

const SIP_HOST = 'sip.test.example';
let n = 0;
const nextNumber = () => `+1628777${String(n++).padStart(4, '0')}`;

describe('telephony accounts of the organizations', () => {
  let twilio: FakeTwilio;
  let twilioInbound: TwilioInbound;
  let vapi: FakeVapi;
  let ctx: TestContext;
  let second: ReturnType<FakeTwilio['addAccount']>;

  beforeAll(async () => {
    twilio = await startFakeTwilio({ stepMs: 40 });
    // Twilio's SIP authentication resources (credential lists) are served in front of the fake.
    twilioInbound = await startTwilioInbound(twilio);
    vapi = await startFakeVapi({ stepMs: 40 });
    second = twilio.addAccount('Second customer');
    ctx = await createTestContext({
      worker: true,
      env: {
        DIALER: 'simulated',
        DIALER_SIMULATED_ALLOWED: 'false',
        PUBLIC_BASE_URL,
        TWILIO_API_BASE_URL: twilioInbound.url,
        VAPI_API_BASE_URL: vapi.url,
        SIP_HOST,
        DIALER_PROVIDER_TIMEOUT_MS: '2000',
        CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
        DIALER_RECONCILE_AFTER_SECONDS: '1',
      },
    });
    twilio.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    vapi.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
  });
  afterAll(async () => {
    await ctx?.close();
    await twilioInbound?.close();
    await twilio?.close();
    await vapi?.close();
  });

  const connect = (t: CampaignTenant, body: Record<string, unknown>, token = t.session) =>
    ctx.request('POST', '/integrations/telephony-accounts', { token, body });
  const twilioKeys = (account: { accountSid: string; authToken: string }, from = '+15005550006') => ({
    provider: 'twilio',
    account_sid: account.accountSid,
    auth_token: account.authToken,
    from_number: from,
  });

  async function runCampaign(t: CampaignTenant, count: number) {
    const numbers = Array.from({ length: count }, nextNumber);
    const campaign = await createCampaign(ctx, t, { max_attempts: 1, contacts: numbers.map((p) => contact({ phone_numbers: [p] })) });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    await waitForStatus(ctx, t, campaign.id, 'completed', 60_000);
    return { numbers, conversations: await conversationsOf(ctx, campaign.id) };
  }

  let a: CampaignTenant;
  let b: CampaignTenant;
  let aConnection: string;
  let bConnection: string;

  it('checks the keys at the provider, stores them sealed, never echoes them, and keeps one account per organization', async () => {
    a = await tenantWithAgent(ctx);
    b = await tenantWithAgent(ctx);

    const wrong = await connect(a, { ...twilioKeys(twilio), auth_token: 'f'.repeat(32) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toBe('Twilio refused the account SID and auth token');
    const listed = await ctx.request('GET', '/integrations/connections', { token: a.session });
    expect(listed.body.data).toEqual([]);

    const malformed = await connect(a, { provider: 'twilio', account_sid: 'AC123', auth_token: twilio.authToken });
    expect(malformed.status).toBe(422);

    const readOnly = await ctx.session({ sub: a.user, org_id: a.org, org_ids: [a.org], permissions: ['api:read'] });
    expect((await connect(a, twilioKeys(twilio), readOnly)).status).toBe(403);

    const made = await connect(a, twilioKeys(twilio));
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({
      integration: 'twilio',
      kind: 'api_key',
      provider: { key: 'twilio', name: 'Twilio', simulated: false },
      status: 'active',
      external_account_id: twilio.accountSid,
      external_account_label: 'Primary account',
      granted_scopes: [],
      connected_by: `user:${a.user}`,
    });
    aConnection = made.body.id;
    expect(JSON.stringify(made.body)).not.toContain(twilio.authToken);
    const credential = await ctx.request('GET', `/workflow/credentials/${made.body.credential_id}`, { token: a.session });
    expect(credential.status).toBe(200);
    expect(JSON.stringify(credential.body)).not.toContain(twilio.authToken);
    const sealed = await ctx.deps.sql`SELECT * FROM workflow_credentials WHERE id = ${made.body.credential_id}`;
    expect(JSON.stringify(sealed)).not.toContain(twilio.authToken);

    const again = await connect(a, twilioKeys(second));
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(aConnection);

    // Vapi: the key and the phone number calls are placed from.
    const unknownNumber = await connect(b, { provider: 'vapi', api_key: vapi.apiKey, phone_number_id: crypto.randomUUID() });
    expect(unknownNumber.status).toBe(400);
    expect(unknownNumber.body.detail).toBe('phone_number_id is not a phone number of this Vapi account');
    const refusedKey = await connect(b, { provider: 'vapi', api_key: crypto.randomUUID(), phone_number_id: vapi.phoneNumberId });
    expect(refusedKey.status).toBe(400);
    expect(refusedKey.body.detail).toBe('Vapi refused the API key');
    const madeVapi = await connect(b, { provider: 'vapi', api_key: vapi.apiKey, phone_number_id: vapi.phoneNumberId });
    expect(madeVapi.status, JSON.stringify(madeVapi.body)).toBe(200);
    expect(madeVapi.body).toMatchObject({ integration: 'vapi', kind: 'api_key', external_account_id: vapi.phoneNumberId });
    expect(JSON.stringify(madeVapi.body)).not.toContain(vapi.apiKey);
    bConnection = madeVapi.body.id;

    // Another organization's connection is not found, to read or to put keys on.
    expect((await ctx.request('GET', `/integrations/connections/${aConnection}`, { token: b.session })).status).toBe(404);
    const foreign = await ctx.request('PUT', `/integrations/telephony-accounts/${aConnection}`, {
      token: b.session,
      body: twilioKeys(twilio),
    });
    expect(foreign.status).toBe(404);
  });

  it("places each organization's calls at its own account and verifies their callbacks with its keys", { timeout: 120_000 }, async () => {
    const c = await tenantWithAgent(ctx);
    expect((await connect(c, twilioKeys(second, '+15005550007'))).status).toBe(200);
    const [runA, runC] = await Promise.all([runCampaign(a, 6), runCampaign(c, 6)]);

    for (const [run, account, from] of [
      [runA, twilio.accountSid, '+15005550006'],
      [runC, second.accountSid, '+15005550007'],
    ] as const) {
      // Each answered call's final callback was verified and applied: with no voice engine taking the streams here,
      // an answered call that never reached the agent is failed (services/campaigns/streamed-calls.ts).
      expect(run.conversations.map((x) => [x.status, x.outcome.disposition])).toEqual(Array(6).fill(['failed', 'stream_failed']));
      for (const number of run.numbers) {
        const placed = [...twilio.calls.values()].filter((call) => call.to === number);
        expect(placed.map((call) => [call.accountSid, call.from])).toEqual([[account, from]]);
        expect(placed[0]!.statusCallback).toContain('account=');
      }
    }
    expect(twilio.callbacks.filter((cb) => cb.answered !== 200 && cb.answered !== 202)).toEqual([]);

    // A's callback signed with C's token (or naming no known account) is refused.
    const sent = twilio.callbacks.find((cb) => cb.params.AccountSid === twilio.accountSid)!;
    const post = (url: string, signature: string) =>
      appFetch(ctx)(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
        body: new URLSearchParams(sent.params).toString(),
      });
    expect((await post(sent.url, signTwilio(second.authToken, sent.url, sent.params))).status).toBe(401);
    const unknown = sent.url.replace(/account=[^&]+/, `account=${crypto.randomUUID()}`);
    expect((await post(unknown, signTwilio(twilio.authToken, unknown, sent.params))).status).toBe(401);
    const garbled = sent.url.replace(/account=[^&]+/, 'account=x');
    expect((await post(garbled, signTwilio(twilio.authToken, garbled, sent.params))).status).toBe(422);
    // Genuine, but C's account naming A's call: not found for C's organization.
    const cConnection = (await ctx.request('GET', '/integrations/connections', { token: c.session })).body.data[0].id;
    const crossed = sent.url.replace(/account=[^&]+/, `account=${cConnection}`);
    const crossedParams = { ...sent.params, AccountSid: second.accountSid };
    const res = await appFetch(ctx)(crossed, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': signTwilio(second.authToken, crossed, crossedParams),
      },
      body: new URLSearchParams(crossedParams).toString(),
    });
    expect(res.status).toBe(404);

    // Numbers come from the organization's own account.
    second.addNumber('+16285550100', 'C main line');
    twilio.addNumber('+16285550200', 'A main line');
    const imported = await ctx.request('POST', '/core/phone-numbers/import', { token: c.session });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.data.map((x: { number: string }) => x.number)).toEqual(['+16285550100']);

    // The agent's SIP domain is made at the organization's own account, and Twilio's calls to it are
    // verified with that account's token.
    const version = await ctx.request('POST', `/core/agents/${c.agentId}/versions`, {
      token: c.session,
      body: { config: { instructions: 'Hi.' } },
    });
    expect(version.status).toBe(200);
    expect((await ctx.request('POST', `/core/agents/${c.agentId}/versions/1/publish`, { token: c.session, body: {} })).status).toBe(200);
    const deployed = await ctx.request('POST', `/core/agents/${c.agentId}/deploy-as-sip`, { token: c.session });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    expect(deployed.body).toMatchObject({ provider: 'twilio', state: 'active' });
    expect(deployed.body.note).toContain(`account=${cConnection}`);
    const domain = twilio.domains.get(deployed.body.provider_id)!;
    expect(domain.accountSid).toBe(second.accountSid);
    expect(domain.voiceUrl).toContain(`account=${cConnection}`);
    const call = await twilio.callSipDomain(domain.sid, c.agentId);
    expect(call.status, call.body).toBe(200);
    expect(call.body).toMatch(/<Connect action="[^"]*account=[^"]*"[^>]*><Stream url="[^"]+\/twilio\/media-stream">/);
    expect(
      (await twilio.callSipDomain(domain.sid, c.agentId, { signature: signTwilio(twilio.authToken, domain.voiceUrl!, {}) })).status,
    ).toBe(401);
    expect((await ctx.request('DELETE', `/core/agents/${c.agentId}/deploy-as-sip`, { token: c.session })).status).toBe(204);
    expect(twilio.domains.has(domain.sid)).toBe(false);
  });

  it("places a Vapi organization's calls with its own key and server secret", { timeout: 120_000 }, async () => {
    // Vapi runs the agent itself: its published version is rendered as the call's assistant.
    const version = await ctx.request('POST', `/core/agents/${b.agentId}/versions`, {
      token: b.session,
      body: { config: { instructions: 'Offer the demo.' } },
    });
    expect(version.status).toBe(200);
    const published = await ctx.request('POST', `/core/agents/${b.agentId}/versions/${version.body.version}/publish`, {
      token: b.session,
      body: {},
    });
    expect(published.status).toBe(200);
    const run = await runCampaign(b, 4);
    expect(run.conversations.map((x) => [x.status, x.outcome.reason ?? null])).toEqual(Array(4).fill(['completed', null]));
    const ours = vapi.messages.filter((m) => m.url.includes(`account=${bConnection}`));
    expect(ours.length).toBeGreaterThanOrEqual(4);
    expect(ours.every((m) => m.answered === 200 || m.answered === 202)).toBe(true);
    // The secret is the connection's own (made at connect time), not anything configured.
    const forged = await appFetch(ctx)(ours[0]!.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-vapi-secret': 'not-the-secret-of-this-account' },
      body: ours[0]!.body,
    });
    expect(forged.status).toBe(401);
    // Without an account named, this deployment has no Vapi account of its own.
    const unnamed = await appFetch(ctx)(ours[0]!.url.replace(/\?account=[^&]+/, ''), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-vapi-secret': ours[0]!.secret },
      body: ours[0]!.body,
    });
    expect(unnamed.status).toBe(503);
  });

  it('turns a refused key into needs_reconnect, fails the calls with the reason, and new keys bring it back', {
    timeout: 120_000,
  }, async () => {
    const oldToken = twilio.authToken;
    const newToken = twilio.rotateToken(twilio.accountSid);
    const refused = await runCampaign(a, 3);
    expect(refused.conversations.map((x) => x.status)).toEqual(Array(3).fill('failed'));
    for (const x of refused.conversations)
      expect(String(x.outcome.reason)).toMatch(/^telephony_account_refused: Twilio create call answered 401/);
    const connection = await ctx.request('GET', `/integrations/connections/${aConnection}`, { token: a.session });
    expect(connection.body).toMatchObject({ status: 'needs_reconnect' });
    expect(connection.body.status_reason).toMatch(/refused the account keys/);
    const events = await ctx.deps.sql<{ entity_id: string; payload: { integration: string } }[]>`
      SELECT entity_id, payload FROM notification_outbox WHERE org_id = ${a.orgId} AND event_type = 'integration.needs_reconnect'`;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ entity_id: aConnection, payload: { integration: 'twilio' } });

    // While it needs new keys, calls fail at once, without asking Twilio.
    const unauthorized = twilio.requests.unauthorized;
    const waiting = await runCampaign(a, 2);
    for (const x of waiting.conversations) expect(String(x.outcome.reason)).toMatch(/^telephony_account_needs_reconnect/);
    expect(twilio.requests.unauthorized).toBe(unauthorized);

    // The old keys, or another account's, are refused; the rotated ones bring it back.
    const stale = await ctx.request('PUT', `/integrations/telephony-accounts/${aConnection}`, {
      token: a.session,
      body: { ...twilioKeys(twilio), auth_token: oldToken },
    });
    expect(stale.status).toBe(400);
    const other = await ctx.request('PUT', `/integrations/telephony-accounts/${aConnection}`, {
      token: a.session,
      body: twilioKeys(second),
    });
    expect(other.status).toBe(409);
    const put = await ctx.request('PUT', `/integrations/telephony-accounts/${aConnection}`, {
      token: a.session,
      body: { ...twilioKeys(twilio), auth_token: newToken },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ id: aConnection, status: 'active', status_reason: null });
    const back = await runCampaign(a, 2);
    expect(back.conversations.map((x) => [x.status, x.outcome.disposition])).toEqual(Array(2).fill(['failed', 'stream_failed']));
  });

  it('fails the calls of an organization without an account where simulated calls are not allowed, also once it is deleted', {
    timeout: 120_000,
  }, async () => {
    const d = await tenantWithAgent(ctx);
    const none = await runCampaign(d, 2);
    expect(none.conversations.map((x) => x.status)).toEqual(['failed', 'failed']);
    for (const x of none.conversations) expect(String(x.outcome.reason)).toMatch(/^no_telephony_account/);

    const made = await connect(d, twilioKeys(twilio));
    expect(made.status).toBe(200);
    expect((await ctx.request('DELETE', `/integrations/connections/${made.body.id}`, { token: d.session })).status).toBe(204);
    const revoked = await ctx.request('GET', `/integrations/connections/${made.body.id}`, { token: d.session });
    expect(revoked.body).toMatchObject({ status: 'revoked', credential_id: null });
    // A revoked account's callbacks are no longer accepted, and a new account can be connected.
    const url = `${PUBLIC_BASE_URL}/telephony/twilio/status?key=x&account=${made.body.id}`;
    const params = { AccountSid: twilio.accountSid, CallSid: `CA${'0'.repeat(32)}`, CallStatus: 'completed' };
    const late = await appFetch(ctx)(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signTwilio(twilio.authToken, url, params) },
      body: new URLSearchParams(params).toString(),
    });
    expect(late.status).toBe(401);
    expect((await connect(d, twilioKeys(second))).status).toBe(200);
  });
});
