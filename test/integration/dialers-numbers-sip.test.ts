import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { PUBLIC_BASE_URL } from '../support/public-base';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio';
import { startTwilioInbound, type TwilioInbound } from '../support/fake-twilio-inbound';
import { startFakeVapi, type FakeVapi } from '../support/fake-vapi';
import { startVapiInbound, type VapiInbound } from '../support/fake-vapi-inbound';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';

// The telephony account's inventory through the real app, against local servers that speak Twilio's
// and Vapi's protocols: numbers imported into the organization (idempotent, tenant by tenant), and the
// agent's SIP endpoint made and removed at the provider (Twilio SIP domains), with the provider's
// failures answered 502 and leaving nothing recorded.

const SIP_HOST = 'sip.test.example';

async function agent(ctx: TestContext, t: Tenant, publish = true): Promise<string> {
  const created = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'Front desk' } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  if (!publish) return created.body.id;
  const version = await ctx.request('POST', `/core/agents/${created.body.id}/versions`, {
    token: t.session,
    body: { config: { instructions: 'Help callers.' } },
  });
  expect(version.status, JSON.stringify(version.body)).toBe(200);
  const published = await ctx.request('POST', `/core/agents/${created.body.id}/versions/1/publish`, { token: t.session, body: {} });
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  return created.body.id;
}

async function inventory(ctx: TestContext, t: Tenant) {
  const rows: { id: string; number: string; label: string | null; updated_at: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.request('GET', `/core/phone-numbers?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token: t.session });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    rows.push(...page.body.data);
    cursor = page.body.pagination.next_cursor ?? undefined;
  } while (cursor);
  return rows;
}

const sipRows = (ctx: TestContext, agentId: string) =>
  ctx.deps.sql<{ state: string; provider: string; provider_id: string | null }[]>`
    SELECT state, provider, provider_id FROM agent_sip_endpoints WHERE agent_id = ${agentId}`;

describe('Twilio: numbers and SIP domains', () => {
  let fake: FakeTwilio;
  let inbound: TwilioInbound;
  let ctx: TestContext;
  let a: Tenant;
  let b: Tenant;
  /** More than one page of Twilio's largest (1000). */
  const numbers = Array.from({ length: 1005 }, (_, i) => `+1628555${String(i).padStart(4, '0')}`);

  beforeAll(async () => {
    fake = await startFakeTwilio();
    for (const [i, n] of numbers.entries()) fake.addNumber(n, i === 0 ? '' : `Line ${i}`);
    // The account's SIP credential lists and numbers' settings, in front of the fake.
    inbound = await startTwilioInbound(fake);
    ctx = await createTestContext({
      env: {
        DIALER: 'twilio',
        PUBLIC_BASE_URL,
        TWILIO_API_BASE_URL: inbound.url,
        TWILIO_ACCOUNT_SID: fake.accountSid,
        TWILIO_AUTH_TOKEN: fake.authToken,
        TWILIO_FROM_NUMBER: '+15005550006',
        SIP_HOST,
        DIALER_PROVIDER_TIMEOUT_MS: '1000',
      },
    });
    fake.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    a = await newTenant(ctx);
    b = await newTenant(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await inbound?.close();
    await fake?.close();
  });

  it('imports every page of the account into the organization, and a second import changes nothing', async () => {
    // A number the organization registered by hand is linked to Twilio's, keeping its label.
    expect(
      (await ctx.request('POST', '/core/phone-numbers', { token: a.session, body: { number: numbers[3], label: 'Sales' } })).status,
    ).toBe(200);
    // Another organization's row of the same number is never touched.
    const other = await ctx.request('POST', '/core/phone-numbers', { token: b.session, body: { number: numbers[5], label: 'B line' } });
    expect(other.status).toBe(200);

    const first = await ctx.request('POST', '/core/phone-numbers/import', { token: a.session });
    expect(first.status, JSON.stringify(first.body).slice(0, 500)).toBe(200);
    expect(fake.requests.numberPages).toBe(2);
    expect(first.body).toMatchObject({ provider: 'twilio', imported: 1004, updated: 1, unchanged: 0 });
    expect(first.body.data).toHaveLength(1005);
    const byNumber = new Map(first.body.data.map((n: any) => [n.number, n]));
    expect(byNumber.get(numbers[3])).toMatchObject({ label: 'Sales', result: 'updated', provider_number_id: fake.numbers[3]!.sid });
    expect(byNumber.get(numbers[7])).toMatchObject({
      label: 'Line 7',
      result: 'imported',
      organization_id: await orgUuid(ctx, a),
      inbound_agent_id: null,
    });
    expect(byNumber.get(numbers[0])).toMatchObject({ label: null, result: 'imported' });

    const second = await ctx.request('POST', '/core/phone-numbers/import', { token: a.session });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ imported: 0, updated: 0, unchanged: 1005 });
    expect(second.body.data.every((n: any) => n.result === 'unchanged')).toBe(true);
    expect(second.body.data.map((n: any) => n.updated_at)).toEqual(first.body.data.map((n: any) => n.updated_at));
    expect((await inventory(ctx, a)).map((n) => n.number)).toEqual([...numbers].sort());

    const theirs = await inventory(ctx, b);
    expect(theirs).toEqual([other.body]);
  });

  it('answers 502 when Twilio fails or does not answer in time, and writes nothing', async () => {
    const c = await newTenant(ctx);
    fake.faults.numbers = 500;
    const failed = await ctx.request('POST', '/core/phone-numbers/import', { token: c.session });
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toMatch(/^The telephony provider failed: Twilio list numbers answered 500/);
    fake.faults.numbers = 'hang';
    const slow = await ctx.request('POST', '/core/phone-numbers/import', { token: c.session });
    expect(slow.status).toBe(502);
    expect(slow.body.detail).toMatch(/no answer within 1000 ms/);
    fake.faults.numbers = undefined;
    expect(await inventory(ctx, c)).toEqual([]);
  });

  it('makes a SIP domain for the agent, shows its address and state, and streams its calls to the voice engine', async () => {
    const agentId = await agent(ctx, a);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const domain = [...fake.domains.values()].find((d) => d.domainName === `agent-${agentId}.sip.twilio.com`)!;
    expect(domain).toMatchObject({ voiceUrl: `${PUBLIC_BASE_URL}/telephony/twilio/agents/${agentId}/voice`, voiceMethod: 'POST' });
    expect(res.body).toMatchObject({
      agent_id: agentId,
      sip_uri: `sip:${agentId}@${domain.domainName}`,
      version: 1,
      provisioning: 'provisioned',
      provider: 'twilio',
      state: 'active',
      provider_id: domain.sid,
    });
    expect(res.body.note).toContain(domain.sid);

    // Deploying again asks Twilio nothing and answers the same, without the password.
    const creates = fake.requests.domainCreates;
    expect((await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).body).toEqual({
      ...res.body,
      credentials: null,
    });
    expect(fake.requests.domainCreates).toBe(creates);

    const read = await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session });
    expect(read.body.sip).toEqual({
      deployed: true,
      sip_uri: res.body.sip_uri,
      deployed_at: res.body.deployed_at,
      state: 'active',
      provider: 'twilio',
      provider_id: domain.sid,
    });

    // A call to the domain: Twilio asks our VoiceUrl, signed; the answer streams it to the voice engine.
    const call = await fake.callSipDomain(domain.sid, agentId);
    expect(call.status, call.body).toBe(200);
    expect(call.contentType).toMatch(/^text\/xml/);
    expect(call.body).toMatch(
      /<Connect action="[^"]+\/telephony\/twilio\/streams\/ended\?[^"]+" method="POST"><Stream url="ws[^"]*\/twilio\/media-stream"><Parameter name="token" value="[^"]+"\/><\/Stream><\/Connect>/,
    );
    expect(call.body).not.toContain('<Sip>');
    expect((await fake.callSipDomain(domain.sid, agentId, { signature: `${'A'.repeat(27)}=` })).status).toBe(401);
    expect((await fake.callSipDomain(domain.sid, agentId, { accountSid: `AC${'0'.repeat(32)}` })).status).toBe(403);

    // DELETE removes the domain at Twilio.
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(204);
    expect(fake.domains.has(domain.sid)).toBe(false);
    expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session })).body.sip).toMatchObject({
      deployed: false,
      state: null,
      sip_uri: null,
    });
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(204);
  });

  it('is 204 when Twilio no longer has the domain, and 502 (keeping the endpoint) when Twilio fails', async () => {
    const agentId = await agent(ctx, a);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(res.status).toBe(200);
    fake.faults.deleteDomain = 503;
    const failed = await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(failed.status).toBe(502);
    fake.faults.deleteDomain = undefined;
    expect(await sipRows(ctx, agentId)).toEqual([{ state: 'active', provider: 'twilio', provider_id: res.body.provider_id }]);
    fake.domains.delete(res.body.provider_id);
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(204);
    expect(await sipRows(ctx, agentId)).toEqual([]);
  });

  it("removes the agent's SIP domain at Twilio when the agent is deleted, and keeps the agent when Twilio fails", async () => {
    const agentId = await agent(ctx, a);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(res.status).toBe(200);
    fake.faults.deleteDomain = 503;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: a.session })).status).toBe(502);
    expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session })).status).toBe(200);
    fake.faults.deleteDomain = undefined;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: a.session })).status).toBe(204);
    expect(fake.domains.has(res.body.provider_id)).toBe(false);
    expect(await sipRows(ctx, agentId)).toEqual([]);
  });

  it('answers 502 when Twilio fails to make the domain, and records nothing', async () => {
    const agentId = await agent(ctx, a);
    for (const fault of [500, 'hang'] as const) {
      fake.faults.createDomain = fault;
      const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
      expect(res.status).toBe(502);
      expect(res.body.detail).toMatch(fault === 500 ? /Twilio create SIP domain answered 500/ : /no answer within 1000 ms/);
      expect(await sipRows(ctx, agentId)).toEqual([]);
      expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session })).body.sip).toMatchObject({ deployed: false });
    }
    fake.faults.createDomain = undefined;
    expect((await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(200);
  });

  it('adopts the domain an earlier request made when its answer was lost', async () => {
    const agentId = await agent(ctx, a);
    const first = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(first.status).toBe(200);
    // The row is lost (as when the answer never came back); Twilio still holds the name.
    await ctx.deps.sql`DELETE FROM agent_sip_endpoints WHERE agent_id = ${agentId}`;
    const again = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.provider_id).toBe(first.body.provider_id);
  });

  it('is 409 before a version is published, and asks Twilio nothing', async () => {
    const agentId = await agent(ctx, a, false);
    const creates = fake.requests.domainCreates;
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(res).toMatchObject({ status: 409, body: { detail: 'Publish a version before deploying the agent over SIP' } });
    expect(fake.requests.domainCreates).toBe(creates);
  });

  it("is 404 for another organization's agent, and 403 for a read-only key", async () => {
    const agentId = await agent(ctx, a);
    for (const method of ['POST', 'DELETE'])
      expect((await ctx.request(method, `/core/agents/${agentId}/deploy-as-sip`, { token: b.session })).status, method).toBe(404);
    const readKey = await createOrgKey(ctx, a.session, { scopes: ['agents:read'] });
    const pages = fake.requests.numberPages;
    expect((await ctx.request('POST', '/core/phone-numbers/import', { token: readKey })).status).toBe(403);
    expect((await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: readKey })).status).toBe(403);
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: readKey })).status).toBe(403);
    expect(fake.requests.numberPages).toBe(pages);
    expect(await sipRows(ctx, agentId)).toEqual([]);
  });
});

describe('Vapi: numbers, and SIP numbers', () => {
  let fake: FakeVapi;
  let inbound: VapiInbound;
  let ctx: TestContext;
  let t: Tenant;

  beforeAll(async () => {
    fake = await startFakeVapi();
    fake.addPhoneNumber('+14155550101', 'Support');
    fake.addPhoneNumber('+14155550102');
    fake.addPhoneNumber('sip:front-desk@sip.vapi.ai', 'SIP line');
    // Vapi's SIP numbers, in front of the fake.
    inbound = await startVapiInbound(fake);
    ctx = await createTestContext({
      env: {
        DIALER: 'vapi',
        PUBLIC_BASE_URL,
        VAPI_API_BASE_URL: inbound.url,
        VAPI_API_KEY: fake.apiKey,
        VAPI_PHONE_NUMBER_ID: fake.phoneNumberId,
        VAPI_WEBHOOK_SECRET: 'vapi-secret-0123456789',
        SIP_HOST,
      },
    });
    fake.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    t = await newTenant(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await inbound?.close();
    await fake?.close();
  });

  it('imports the numbers with an E.164 address, once', async () => {
    const first = await ctx.request('POST', '/core/phone-numbers/import', { token: t.session });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ provider: 'vapi', imported: 3, updated: 0, unchanged: 0 });
    expect(first.body.data.map((n: any) => [n.number, n.label, n.provider_number_id])).toEqual([
      ['+14155550101', 'Support', fake.phoneNumbers[1]!.id],
      ['+14155550102', null, fake.phoneNumbers[2]!.id],
      ['+15005550006', 'Caller id', fake.phoneNumberId],
    ]);
    const second = await ctx.request('POST', '/core/phone-numbers/import', { token: t.session });
    expect(second.body).toMatchObject({ imported: 0, updated: 0, unchanged: 3 });
    expect(fake.requests.unauthorized).toBe(0);
  });

  it('answers 502 when Vapi fails', async () => {
    const other = await newTenant(ctx);
    fake.faults.numbers = 500;
    const res = await ctx.request('POST', '/core/phone-numbers/import', { token: other.session });
    fake.faults.numbers = undefined;
    expect(res.status).toBe(502);
    expect(await inventory(ctx, other)).toEqual([]);
  });

  it('makes a Vapi SIP number with a username and password, and removes it', async () => {
    const agentId = await agent(ctx, t);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: t.session });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const made = inbound.numbers.find((n) => n.id === res.body.provider_id)!;
    expect(res.body).toMatchObject({
      sip_uri: `sip:agent-${agentId}@sip.vapi.ai`,
      provisioning: 'provisioned',
      provider: 'vapi',
      state: 'active',
      credentials: made.authentication,
    });
    expect(res.body.note).toMatch(/^Provisioned at Vapi/);
    expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: t.session })).body.sip).toMatchObject({
      deployed: true,
      state: 'active',
      provider: 'vapi',
    });
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: t.session })).status).toBe(204);
    expect(inbound.numbers.some((n) => n.id === made.id)).toBe(false);
  });
});

describe('simulated dialer', () => {
  let ctx: TestContext;
  let t: Tenant;
  beforeAll(async () => {
    ctx = await createTestContext();
    t = await newTenant(ctx);
  });
  afterAll(() => ctx?.close());

  it('answers 503 to an import, saying no provider is configured', async () => {
    const res = await ctx.request('POST', '/core/phone-numbers/import', { token: t.session });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/^No telephony account: connect one/);
  });

  it('declares every status of the new operations', async () => {
    const paths = (await ctx.request('GET', '/openapi.json')).body.paths;
    expect(Object.keys(paths['/core/phone-numbers/import'].post.responses)).toEqual(
      expect.arrayContaining(['200', '401', '403', '502', '503']),
    );
    expect(Object.keys(paths['/core/agents/{id}/deploy-as-sip'].post.responses)).toEqual(
      expect.arrayContaining(['200', '403', '404', '409', '502']),
    );
    expect(Object.keys(paths['/core/agents/{id}/deploy-as-sip'].delete.responses)).toEqual(
      expect.arrayContaining(['204', '403', '404', '502', '503']),
    );
    expect(Object.keys(paths['/telephony/twilio/agents/{agent_id}/voice'].post.responses)).toEqual(
      expect.arrayContaining(['200', '401', '403', '404', '503']),
    );
  });

  it('answers the Twilio voice request 503', async () => {
    const res = await ctx.request('POST', `/telephony/twilio/agents/${crypto.randomUUID()}/voice`, {
      headers: { 'X-Twilio-Signature': `${'A'.repeat(27)}=` },
    });
    expect(res.status).toBe(503);
  });
});
