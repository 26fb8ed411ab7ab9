import { afterAll, beforeAll, expect, it } from 'vitest';
import { RESUME_LINE } from '../../domain/voice-resume';
import { answerInboundCall } from '../../services/conversations/inbound';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { startFakeTwilio, type FakeTwilio, twilioDialerSettings } from '../support/fake-twilio';
import { newTenant, type Tenant } from '../support/identity';
import { PUBLIC_BASE_URL } from '../support/public-base';
import { startChildEngine, type ChildEngine } from '../support/voice/child-engine';
import { speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';
import { WidgetClient } from '../support/voice/widget-client';

// Calls move between engines. SIGTERM drains an engine: its health answers 503 at once, it takes no new
// session, and after VOICE_DRAIN_SECONDS its live calls move instead of ending (the Twilio call is streamed
// again through <Connect action>, the widget's page is told `move` and resumes) and are marked as moving, so
// no peer's watch moves them a second time. A widget whose engine is killed mid-answer resumes with the
// engine's resume token on another engine: the same conversation, its turns, the resume line; a resume is
// refused for a conversation a live engine holds, from another origin, for an ended conversation, and once
// the widget no longer allows the origin.

const { url: speechUrl, describe: needsSpeech } = speechServer();
const VOICE_PUBLIC_URL = 'wss://voice.test.example';
const SITE = 'https://shop.example';
const LONG_ANSWER =
  'On Saturdays we open at nine in the morning and close at two in the afternoon, and the parking lot behind the store is free for customers all day long.';

let ctx: TestContext;
let llm: FakeChatLlm;
let twilio: FakeTwilio;
let drained: ChildEngine;
let killed: ChildEngine;
let second: TestEngine;
let t: Tenant;
let orgId: string;

const httpOf = (engine: { url: string }) => engine.url.replace(/^ws/, 'http');

async function widgetAgent(name: string) {
  const call = (method: string, p: string, body?: unknown) => ctx.request(method, p, { token: t.session, body });
  const agent = (await call('POST', '/core/agents', { name })).body as { id: string };
  const config = { instructions: 'You are the front desk of Acme Parts.', first_message: 'Hello, Acme Parts here.' };
  expect((await call('POST', `/core/agents/${agent.id}/versions`, { config })).status).toBe(200);
  expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {})).status).toBe(200);
  const widget = await call('POST', `/core/agents/${agent.id}/widgets`, { name: 'Site bubble', allowed_origins: [SITE] });
  expect(widget.status, JSON.stringify(widget.body)).toBe(200);
  return { agentId: agent.id, widgetId: widget.body.id as string };
}

async function widgetToken(widgetId: string): Promise<string> {
  const res = await ctx.request('POST', `/widgets/${widgetId}/sessions`, { headers: { Origin: SITE } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.token as string;
}

/** The conversation once its workflow wrote the summary (it has ended). */
const summarized = (agentId: string, id: string) =>
  waitFor(
    async () => {
      const res = await ctx.request('GET', `/core/agents/${agentId}/conversations/${id}`, { token: t.session });
      return res.body.summary ? res.body : undefined;
    },
    30_000,
    'the conversation summarized',
  );

needsSpeech('calls move between engines', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    twilio = await startFakeTwilio();
    const env = {
      LLM_BASE_URL: llm.baseUrl,
      LLM_MODEL: 'fake-chat',
      ...twilioDialerSettings(twilio),
      PUBLIC_BASE_URL,
      VOICE_PUBLIC_URL,
    };
    ctx = await createTestContext({ worker: true, env });
    twilio.reachAppAt(PUBLIC_BASE_URL, ctx.baseUrl);
    t = await newTenant(ctx);
    orgId = (await ctx.request('GET', '/me', { token: t.session })).body.organization.id;
    [drained, killed, second] = await Promise.all([
      startChildEngine(ctx, { ...env, VOICE_DRAIN_SECONDS: '1' }, speechUrl),
      startChildEngine(ctx, env, speechUrl),
      startTestEngine(ctx, speechUrl),
    ]);
  }, 180_000);

  afterAll(async () => {
    drained?.kill();
    killed?.kill();
    await second?.close();
    await ctx?.close();
    await llm?.close();
    await twilio?.close();
  });

  it('drains on SIGTERM: 503 at once, no new session, the Twilio call and the widget move to another engine, and it exits', {
    timeout: 120_000,
  }, async () => {
    const { agentId, widgetId } = await widgetAgent('Drained desk');
    const call = twilio.addInboundCall({ from: '+14155550181', to: '+14155550100' });
    twilio.setTwiml(
      call.sid,
      await answerInboundCall(ctx.deps, { orgId, agentId, version: 1, channel: 'twilio', callSid: call.sid, from: call.from, to: call.to }),
    );
    const caller = await SimulatedCaller.connect({
      url: drained.url,
      token: twilio.streamOf(call.sid)!.parameters.token!,
      callSid: call.sid,
      accountSid: call.accountSid,
      speechBaseUrl: speechUrl,
    });
    const page = new WidgetClient(SITE, speechUrl);
    const ready = await page.connect(drained.url, await widgetToken(widgetId));
    if (!('conversation_id' in ready)) throw new Error(`the widget was refused (${ready.refused})`);
    await caller.hear({ timeoutMs: 30_000, transcribe: false });
    await page.waitForAgent(/acme/i, 30_000);

    const exited = new Promise<number | null>((resolve) => drained.proc.once('exit', resolve));
    drained.proc.kill('SIGTERM');
    const health = await waitFor(
      async () => {
        const res = await fetch(`${httpOf(drained)}/health`, { signal: AbortSignal.timeout(1000) });
        return res.status === 503 ? res.json() : undefined;
      },
      1_500,
      'health 503',
    );
    expect(health).toMatchObject({ status: 'draining', draining: true });
    // No new session while draining.
    expect(await new WidgetClient(SITE, speechUrl).connect(drained.url, await widgetToken(widgetId))).toEqual({ refused: 1006 });

    // After the drain's second the widget is told to move, and resumes on the other engine.
    expect(await page.closed()).toBe(1012);
    expect(page.frames.map((f) => f.type)).toContain('move');
    const movedAt = performance.now();
    const resumed = await page.resume(second.url);
    expect(resumed.ready.conversation_id).toBe(ready.conversation_id);
    await page.waitForAgent(new RegExp(RESUME_LINE.slice(0, 12)), 30_000, movedAt);

    // The Twilio call's stream closed with its conversation marked as moving, so no watch moves it again
    // once the drained engine's beat row is gone; Twilio's <Connect action> streams it to the other engine.
    await caller.closed;
    expect(await exited).toBe(0);
    const [row] = await ctx.deps.sql<{ id: string; engine_id: string }[]>`
      SELECT id, engine_id FROM conversations WHERE org_id = ${orgId} AND call_id = ${call.sid}`;
    expect(row!.engine_id).toBe(`moving:voice-child-${drained.proc.pid}`);
    expect((await ctx.deps.sql`SELECT 1 FROM voice_engines WHERE id = ${`voice-child-${drained.proc.pid}`}`).length).toBe(0);
    // Long untouched: the other engine's watch (every second) would take it now, were it not marked.
    await ctx.deps.sql`UPDATE conversations SET updated_at = now() - interval '10 seconds' WHERE id = ${row!.id}`;
    await new Promise((r) => setTimeout(r, 2_500));
    expect(twilio.updates.filter((u) => u.callSid === call.sid)).toEqual([]);
    const next = await twilio.connectAction(call.sid);
    expect(next.stream?.url).toBe(`${VOICE_PUBLIC_URL}/twilio/media-stream`);
    const back = await SimulatedCaller.connect({
      url: second.url,
      token: next.stream!.parameters.token!,
      callSid: call.sid,
      accountSid: call.accountSid,
      speechBaseUrl: speechUrl,
    });
    expect((await back.hear({ timeoutMs: 30_000 })).text?.toLowerCase()).toMatch(/back|lost/);

    await back.hangUp();
    page.hangUp();
    for (const id of [row!.id, ready.conversation_id]) {
      const detail = await summarized(agentId, id);
      expect(detail.status).toBe('completed');
      expect(detail.turns.map((turn: { text: string }) => turn.text)).toEqual(
        expect.arrayContaining(['Hello, Acme Parts here.', RESUME_LINE]),
      );
    }
  });

  it('resumes a widget whose engine is killed mid-answer on another engine; refuses held, foreign, ended and disallowed resumes', {
    timeout: 150_000,
  }, async () => {
    const { agentId, widgetId } = await widgetAgent('Widget desk');
    llm.script = [{ text: LONG_ANSWER, delayMs: 40 }, { text: 'We are open from nine to two on Saturdays.' }];
    const page = new WidgetClient(SITE, speechUrl);
    const ready = await page.connect(killed.url, await widgetToken(widgetId));
    if (!('conversation_id' in ready)) throw new Error(`the widget was refused (${ready.refused})`);
    expect(ready.resume_token).toEqual(expect.any(String));
    await page.waitForAgent(/acme/i, 30_000);
    const saidAt = performance.now();
    await page.say('What are your opening hours on Saturday?');
    // The answer is playing: the engine dies under it.
    await page.firstAudioAfter(saidAt + 1, 60_000);
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = performance.now();
    killed.kill();
    expect(await page.closed()).toBe(1006);

    const { ready: back, refused } = await page.resume(second.url);
    const firstAudio = await page.firstAudioAfter(killedAt, 30_000);
    console.log(
      `widget: silence from the kill to the first audio after the resume: ${Math.round(firstAudio - killedAt)} ms (refused first: ${refused.join(',') || 'none'})`,
    );
    expect(back.conversation_id).toBe(ready.conversation_id);
    // A killed engine's database connection goes with it: the conversation is free at once, not after its
    // beat goes stale (3 s, which would refuse the first four tries).
    expect(refused.filter((code) => code === 4409).length).toBeLessThanOrEqual(1);
    await page.waitForAgent(new RegExp(RESUME_LINE.slice(0, 12)), 30_000, killedAt);
    await page.waitForAgent(/nine to two/, 30_000, killedAt);

    // Held by a live engine: refused; from another origin: refused.
    expect(await new WidgetClient(SITE, speechUrl).connect(second.url, page.resumeToken!)).toEqual({ refused: 4409 });
    expect(await new WidgetClient('https://elsewhere.example', speechUrl).connect(second.url, page.resumeToken!)).toEqual({
      refused: 4401,
    });

    const token = page.resumeToken!;
    page.hangUp();
    const detail = await summarized(agentId, ready.conversation_id);
    expect(detail.channel).toBe('widget');
    const turns = detail.turns as { seq: number; role: string; text: string }[];
    expect(turns[0]).toMatchObject({ role: 'agent', text: 'Hello, Acme Parts here.' });
    expect(turns.filter((turn) => turn.role === 'caller')).toHaveLength(1);
    expect(turns.map((turn) => turn.text)).toEqual(expect.arrayContaining([RESUME_LINE, 'We are open from nine to two on Saturdays.']));
    expect(new Set(turns.map((turn) => turn.seq)).size).toBe(turns.length);

    // Ended: refused (410); and once the widget no longer allows the origin, refused before anything (403).
    expect(await new WidgetClient(SITE, speechUrl).connect(second.url, token)).toEqual({ refused: 4410 });
    const patched = await ctx.request('PATCH', `/core/agents/${agentId}/widgets/${widgetId}`, {
      token: t.session,
      body: { allowed_origins: ['https://other.example'] },
    });
    expect(patched.status).toBe(200);
    expect(await new WidgetClient(SITE, speechUrl).connect(second.url, token)).toEqual({ refused: 4403 });
  });
});
