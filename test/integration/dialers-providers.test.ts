import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contact,
  conversationsOf,
  createCampaign,
  move,
  tenantWithAgent,
  waitFor,
  waitForStatus,
  type CampaignTenant,
} from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { PUBLIC_BASE_URL, appFetch } from '../support/public-base';
import { signTwilio, startFakeTwilio, type FakeTwilio, type TwilioScript } from '../support/fake-twilio';
import { startFakeVapi, type FakeVapi, type VapiScript } from '../support/fake-vapi';

// The provider dialers through the real dispatcher (real Postgres, real Temporal, the real worker),
// against local servers that speak Twilio's and Vapi's protocols: 200 contacts at a limit of 20, each
// called exactly once, lost callbacks recovered by reconcile(), outcomes on the CRM contact, and the
// callbacks refused when forged or stale, and without effect when replayed.

const CONTACTS = 200;
const LIMIT = 20;
const SIP_HOST = 'sip.test.example';

/** A valid US number of its own per base and index: 415, the base's exchange, then the index. */
const numberOf = (i: number, base: string) => `+1${base}5${String(i).padStart(4, '0')}`;

async function publishAgent(ctx: TestContext, t: CampaignTenant, instructions: string) {
  const created = await ctx.request('POST', `/core/agents/${t.agentId}/versions`, { token: t.session, body: { config: { instructions } } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const published = await ctx.request('POST', `/core/agents/${t.agentId}/versions/${created.body.version}/publish`, {
    token: t.session,
    body: {},
  });
  expect(published.status, JSON.stringify(published.body)).toBe(200);
}

async function crmContact(ctx: TestContext, t: CampaignTenant, phone: string): Promise<string> {
  const res = await ctx.request('POST', '/contacts', { token: t.session, body: { first_name: `Callee ${phone}`, phone } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function callActivities(ctx: TestContext, contactId: string) {
  return ctx.deps.sql<
    { type: string; direction: string; duration_minutes: number | null; subject: string; metadata: Record<string, unknown> }[]
  >`
    SELECT type, direction, duration_minutes, subject, metadata FROM activities WHERE contact_id = ${contactId} ORDER BY created_at`;
}

/**
 * Resolves once the organization's dispatcher has ended: a replayed callback is answered 'ignored' and
 * handed to no one, and with the dispatcher ended no sweep or cycle is left to change a call.
 */
async function dispatcherEnded(ctx: TestContext, t: CampaignTenant) {
  const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${t.orgId}`);
  await waitFor(async () => (await dispatcher.describe()).status.name === 'COMPLETED', 60_000, 'the dispatcher to end');
}

/** Runs a campaign of CONTACTS contacts at LIMIT, one attempt each, to completion; samples the API's in-flight count. */
async function runCampaign(ctx: TestContext, t: CampaignTenant, numbers: string[]) {
  expect(
    (await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body: { concurrency_limit: LIMIT } })).status,
  ).toBe(200);
  const campaign = await createCampaign(ctx, t, {
    max_attempts: 1,
    contacts: numbers.map((n, i) => contact({ phone_numbers: [n], external_id: `c${i}`, initial_context: `Contact number ${i}` })),
  });
  expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
  let sampled = 0;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      const res = await ctx.request('GET', '/campaign/concurrency-settings', { token: t.session });
      sampled = Math.max(sampled, res.body.active);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    await waitForStatus(ctx, t, campaign.id, 'completed', 120_000);
  } finally {
    done = true;
    await sampling;
  }
  const contacts: { external_id: string; status: string; attempts: number; last_outcome: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await ctx.request('GET', `/campaign/campaigns/${campaign.id}/contacts?limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
      token: t.session,
    });
    contacts.push(...page.body.data);
    cursor = page.body.pagination.next_cursor ?? undefined;
  } while (cursor);
  const byIndex = new Map(contacts.map((c) => [Number(c.external_id.slice(1)), c]));
  return { campaign, byIndex, sampled, conversations: await conversationsOf(ctx, campaign.id) };
}

/** The dialing part of a fake provider that can hold calls open (test/support/fake-twilio.ts, fake-vapi.ts). */
interface HoldingFake {
  readonly active: number;
  readonly peak: number;
  readonly held: number;
  hold(on: boolean): void;
  release(): void;
}

/**
 * Calls that last until the test ends them: the dispatcher fills exactly LIMIT slots, round after round,
 * and never one more. Deterministic on any machine: the slots free only when the test releases them.
 */
async function fillsTheLimitExactly(ctx: TestContext, t: CampaignTenant, fake: HoldingFake, numbers: string[]) {
  expect(
    (await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body: { concurrency_limit: LIMIT } })).status,
  ).toBe(200);
  fake.hold(true);
  try {
    const campaign = await createCampaign(ctx, t, {
      max_attempts: 1,
      contacts: numbers.map((n, i) => contact({ phone_numbers: [n], external_id: `h${i}` })),
    });
    expect((await move(ctx, t, campaign.id, 'resume')).status).toBe(200);
    for (let left = numbers.length; left > 0; left -= LIMIT) {
      const round = Math.min(LIMIT, left);
      await waitFor(async () => fake.held === round, 60_000, `${round} calls in progress`);
      expect(fake.active).toBe(round); // the limit is reached, and no call beyond it was placed
      const api = await ctx.request('GET', '/campaign/concurrency-settings', { token: t.session });
      expect(api.body.active).toBe(round);
      fake.release();
    }
    await waitForStatus(ctx, t, campaign.id, 'completed', 60_000);
  } finally {
    fake.hold(false);
    fake.release();
  }
  expect(fake.peak).toBe(LIMIT);
}

describe('Twilio dialer', () => {
  let fake: FakeTwilio;
  let ctx: TestContext;
  const scripts: TwilioScript[] = [
    'answered',
    'answered',
    'answered',
    'answered',
    'busy',
    'no-answer',
    'machine',
    'failed',
    'lost',
    'answered',
  ];
  /** Besides the cycle above: two numbers Twilio refuses (21211), two whose create answer is cut off. */
  const scriptOf = (i: number): TwilioScript => (i === 13 || i === 113 ? 'reject' : i === 19 || i === 119 ? 'drop' : scripts[i % 10]!);
  const numbers = Array.from({ length: CONTACTS }, (_, i) => numberOf(i, '41560'));

  beforeAll(async () => {
    fake = await startFakeTwilio({ stepMs: 150, script: (to) => (numbers.includes(to) ? scriptOf(numbers.indexOf(to)) : 'answered') });
    ctx = await createTestContext({
      worker: true,
      env: {
        DIALER: 'twilio',
        PUBLIC_BASE_URL,
        TWILIO_API_BASE_URL: fake.url,
        TWILIO_ACCOUNT_SID: fake.accountSid,
        TWILIO_AUTH_TOKEN: fake.authToken,
        TWILIO_FROM_NUMBER: '+15005550006',
        SIP_HOST,
        CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
        DIALER_RECONCILE_AFTER_SECONDS: '1',
      },
    });
    fake.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
  });
  afterAll(async () => {
    await ctx?.close();
    await fake?.close();
  });

  let t: CampaignTenant;
  let crm: Record<'answered' | 'machine' | 'lost', string>;
  let run: Awaited<ReturnType<typeof runCampaign>>;

  it('calls 200 contacts at a limit of 20, each once, and recovers lost callbacks through reconcile', { timeout: 180_000 }, async () => {
    t = await tenantWithAgent(ctx);
    crm = {
      answered: await crmContact(ctx, t, numbers[0]!),
      machine: await crmContact(ctx, t, numbers[6]!),
      lost: await crmContact(ctx, t, numbers[8]!),
    };
    run = await runCampaign(ctx, t, numbers);

    // Never passed. Whether all 20 slots fill at once depends on the machine's speed (a call lasts ~0.6 s): not asserted.
    expect(fake.peak).toBeLessThanOrEqual(LIMIT);
    expect(run.sampled).toBeLessThanOrEqual(LIMIT);
    for (const [i, n] of numbers.entries())
      expect(fake.createsByNumber.get(n) ?? 0, `${n} ${scriptOf(i)}`).toBe(scriptOf(i) === 'reject' ? 0 : 1);
    expect(fake.requests.creates).toBe(CONTACTS - 2);
    expect(fake.requests.unauthorized).toBe(0);
    expect(run.conversations).toHaveLength(CONTACTS);

    // No voice engine takes the calls' streams here: an answered call that never reached the agent is failed
    // (services/campaigns/streamed-calls.ts; campaign-calls-voice.test.ts has the engine take them).
    const expected: Record<TwilioScript, { contact: string; call: string }> = {
      answered: { contact: 'failed', call: 'failed' },
      drop: { contact: 'failed', call: 'failed' },
      lost: { contact: 'failed', call: 'failed' },
      busy: { contact: 'failed', call: 'busy' },
      'no-answer': { contact: 'failed', call: 'no_answer' },
      machine: { contact: 'failed', call: 'no_answer' },
      failed: { contact: 'failed', call: 'failed' },
      reject: { contact: 'failed', call: 'failed' },
    };
    const byKey = new Map(run.conversations.map((c) => [c.contact_ref, c]));
    const contactIds = new Map<number, string>();
    const rows = await ctx.deps.sql<{ id: string; external_id: string }[]>`
      SELECT id, external_id FROM campaign_contacts WHERE campaign_id = ${run.campaign.id}`;
    for (const r of rows) contactIds.set(Number(r.external_id.slice(1)), r.id);
    for (let i = 0; i < CONTACTS; i++) {
      const script = scriptOf(i);
      const c = run.byIndex.get(i)!;
      const call = byKey.get(contactIds.get(i)!)!;
      expect({ i, script, contact: c.status, attempts: c.attempts }).toEqual({ i, script, contact: expected[script].contact, attempts: 1 });
      expect({ i, script, call: call.status }).toEqual({ i, script, call: expected[script].call });
      if (script === 'lost') expect(call.outcome).toMatchObject({ reconciled: true, provider: 'twilio', disposition: 'stream_failed' });
      if (script === 'answered' || script === 'drop') expect(call.outcome).toMatchObject({ disposition: 'stream_failed' });
      if (script === 'machine') expect(call.outcome).toMatchObject({ disposition: 'voicemail', answered_by: 'machine_start' });
      if (script === 'reject') expect(String(call.outcome.reason)).toMatch(/^twilio_21211/);
      if (script !== 'reject') expect(call.outcome.provider_call_id).toMatch(/^CA[0-9a-f]{32}$/);
    }

    // Each answered call is streamed to the voice engine, with asynchronous answering-machine detection.
    const placed = [...fake.calls.values()][0]!;
    expect(placed.twiml).toMatch(/<Connect action="[^"]+"[^>]*><Stream url="[^"]+\/twilio\/media-stream"><Parameter name="token"/);
    expect(placed.machineDetection).toBe('Enable');
    expect(placed.asyncAmdCallback).toContain('/telephony/twilio/amd?key=');
    expect(placed.events).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    // Every callback the fake delivered was acknowledged.
    expect(fake.callbacks.filter((cb) => cb.answered !== 200 && cb.answered !== 202).map((cb) => [cb.answered, cb.params])).toEqual([]);

    // The outcomes are on the CRM contacts the numbers belong to.
    const [answered] = await callActivities(ctx, crm.answered);
    expect(answered).toMatchObject({ type: 'call', direction: 'outbound', metadata: { outcome: 'stream_failed', provider: 'twilio' } });
    expect(answered!.duration_minutes).toBeGreaterThanOrEqual(1);
    expect((await callActivities(ctx, crm.machine))[0]).toMatchObject({ metadata: { outcome: 'voicemail' } });
    expect((await callActivities(ctx, crm.lost))[0]).toMatchObject({ metadata: { outcome: 'stream_failed', call_status: 'failed' } });
  });

  it('fills exactly the limit while calls last, round after round, and never one more', { timeout: 180_000 }, async () => {
    await fillsTheLimitExactly(
      ctx,
      await tenantWithAgent(ctx),
      fake,
      Array.from({ length: 2 * LIMIT + 5 }, (_, i) => numberOf(i, '41590')),
    );
  });

  it('refuses a forged or stale status callback, and a replayed one changes nothing', async () => {
    const final = fake.callbacks.find((cb) => cb.params.To === numbers[0] && cb.params.CallStatus === 'completed')!;
    const post = (url: string, params: Record<string, string>, signature?: string) =>
      appFetch(ctx)(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(signature ? { 'X-Twilio-Signature': signature } : {}) },
        body: new URLSearchParams(params).toString(),
      });
    const before = await conversationsOf(ctx, run.campaign.id);
    const activitiesBefore = await callActivities(ctx, crm.answered);

    // Replayed as sent: acknowledged, nothing changes.
    const replay = await post(final.url, final.params, final.signature);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ status: 'ignored' });

    // Forged: another outcome under the old signature, or no signature at all.
    const forged = await post(final.url, { ...final.params, CallStatus: 'busy' }, final.signature);
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ detail: 'Invalid X-Twilio-Signature' });
    expect((await post(final.url, final.params)).status).toBe(401);
    // Signed for another URL (another call's key).
    const other = final.url.replace(/key=[^&]+/, 'key=x');
    expect((await post(other, final.params, final.signature)).status).toBe(401);

    // Genuine but stale (a captured request replayed long after): 403.
    const stale = { ...final.params, Timestamp: new Date(Date.now() - 3_600_000).toUTCString().replace('GMT', '+0000') };
    const staleRes = await post(final.url, stale, signTwilio(fake.authToken, final.url, stale));
    expect(staleRes.status).toBe(403);
    expect(((await staleRes.json()) as { detail: string }).detail).toMatch(/too old/);
    // Genuine, for a key no campaign call has: 404.
    const unknown = final.url.replace(/key=[^&]+/, 'key=unknown');
    expect((await post(unknown, final.params, signTwilio(fake.authToken, unknown, final.params))).status).toBe(404);
    // The Vapi door is closed while Twilio is the dialer.
    expect((await ctx.request('POST', '/telephony/vapi/events', { body: { message: { type: 'status-update' } } })).status).toBe(503);

    await dispatcherEnded(ctx, t); // nothing left that could change a call
    expect(await conversationsOf(ctx, run.campaign.id)).toEqual(before);
    expect(await callActivities(ctx, crm.answered)).toEqual(activitiesBefore);
  });
});

describe('Vapi dialer', () => {
  let fake: FakeVapi;
  let ctx: TestContext;
  const secret = 'vapi-server-secret-0123456789';
  const scripts: VapiScript[] = [
    'answered',
    'answered',
    'answered',
    'answered',
    'busy',
    'no-answer',
    'voicemail',
    'failed',
    'lost',
    'answered',
  ];
  const scriptOf = (i: number): VapiScript => scripts[i % 10]!;
  const numbers = Array.from({ length: CONTACTS }, (_, i) => numberOf(i, '41570'));

  beforeAll(async () => {
    fake = await startFakeVapi({ stepMs: 150, script: (to) => (numbers.includes(to) ? scriptOf(numbers.indexOf(to)) : 'answered') });
    ctx = await createTestContext({
      worker: true,
      env: {
        DIALER: 'vapi',
        PUBLIC_BASE_URL,
        VAPI_API_BASE_URL: fake.url,
        VAPI_API_KEY: fake.apiKey,
        VAPI_PHONE_NUMBER_ID: fake.phoneNumberId,
        VAPI_WEBHOOK_SECRET: secret,
        CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
        DIALER_RECONCILE_AFTER_SECONDS: '1',
      },
    });
    fake.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
  });
  afterAll(async () => {
    await ctx?.close();
    await fake?.close();
  });

  let t: CampaignTenant;
  let crm: Record<'answered' | 'voicemail' | 'lost', string>;
  let run: Awaited<ReturnType<typeof runCampaign>>;

  it('calls 200 contacts at a limit of 20, each once, with the published agent, and recovers lost reports', {
    timeout: 180_000,
  }, async () => {
    t = await tenantWithAgent(ctx);
    await publishAgent(ctx, t, 'Offer the spring demo to {{company}}.');
    crm = {
      answered: await crmContact(ctx, t, numbers[0]!),
      voicemail: await crmContact(ctx, t, numbers[6]!),
      lost: await crmContact(ctx, t, numbers[8]!),
    };
    run = await runCampaign(ctx, t, numbers);

    expect(fake.peak).toBeLessThanOrEqual(LIMIT); // never passed (reaching it depends on the machine's speed)
    expect(run.sampled).toBeLessThanOrEqual(LIMIT);
    for (const n of numbers) expect(fake.createsByNumber.get(n), n).toBe(1);
    expect(fake.requests.invalid).toBe(0);
    expect(fake.requests.unauthorized).toBe(0);

    const expected: Record<VapiScript, { contact: string; call: string }> = {
      answered: { contact: 'completed', call: 'completed' },
      lost: { contact: 'completed', call: 'completed' },
      busy: { contact: 'failed', call: 'busy' },
      'no-answer': { contact: 'failed', call: 'no_answer' },
      voicemail: { contact: 'failed', call: 'no_answer' },
      failed: { contact: 'failed', call: 'failed' },
    };
    const ids = new Map(
      (
        await ctx.deps.sql<
          { id: string; external_id: string }[]
        >`SELECT id, external_id FROM campaign_contacts WHERE campaign_id = ${run.campaign.id}`
      ).map((r) => [r.id, Number(r.external_id.slice(1))]),
    );
    for (const call of run.conversations) {
      const i = ids.get(call.contact_ref)!;
      const script = scriptOf(i);
      expect({ i, script, contact: run.byIndex.get(i)!.status, call: call.status }).toEqual({ i, script, ...expected[script] });
      if (script === 'lost') expect(call.outcome).toMatchObject({ reconciled: true, provider: 'vapi', transcript: expect.any(String) });
      if (script === 'voicemail') expect(call.outcome).toMatchObject({ disposition: 'voicemail', ended_reason: 'voicemail' });
    }

    // The assistant was rendered from the published version, the call's context and the server secret.
    const body = fake.bodies.find((b) => (b.customer as { number: string }).number === numbers[0])! as {
      assistant: {
        model: { messages: { content: string }[] };
        server: { url: string; headers: Record<string, string> };
        serverMessages: string[];
      };
      metadata: Record<string, unknown>;
    };
    expect(body.assistant.model.messages[0]!.content).toContain('Offer the spring demo');
    expect(body.assistant.model.messages[0]!.content).toContain('Contact number 0');
    expect(body.assistant.server).toEqual({ url: `${PUBLIC_BASE_URL}/telephony/vapi/events`, headers: { 'x-vapi-secret': secret } });
    expect(body.assistant.serverMessages).toEqual(['status-update', 'end-of-call-report']);
    expect(body.metadata).toMatchObject({
      idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}:[0-9a-f-]{36}:1$/),
      campaign_id: run.campaign.id,
    });
    expect(fake.messages.filter((m) => m.answered !== 200 && m.answered !== 202).map((m) => [m.answered, m.body.slice(0, 800)])).toEqual(
      [],
    );

    // Outcome, duration, recording, transcript and summary on the CRM contact.
    const [answered] = await callActivities(ctx, crm.answered);
    expect(answered).toMatchObject({
      type: 'call',
      direction: 'outbound',
      metadata: {
        outcome: 'completed',
        provider: 'vapi',
        recording_url: expect.stringMatching(/^https:\/\/storage\.vapi\.example\//),
        transcript: expect.stringContaining('AI: Hello'),
        summary: expect.stringContaining('follow-up'),
      },
    });
    expect((await callActivities(ctx, crm.voicemail))[0]).toMatchObject({ metadata: { outcome: 'voicemail' } });
    expect((await callActivities(ctx, crm.lost))[0]).toMatchObject({ metadata: { outcome: 'completed', transcript: expect.any(String) } });
  });

  it('fills exactly the limit while calls last, round after round, and never one more', { timeout: 180_000 }, async () => {
    const held = await tenantWithAgent(ctx);
    await publishAgent(ctx, held, 'Offer the spring demo to {{company}}.');
    await fillsTheLimitExactly(
      ctx,
      held,
      fake,
      Array.from({ length: 2 * LIMIT + 5 }, (_, i) => numberOf(i, '41591')),
    );
  });

  it('refuses a forged or stale server message, and a replayed one changes nothing', async () => {
    const report = fake.messages.find((m) => {
      const message = (JSON.parse(m.body) as { message: { type: string; call: { customer: { number: string } } } }).message;
      return message.type === 'end-of-call-report' && message.call.customer.number === numbers[0];
    })!;
    const post = (body: string, headers: Record<string, string>) =>
      appFetch(ctx)(report.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
    const before = await conversationsOf(ctx, run.campaign.id);
    const activitiesBefore = await callActivities(ctx, crm.answered);

    const replay = await post(report.body, { 'x-vapi-secret': secret });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ status: 'ignored' });

    const forged = await post(report.body, { 'x-vapi-secret': 'not-the-secret-at-all' });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ detail: 'Invalid x-vapi-secret' });
    expect((await post(report.body, {})).status).toBe(401);

    const parsed = JSON.parse(report.body) as { message: Record<string, unknown> };
    const stale = JSON.stringify({ message: { ...parsed.message, timestamp: Date.now() - 3_600_000 } });
    const staleRes = await post(stale, { 'x-vapi-secret': secret });
    expect(staleRes.status).toBe(403);
    expect(((await staleRes.json()) as { detail: string }).detail).toMatch(/too old/);

    const call = parsed.message.call as Record<string, unknown>;
    const unknown = JSON.stringify({ message: { ...parsed.message, call: { ...call, metadata: { idempotency_key: 'unknown' } } } });
    expect((await post(unknown, { 'x-vapi-secret': secret })).status).toBe(404);
    // The Twilio door is closed while Vapi is the dialer.
    expect(
      (await ctx.request('POST', '/telephony/twilio/status?key=x', { rawBody: 'a=b', headers: { 'X-Twilio-Signature': 'x' } })).status,
    ).toBe(503);

    await dispatcherEnded(ctx, t);
    expect(await conversationsOf(ctx, run.campaign.id)).toEqual(before);
    expect(await callActivities(ctx, crm.answered)).toEqual(activitiesBefore);
  });
});
