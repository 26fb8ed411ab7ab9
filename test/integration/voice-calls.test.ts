import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { PUBLIC_BASE_URL } from '../support/public-base';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeTwilio, type FakeTwilio, twilioDialerSettings } from '../support/fake-twilio';
import { newTenant, type Tenant } from '../support/identity';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// What a call does beyond talking: a transfer asked of Twilio, keys pressed, a voicemail greeting on an
// outbound call, personal data kept out of the transcript, the call written on the CRM contact.

const { url: speechUrl, describe: needsSpeech } = speechServer();

let ctx: TestContext;
let llm: FakeChatLlm;
let twilio: FakeTwilio;
let engine: TestEngine;
let t: Tenant;
let orgId: string;

const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });
const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

async function publishedAgent(config: Record<string, unknown>): Promise<string> {
  const agent = await call('POST', '/core/agents', { name: 'Line' });
  expect(agent.status, agent.text).toBe(200);
  expect((await call('POST', `/core/agents/${agent.body.id}/versions`, { config })).status).toBe(200);
  expect((await call('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {})).status).toBe(200);
  return agent.body.id;
}

needsSpeech('voice calls', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    twilio = await startFakeTwilio();
    ctx = await createTestContext({
      worker: true,
      env: {
        LLM_BASE_URL: llm.baseUrl,
        LLM_MODEL: 'fake-chat',
        ...twilioDialerSettings(twilio),
        PUBLIC_BASE_URL,
      },
    });
    twilio.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    t = await newTenant(ctx);
    await call('GET', '/core/agents');
    const [org] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = ${t.org}`;
    orgId = org!.id;
    engine = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    await ctx?.close();
    await llm?.close();
    await twilio?.close();
  });

  it('transfers the live call through Twilio with a <Dial> to the rule’s destination', async () => {
    llm.script = [{ text: 'I will connect you with billing.', toolCalls: [{ name: 'transfer_call', arguments: { destination: 1 } }] }];
    const agentId = await publishedAgent({
      instructions: 'Route callers.',
      first_speaker: 'user',
      transfer: { enabled: true, rules: [{ condition: 'the caller asks about billing', destination: '+14155550100' }] },
    });
    const live = twilio.addInboundCall({ from: '+14155550123', to: '+15005550006' });
    const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio', call_id: live.sid, from: '+14155550123' });
    const caller = await SimulatedCaller.connect({
      url: engine.url,
      token,
      speechBaseUrl: speechUrl,
      callSid: live.sid,
      accountSid: twilio.accountSid,
    });
    await caller.say('I have a question about my bill.');
    const spoken = await caller.waitForSpeech({ timeoutMs: 20_000, transcribe: true });
    expect(words(spoken.text)).toMatch(/connect|bill/);
    const update = await waitFor(async () => twilio.updates.find((u) => u.callSid === live.sid && u.dial), 20_000, 'a transfer update');
    expect(update.answered).toBe(200);
    expect(JSON.stringify(update.dial)).toContain('+14155550100');
    const detail = await finishedConversation(ctx, t.session, agentId);
    expect(detail.status).toBe('transferred');
    expect(detail.outcome).toMatchObject({ disposition: 'transferred', transferred_to: '+14155550100' });
  }, 120_000);

  it('hands the keys a caller presses to the model', async () => {
    llm.script = [{ text: 'Thank you, I have your account number.' }];
    const agentId = await publishedAgent({ instructions: 'Ask for the account number.', first_speaker: 'user' });
    const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio' });
    const caller = await SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
    await caller.pressDigits('4821#');
    await caller.waitForSpeech({ timeoutMs: 20_000 });
    const asked = llm.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(asked.join(' ')).toContain('4821#');
    await caller.hangUp();
  }, 120_000);

  it('hangs up on a voicemail greeting of an outbound call when end_on_voicemail says so', async () => {
    const agentId = await publishedAgent({ instructions: 'Sell parts.', first_speaker: 'user', end_call: { end_on_voicemail: true } });
    const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio', direction: 'outbound', to: '+14155550199' });
    const caller = await SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
    const requestsBefore = llm.requests.length;
    await caller.say('Hi, you have reached Sam. Please leave a message after the tone.');
    const closed = await caller.closed;
    expect(closed.by).toBe('engine');
    const detail = await finishedConversation(ctx, t.session, agentId);
    expect(detail.status).toBe('voicemail');
    expect(detail.outcome.disposition).toBe('voicemail');
    expect(llm.requests.length).toBe(requestsBefore);
  }, 120_000);

  it('keeps personal data out of the transcript and writes the call on the CRM contact', async () => {
    const account = await call('POST', '/accounts', { name: 'Reyes Garage' });
    expect(account.status, account.text).toBe(200);
    const contact = await call('POST', '/contacts', {
      first_name: 'Dana',
      last_name: 'Reyes',
      phone: '+14155550142',
      account_id: account.body.id,
    });
    expect(contact.status, contact.text).toBe(200);
    llm.script = [{ text: 'Thanks Dana, noted.' }];
    const agentId = await publishedAgent({
      instructions: 'Take messages for {{first_name}}.',
      first_speaker: 'user',
      recording: { enabled: true, redact_pii: true },
    });
    const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio', from: '+14155550142' });
    const caller = await SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
    await caller.say('My card number is 4111 1111 1111 1111.');
    await caller.waitForSpeech({ timeoutMs: 20_000 });
    // The model knew who was calling, from the CRM.
    expect(llm.requests.at(-1)!.messages[0]!.content).toContain('Dana');
    await caller.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    expect(detail.contact_id).toBe(contact.body.id);
    const spoken = detail.turns.find((turn: { role: string }) => turn.role === 'caller');
    expect(spoken.text).not.toMatch(/4111/);
    expect(spoken.text).toContain('[number]');
    const activities = await waitFor(
      async () => {
        // A contact's activities show in its account's feed.
        const res = await call('GET', `/accounts/${account.body.id}/activities`);
        return (res.body as { type: string }[]).find((a) => a.type === 'call') as Record<string, unknown> | undefined;
      },
      20_000,
      'the call activity',
    );
    expect(activities.contact_id).toBe(contact.body.id);
    expect(activities.transcript).toContain('Thanks Dana');
    expect(JSON.stringify(activities)).not.toMatch(/4111/);
  }, 120_000);
});
