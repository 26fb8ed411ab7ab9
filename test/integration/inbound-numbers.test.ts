import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { signTwilio, startFakeTwilio, type FakeTwilio } from '../support/fake-twilio';
import { startTwilioInbound, type TwilioInbound } from '../support/fake-twilio-inbound';
import { startFakeVapi, type FakeVapi } from '../support/fake-vapi';
import { startVapiInbound, type VapiInbound } from '../support/fake-vapi-inbound';
import { assignFreePhoneNumber } from '../../services/agent-scaffold';
import { createOrgKey, newTenant, orgUuid, type Tenant } from '../support/identity';
import { parseTwiml } from '../support/twiml';

// Calls into the service through an organization's connected account, against local servers speaking
// Twilio's and Vapi's protocols: a published number pointed at the service at its provider (and put back as
// it was), Twilio's voice request on it answered with a Media Stream to the voice engine, its status callback
// ending a call the engine never took, Vapi's assistant-request answered with the agent, and the SIP
// endpoint's callers let in by a credential list made once or an IP access list.

const PUBLIC = 'https://voice-crm.example.test';

let twilio: FakeTwilio;
let twilioIn: TwilioInbound;
let vapi: FakeVapi;
let vapiIn: VapiInbound;
let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let v: Tenant;
let aConnection: string;
let vConnection: string;
const transport = (url: string) => (url.startsWith(PUBLIC) ? ctx.baseUrl + url.slice(PUBLIC.length) : url);

const N1 = '+16285550101';
const N2 = '+16285550102';
const N3 = '+16285550103';

async function publishedAgent(t: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  const agent = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'Front desk' } });
  expect(agent.status).toBe(200);
  const version = await ctx.request('POST', `/core/agents/${agent.body.id}/versions`, {
    token: t.session,
    body: { config: { instructions: 'Help callers.', first_message: 'Hello from the front desk.' } },
  });
  expect(version.status, version.text).toBe(200);
  const published = await ctx.request('POST', `/core/agents/${agent.body.id}/versions/1/publish`, { token: t.session, body });
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  return agent.body.id;
}

const publish = async (t: Tenant, agentId: string, body: Record<string, unknown>) => {
  const draft = await ctx.request('POST', `/core/agents/${agentId}/versions`, { token: t.session, body: { base_version: 1 } });
  expect(draft.status, draft.text).toBe(200);
  return ctx.request('POST', `/core/agents/${agentId}/versions/${draft.body.version}/publish`, { token: t.session, body });
};

const numberRow = async (t: Tenant, number: string) =>
  (await ctx.request('GET', '/core/phone-numbers?limit=200', { token: t.session })).body.data.find(
    (n: { number: string }) => n.number === number,
  );

const conversationOf = (callSid: string) =>
  ctx.deps.sql<{ org_id: string; agent_id: string; status: string; channel: string; ended_at: Date | null; phone_number: string }[]>`
    SELECT org_id, agent_id, status, channel, ended_at, phone_number FROM conversations WHERE call_id = ${callSid}`;

function streamOf(twiml: string) {
  const connect = parseTwiml(twiml).find((verb) => verb.name === 'Connect');
  const stream = connect?.children.find((verb) => verb.name === 'Stream');
  return { url: stream?.attributes.url, token: stream?.children.find((p) => p.attributes.name === 'token')?.attributes.value };
}

beforeAll(async () => {
  twilio = await startFakeTwilio();
  for (const n of [N1, N2, N3]) twilio.addNumber(n, `Line ${n.slice(-3)}`);
  vapi = await startFakeVapi();
  vapi.addPhoneNumber('+14155550177', 'Vapi line');
  // In front of the fakes; what they post to the public address reaches this test's server.
  twilioIn = await startTwilioInbound(twilio, { transport });
  vapiIn = await startVapiInbound(vapi, { transport });
  ctx = await createTestContext({
    env: {
      PUBLIC_BASE_URL: PUBLIC,
      TWILIO_API_BASE_URL: twilioIn.url,
      VAPI_API_BASE_URL: vapiIn.url,
      DIALER_SIMULATED_ALLOWED: 'true',
      DIALER_PROVIDER_TIMEOUT_MS: '1000',
      VOICE_PUBLIC_URL: 'wss://voice.example.test',
    },
  });
  a = await newTenant(ctx);
  b = await newTenant(ctx);
  v = await newTenant(ctx);
  const connectA = await ctx.request('POST', '/integrations/telephony-accounts', {
    token: a.session,
    body: { provider: 'twilio', account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: N3 },
  });
  expect(connectA.status, JSON.stringify(connectA.body)).toBe(200);
  aConnection = connectA.body.id;
  const connectV = await ctx.request('POST', '/integrations/telephony-accounts', {
    token: v.session,
    body: { provider: 'vapi', api_key: vapi.apiKey, phone_number_id: vapi.phoneNumberId },
  });
  expect(connectV.status, JSON.stringify(connectV.body)).toBe(200);
  vConnection = connectV.body.id;
  expect((await ctx.request('POST', '/core/phone-numbers/import', { token: a.session })).status).toBe(200);
  expect((await ctx.request('POST', '/core/phone-numbers/import', { token: v.session })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await ctx?.close();
  await twilioIn?.close();
  await vapiIn?.close();
  await twilio?.close();
  await vapi?.close();
});

describe('Twilio numbers', () => {
  it('points a published inbound number at the service, answers its calls with a stream, and puts it back when unassigned', async () => {
    const sid = twilio.numbers.find((n) => n.phoneNumber === N1)!.sid;
    Object.assign(twilioIn.configOf(sid), {
      voice_url: 'https://customer.example/ivr',
      voice_method: 'GET',
      status_callback: 'https://customer.example/status',
      voice_application_sid: null,
    });
    const before = { ...twilioIn.configOf(sid) };
    const agentId = await publishedAgent(a, { phone_numbers: [N1], direction: 'both' });
    expect(twilioIn.configOf(sid)).toEqual({
      voice_url: `${PUBLIC}/telephony/twilio/voice?account=${aConnection}`,
      voice_method: 'POST',
      status_callback: `${PUBLIC}/telephony/twilio/inbound-status?account=${aConnection}`,
      status_callback_method: 'POST',
      voice_application_sid: null,
    });
    expect(await numberRow(a, N1)).toMatchObject({ inbound_agent_id: agentId, inbound_agent_version: 1, inbound_routed: true });
    expect(await numberRow(a, N2)).toMatchObject({ inbound_agent_id: null, inbound_agent_version: null, inbound_routed: false });

    // Another organization has the same number registered by hand and answered by its own agent: a call
    // through a's account is a's.
    expect((await ctx.request('POST', '/core/phone-numbers', { token: b.session, body: { number: N1 } })).status).toBe(200);
    await publishedAgent(b, { phone_numbers: [N1] });

    const call = await twilioIn.callNumber(N1);
    expect(call.status, call.body).toBe(200);
    expect(call.contentType).toMatch(/^text\/xml/);
    const stream = streamOf(call.body);
    expect(stream.url).toBe('wss://voice.example.test/twilio/media-stream');
    expect(stream.token).toMatch(/\S{20,}/);
    const [conversation] = await conversationOf(call.params.CallSid);
    expect(conversation).toMatchObject({ agent_id: agentId, status: 'ringing', channel: 'twilio', phone_number: call.params.From });
    // Twilio asking again about the same call makes no second conversation.
    expect((await twilioIn.callNumber(N1)).status).toBe(200);
    expect(await conversationOf(call.params.CallSid)).toHaveLength(1);

    // Forged, or signed by another account's token.
    expect((await twilioIn.callNumber(N1, { signature: `${'A'.repeat(27)}=` })).status).toBe(401);
    const other = twilio.addAccount('Other');
    const foreign = signTwilio(other.authToken, twilioIn.configOf(sid).voice_url!, { To: N1 });
    expect((await twilioIn.callNumber(N1, { signature: foreign })).status).toBe(401);

    // The caller hangs up before the engine takes the stream: Twilio's final status ends the conversation.
    expect(await twilioIn.sendStatus(N1, call.params.CallSid, 'completed')).toEqual({ status: 200, body: { status: 'accepted' } });
    expect((await conversationOf(call.params.CallSid))[0]).toMatchObject({ status: 'no_answer', ended_at: expect.any(Date) });
    expect(await twilioIn.sendStatus(N1, call.params.CallSid, 'completed')).toEqual({ status: 200, body: { status: 'ignored' } });
    const failed = await twilioIn.callNumber(N1);
    expect((await twilioIn.sendStatus(N1, failed.params.CallSid, 'failed')).body).toEqual({ status: 'accepted' });
    expect((await conversationOf(failed.params.CallSid))[0]!.status).toBe('failed');

    // Moving only the outbound side changes nothing at Twilio; unassigning the inbound side puts the number back.
    const updates = twilioIn.requests.numberUpdates;
    expect((await publish(a, agentId, { phone_numbers: [N1], direction: 'outbound' })).status).toBe(200);
    expect(twilioIn.requests.numberUpdates).toBe(updates);
    const unassigned = await publish(a, agentId, { unassign_phone_numbers: [N1], direction: 'inbound' });
    expect(unassigned.status, JSON.stringify(unassigned.body)).toBe(200);
    expect(twilioIn.configOf(sid)).toEqual(before);
    expect(await numberRow(a, N1)).toMatchObject({ inbound_agent_id: null, inbound_routed: false, outbound_agent_id: agentId });
  });

  it('tells a caller no agent answers when the number has none', async () => {
    const sid = twilio.numbers.find((n) => n.phoneNumber === N2)!.sid;
    twilioIn.configOf(sid).voice_url = `${PUBLIC}/telephony/twilio/voice?account=${aConnection}`;
    const call = await twilioIn.callNumber(N2);
    expect(call.status).toBe(200);
    expect(parseTwiml(call.body).map((verb) => verb.name)).toEqual(['Say', 'Hangup']);
    expect(call.body).toContain('no one can take this call');
    expect(await conversationOf(call.params.CallSid)).toEqual([]);
    twilioIn.configOf(sid).voice_url = 'https://demo.twilio.com/welcome/voice/';
  });

  it('answers 502 and changes nothing when Twilio fails or does not answer', async () => {
    const agent = await ctx.request('POST', '/core/agents', { token: a.session, body: { name: 'Late line' } });
    await ctx.request('POST', `/core/agents/${agent.body.id}/versions`, { token: a.session, body: { config: { instructions: 'Hi.' } } });
    const sid = twilio.numbers.find((n) => n.phoneNumber === N2)!.sid;
    const before = { ...twilioIn.configOf(sid) };
    for (const fault of [500, 'hang'] as const) {
      twilioIn.faults.updateNumber = fault;
      const res = await ctx.request('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {
        token: a.session,
        body: { phone_numbers: [N2] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(502);
      expect(res.body.detail).toMatch(fault === 500 ? /Twilio update number answered 500/ : /no answer within 1000 ms/);
    }
    twilioIn.faults.updateNumber = undefined;
    expect(twilioIn.configOf(sid)).toEqual(before);
    expect(await numberRow(a, N2)).toMatchObject({ inbound_agent_id: null, inbound_routed: false });
    expect((await ctx.request('GET', `/core/agents/${agent.body.id}/versions/1`, { token: a.session })).body.published).toBe(false);
  });

  it('puts the numbers back when the agent is deleted or the number released; a read-only key changes nothing', async () => {
    const agentId = await publishedAgent(a, { phone_numbers: [N2, N3] });
    const sid2 = twilio.numbers.find((n) => n.phoneNumber === N2)!.sid;
    const sid3 = twilio.numbers.find((n) => n.phoneNumber === N3)!.sid;
    expect(twilioIn.configOf(sid2).voice_url).toContain('/telephony/twilio/voice');
    const readOnly = await createOrgKey(ctx, a.session, { scopes: ['agents:read'] });
    const updates = twilioIn.requests.numberUpdates;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: readOnly })).status).toBe(403);
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: b.session })).status).toBe(404);
    expect(twilioIn.requests.numberUpdates).toBe(updates);

    const released = (await numberRow(a, N3)).id;
    expect((await ctx.request('DELETE', `/core/phone-numbers/${released}`, { token: a.session })).status).toBe(204);
    expect(twilioIn.configOf(sid3).voice_url).toBe('https://demo.twilio.com/welcome/voice/');

    twilioIn.faults.updateNumber = 503;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: a.session })).status).toBe(502);
    twilioIn.faults.updateNumber = undefined;
    expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session })).status).toBe(200);
    expect((await ctx.request('DELETE', `/core/agents/${agentId}`, { token: a.session })).status).toBe(204);
    expect(twilioIn.configOf(sid2)).toMatchObject({ voice_url: 'https://demo.twilio.com/welcome/voice/', status_callback: null });
    expect(await numberRow(a, N2)).toMatchObject({ inbound_agent_id: null, inbound_routed: false });
  });
});

describe('a number claimed by the demo scaffolding', () => {
  it('is pointed at the service with the claim, and a provider failure claims nothing', async () => {
    const orgId = await orgUuid(ctx, a);
    const agentId = await publishedAgent(a);
    const sid = twilio.numbers.find((n) => n.phoneNumber === N2)!.sid;
    twilioIn.faults.updateNumber = 500;
    await expect(assignFreePhoneNumber(ctx.deps, { orgId, agentId })).rejects.toThrow(/Twilio update number answered 500/);
    twilioIn.faults.updateNumber = undefined;
    expect(await numberRow(a, N2)).toMatchObject({ inbound_agent_id: null, inbound_routed: false });
    // The activity's next attempt.
    expect(await assignFreePhoneNumber(ctx.deps, { orgId, agentId })).toBe(N2);
    expect(await numberRow(a, N2)).toMatchObject({ inbound_agent_id: agentId, inbound_routed: true });
    expect(twilioIn.configOf(sid).voice_url).toBe(`${PUBLIC}/telephony/twilio/voice?account=${aConnection}`);
  });
});

describe('Vapi numbers', () => {
  it("points the number's server at the service, answers assistant-request with the agent, and puts it back", async () => {
    const number = vapiIn.numbers.find((n) => n.number === '+14155550177')!;
    Object.assign(number, { assistantId: 'asst-previous', server: null });
    const agentId = await publishedAgent(v, { phone_numbers: ['+14155550177'] });
    expect(number).toMatchObject({
      assistantId: null,
      squadId: null,
      workflowId: null,
      server: { url: `${PUBLIC}/telephony/vapi/inbound?account=${vConnection}`, headers: { 'x-vapi-secret': expect.any(String) } },
    });
    const asked = await vapiIn.assistantRequest(number.id);
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body?.assistant).toMatchObject({ firstMessage: 'Hello from the front desk.', name: `agent ${agentId}`.slice(0, 40) });
    expect((await vapiIn.assistantRequest(number.id, { secret: 'wrong' })).status).toBe(401);

    const unassigned = await publish(v, agentId, { unassign_phone_numbers: ['+14155550177'] });
    expect(unassigned.status).toBe(200);
    expect(number).toMatchObject({ assistantId: 'asst-previous', server: null });
  });
});

describe('SIP endpoints', () => {
  it('lets callers in with a username and password made once, and streams their calls to the engine', async () => {
    const agentId = await publishedAgent(a);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { username, password } = res.body.credentials;
    expect(username).toMatch(/^agent[a-z0-9]{19}$/);
    expect(password).toMatch(/^(?=.*[A-Z])(?=.*[a-z])(?=.*\d).{32}$/);
    expect(res.body.auth).toEqual({ kind: 'credentials', username, ip_addresses: null });
    const domain = twilio.domains.get(res.body.provider_id)!;
    const created = twilioIn.domainCreates.find((f) => f.get('DomainName') === domain.domainName)!;
    expect(created.get('VoiceStatusCallbackUrl')).toBe(`${PUBLIC}/telephony/twilio/inbound-status?account=${aConnection}`);
    expect(twilioIn.letsIn(domain.sid, { username, password })).toBe(true);
    expect(twilioIn.letsIn(domain.sid, { username, password: `${password}x` })).toBe(false);

    // Never readable again.
    const again = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(again.body).toMatchObject({ provider_id: domain.sid, credentials: null, auth: { username } });
    expect(JSON.stringify(await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session }))).not.toContain(password);

    const params = {
      AccountSid: twilio.accountSid,
      CallSid: `CA${'1'.repeat(32)}`,
      From: 'sip:caller@example.org',
      To: `sip:${agentId}@${domain.domainName}`,
    };
    const call = await fetch(transport(domain.voiceUrl!), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': signTwilio(twilio.authToken, domain.voiceUrl!, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    const twiml = await call.text();
    expect(call.status, twiml).toBe(200);
    expect(streamOf(twiml).url).toBe('wss://voice.example.test/twilio/media-stream');
    expect(twiml).not.toContain('<Dial');
    expect((await conversationOf(params.CallSid))[0]).toMatchObject({ agent_id: agentId, channel: 'sip', status: 'ringing' });
    // The caller leaves before the engine takes the call: the domain's status callback ends it.
    const statusParams = { AccountSid: twilio.accountSid, CallSid: params.CallSid, CallStatus: 'canceled' };
    const statusUrl = created.get('VoiceStatusCallbackUrl')!;
    const ended = await fetch(transport(statusUrl), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': signTwilio(twilio.authToken, statusUrl, statusParams),
      },
      body: new URLSearchParams(statusParams).toString(),
    });
    expect(await ended.json()).toEqual({ status: 'accepted' });
    expect((await conversationOf(params.CallSid))[0]).toMatchObject({ channel: 'sip', status: 'no_answer' });

    const lists = twilioIn.credentialLists.size;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(204);
    expect(twilio.domains.has(domain.sid)).toBe(false);
    expect(twilioIn.credentialLists.size).toBe(lists - 1);
  });

  it('lets in the IP addresses a deploy names, and refuses malformed ones with 422', async () => {
    const agentId = await publishedAgent(a);
    for (const bad of [[], ['10.0.0.0/4'], ['::1'], ['300.1.1.1'], Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`)]) {
      const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session, body: { ip_addresses: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, {
      token: a.session,
      body: { ip_addresses: ['203.0.113.10', '198.51.100.0/24'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      credentials: null,
      auth: { kind: 'ip_addresses', ip_addresses: ['203.0.113.10/32', '198.51.100.0/24'] },
    });
    expect(twilioIn.letsIn(res.body.provider_id, { ip: '198.51.100.77' })).toBe(true);
    expect(twilioIn.letsIn(res.body.provider_id, { ip: '203.0.113.11' })).toBe(false);
    const lists = twilioIn.ipLists.size;
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session })).status).toBe(204);
    expect(twilioIn.ipLists.size).toBe(lists - 1);
  });

  it('gives a domain made before callers were let in its credential list on the next deploy', async () => {
    const agentId = await publishedAgent(a);
    const first = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(first.status).toBe(200);
    // As a domain made by an earlier release stands: no list recorded, none mapped.
    await ctx.deps
      .sql`UPDATE agent_sip_endpoints SET auth_kind = NULL, auth_username = NULL, auth_resources = '{}' WHERE agent_id = ${agentId}`;
    twilioIn.mappings.delete(first.body.provider_id);
    const creates = twilio.requests.domainCreates;
    const again = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(twilio.requests.domainCreates).toBe(creates);
    expect(again.body.provider_id).toBe(first.body.provider_id);
    expect(twilioIn.letsIn(first.body.provider_id, again.body.credentials)).toBe(true);
    expect(twilioIn.letsIn(first.body.provider_id, first.body.credentials)).toBe(false);
  });

  it('makes nothing and answers 502 when Twilio refuses the credential', async () => {
    const agentId = await publishedAgent(a);
    twilioIn.faults.createCredential = 500;
    const domains = twilio.domains.size;
    const lists = twilioIn.credentialLists.size;
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: a.session });
    twilioIn.faults.createCredential = undefined;
    expect(res.status).toBe(502);
    expect(twilio.domains.size).toBe(domains);
    expect(twilioIn.credentialLists.size).toBe(lists);
    expect((await ctx.request('GET', `/core/agents/${agentId}`, { token: a.session })).body.sip).toMatchObject({ deployed: false });
  });

  it("makes a Vapi SIP number with the credentials, whose calls get the agent's assistant; IP addresses are 409", async () => {
    const agentId = await publishedAgent(v);
    const ip = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, {
      token: v.session,
      body: { ip_addresses: ['203.0.113.10'] },
    });
    expect(ip.status).toBe(409);
    expect(ip.body.detail).toMatch(/Vapi/);
    const res = await ctx.request('POST', `/core/agents/${agentId}/deploy-as-sip`, { token: v.session });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const made = vapiIn.numbers.find((n) => n.id === res.body.provider_id)!;
    expect(made).toMatchObject({
      provider: 'vapi',
      sipUri: `sip:agent-${agentId}@sip.vapi.ai`,
      authentication: res.body.credentials,
      server: { url: `${PUBLIC}/telephony/vapi/inbound?account=${vConnection}` },
    });
    expect(res.body).toMatchObject({ sip_uri: made.sipUri, provisioning: 'provisioned', state: 'active' });
    const asked = await vapiIn.assistantRequest(made.id);
    expect(asked.body?.assistant).toMatchObject({ firstMessage: 'Hello from the front desk.' });
    expect((await ctx.request('DELETE', `/core/agents/${agentId}/deploy-as-sip`, { token: v.session })).status).toBe(204);
    expect(vapiIn.numbers.some((n) => n.id === made.id)).toBe(false);
  });

  it('declares the new operations and their statuses', async () => {
    const paths = (await ctx.request('GET', '/openapi.json')).body.paths;
    expect(Object.keys(paths['/telephony/twilio/voice'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '503']));
    expect(Object.keys(paths['/telephony/twilio/inbound-status'].post.responses)).toEqual(expect.arrayContaining(['200', '401']));
    expect(Object.keys(paths['/telephony/vapi/inbound'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '422']));
    expect(Object.keys(paths['/core/agents/{id}/versions/{version}/publish'].post.responses)).toEqual(
      expect.arrayContaining(['502', '503']),
    );
    expect(Object.keys(paths['/core/phone-numbers/{id}'].delete.responses)).toEqual(expect.arrayContaining(['502', '503']));
  });
});
