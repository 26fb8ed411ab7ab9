import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as conversations from '../../db/conversations';
import { createChatModel } from '../../platform/adapters/llm/chat-model-factory';
import { startReplayWorker } from '../../voice/replay/worker';
import { localSpeechStack } from '../../voice/speech/local';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type ChatRequestBody, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// Replays: a conversation recorded through the engine (dual-channel recording, a webhook tool) run again
// through a second version whose model answers otherwise; the engine's replay worker hears the caller's
// recorded turns and answers them, tools from the recorded results unless asked to run.

const { url: speechUrl, describe: needsSpeech } = speechServer();

let ctx: TestContext;
let llm: FakeChatLlm;
let engine: TestEngine;
let replayWorker: { stop(): Promise<void> };
let t: Tenant;
let orgId: string;
let agentId: string;
let recordedId: string;
let hook: { server: http.Server; url: string; calls: unknown[] };

const call = (method: string, path: string, body?: unknown, token = t.session) => ctx.request(method, path, { token, body });
const lastMessage = (r: ChatRequestBody) => r.messages.at(-1)!;
const words = (text: string | null | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

async function finished(path: string) {
  return waitFor(
    async () => {
      const res = await call('GET', path);
      expect(res.status, res.text).toBe(200);
      return ['completed', 'failed'].includes(res.body.status) && res.body.status !== 'running' ? res.body : undefined;
    },
    90_000,
    `${path} finished`,
  );
}

const tool = () => ({
  type: 'webhook',
  name: 'book_visit',
  description: 'Book a visit',
  url: hook.url,
  parameters: { type: 'object', properties: { day: { type: 'string' } } },
  speak_while_waiting: 'Let me book that for you.',
});

needsSpeech('conversation replays', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    const calls: unknown[] = [];
    const server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        calls.push(data ? JSON.parse(data) : null);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'booked', slot: 'Tuesday at ten' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hook = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/book`, calls };
    ctx = await createTestContext({
      worker: true,
      env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat', WEB_FETCH_ALLOW_PRIVATE: 'true' },
    });
    t = await newTenant(ctx);
    orgId = await orgUuid(ctx, t);
    engine = await startTestEngine(ctx, speechUrl);
    replayWorker = await startReplayWorker({
      ...ctx.deps,
      speech: await localSpeechStack(speechUrl),
      model: createChatModel(ctx.config, ctx.deps.logger),
      engineId: 'replay-test',
    });

    // One real conversation through the engine, recorded on two channels, with a webhook tool call.
    const agent = await call('POST', '/core/agents', { name: 'Front desk' });
    agentId = agent.body.id;
    const config = {
      instructions: 'You are the front desk of Acme Parts. Book visits.',
      first_message: 'Hello, this is Acme Parts. How can I help you today?',
      recording: { enabled: true, channels: 'dual' },
      tools: [tool()],
    };
    expect((await call('POST', `/core/agents/${agentId}/versions`, { config })).status).toBe(200);
    expect((await call('POST', `/core/agents/${agentId}/versions/1/publish`, {})).status).toBe(200);
    llm.script = [
      { toolCalls: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] },
      (r) => ({ text: `Done: ${JSON.parse(lastMessage(r).content ?? '{}').result}` }),
    ];
    const token = await engine.token({ org: orgId, agent: agentId, channel: 'twilio' });
    const caller = await SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });
    await caller.waitForSpeech({ timeoutMs: 20_000 });
    await caller.say('Can I come in on Tuesday?');
    await waitFor(async () => (hook.calls.length ? true : undefined), 20_000, 'the webhook called');
    await waitFor(
      async () => {
        const [row] = await ctx.deps.sql`SELECT count(*)::int AS n FROM conversation_turns WHERE org_id = ${orgId} AND role = 'agent'`;
        return row!.n >= 2 ? true : undefined;
      },
      20_000,
      'the answer spoken',
    );
    await caller.hangUp();
    const detail = await finishedConversation(ctx, t.session, agentId);
    recordedId = detail.id;
    expect(detail.has_recording).toBe(true);
    expect(detail.recording_channels).toBe('dual');
    // A second version whose model answers otherwise.
    expect((await call('POST', `/core/agents/${agentId}/versions`, { config: { ...config, instructions: 'Be brief.' } })).status).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await replayWorker?.stop();
    await engine?.close();
    await ctx?.close();
    await llm?.close();
    hook?.server.close();
  });

  it('replays the recorded call through the second version: the caller heard from the recording, tools from the recorded results', async () => {
    const before = hook.calls.length;
    llm.requests = [];
    llm.script = [
      { toolCalls: [{ name: 'book_visit', arguments: { day: 'Tuesday' } }] },
      (r) => ({ text: `Your visit is confirmed: ${JSON.parse(lastMessage(r).content ?? '{}').result}` }),
    ];
    const started = await call('POST', `/core/agents/${agentId}/conversations/${recordedId}/replays`, { version: 2 });
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({
      conversation_id: recordedId,
      version: 2,
      call_tools: false,
      status: 'queued',
      counts: null,
      turns: [],
    });
    const replay = await finished(`/core/agents/${agentId}/replays/${started.body.id}`);
    expect(replay.status, replay.error).toBe('completed');
    expect(replay.counts).toEqual({ turns: 2, changed: 1 });
    const [opening, answer] = replay.turns;
    // The opening is the same first message: unchanged.
    expect(opening.caller).toBeNull();
    expect(opening.changed).toBe(false);
    // The caller's turn heard again from its slice of the recording's caller channel.
    expect(answer.caller.source).toBe('recording');
    expect(words(answer.caller.heard)).toMatch(/tuesday/);
    expect(answer.timings.stt_ms).toBeGreaterThanOrEqual(0);
    expect(words(answer.old.text)).toMatch(/done/);
    expect(answer.new.text).toMatch(/Your visit is confirmed/);
    expect(answer.changed).toBe(true);
    expect(answer.old.tools).toEqual([{ name: 'book_visit', input: { day: 'Tuesday' }, ok: true }]);
    expect(answer.new.tools).toEqual([{ name: 'book_visit', input: { day: 'Tuesday' }, ok: true, source: 'recorded' }]);
    // The model read the recorded result; the receiver saw no second call.
    expect(answer.new.text).toMatch(/booked/);
    expect(hook.calls.length).toBe(before);
    // The same prompt as a live call: the second version's instructions, the recognized words as the user's.
    expect(llm.requests[0]!.messages[0]!.content).toMatch(/Be brief/);
    expect(words(lastMessage(llm.requests[0]!).content)).toMatch(/tuesday/);
    expect(replay.timings.caller_audio).toEqual({ recording: 1, synthesized: 0, keys: 0 });
    expect(replay.timings.total_ms).toBeGreaterThan(0);
  }, 120_000);

  it('answers a call the recording has no result for as unavailable, and runs tools for real when asked', async () => {
    const before = hook.calls.length;
    llm.script = [{ toolCalls: [{ name: 'book_visit', arguments: { day: 'Friday' } }] }, { text: 'Friday it is.' }];
    const unmatched = await call('POST', `/core/agents/${agentId}/conversations/${recordedId}/replays`, { version: 2 });
    const first = await finished(`/core/agents/${agentId}/replays/${unmatched.body.id}`);
    expect(first.turns[1].new.tools).toEqual([{ name: 'book_visit', input: { day: 'Friday' }, ok: false, source: 'unavailable' }]);
    expect(lastMessage(llm.requests.at(-1)!).content).toMatch(/unavailable in replay/);
    expect(hook.calls.length).toBe(before);

    llm.script = [{ toolCalls: [{ name: 'book_visit', arguments: { day: 'Friday' } }] }, { text: 'Friday it is.' }];
    const live = await call('POST', `/core/agents/${agentId}/conversations/${recordedId}/replays`, { version: 2, call_tools: true });
    expect(live.status, live.text).toBe(202);
    const second = await finished(`/core/agents/${agentId}/replays/${live.body.id}`);
    expect(second.status, second.error).toBe('completed');
    expect(second.turns[1].new.tools).toEqual([{ name: 'book_visit', input: { day: 'Friday' }, ok: true, source: 'called' }]);
    expect(hook.calls.slice(before)).toEqual([{ day: 'Friday' }]);
  }, 120_000);

  it("replays the agent's last 2 ended conversations as a batch; one with no recording is spoken from its text", async () => {
    // A second ended conversation with no recording: its caller turn is synthesized by the engine's voice.
    const row = await conversations.insertConversation(ctx.deps.sql, {
      org_id: orgId,
      agent_id: agentId,
      agent_version: 1,
      channel: 'widget',
      direction: 'inbound',
      call_id: null,
      phone_number: null,
      contact_id: null,
      engine_id: 'voice-test',
    });
    const turns = [
      { role: 'agent' as const, text: 'Hello, this is Acme Parts. How can I help you today?' },
      { role: 'caller' as const, text: 'What time do you open on Monday?' },
      { role: 'agent' as const, text: 'We open at nine.' },
    ];
    for (const [seq, turn] of turns.entries())
      await conversations.insertTurn(ctx.deps.sql, orgId, row.id, {
        seq,
        ...turn,
        heard_text: null,
        interrupted: false,
        started_ms: null,
        ended_ms: null,
        audit: {},
      });
    await conversations.endConversation(ctx.deps.sql, orgId, row.id, {
      status: 'completed',
      end_reason: 'caller_hung_up',
      recording_key: null,
      recording_channels: null,
      recording_retention_days: null,
    });
    llm.script = [];
    llm.fallback = { text: 'We open at nine.' };
    const batch = await call('POST', `/core/agents/${agentId}/replays`, { version: 2, last: 2 });
    expect(batch.status, batch.text).toBe(202);
    expect(batch.body.replays.map((r: { conversation_id: string }) => r.conversation_id)).toEqual([row.id, recordedId]);
    const done = await finished(`/core/agents/${agentId}/replay-batches/${batch.body.id}`);
    expect(done.status).toBe('completed');
    expect(done.summary).toMatchObject({ replays: 2, completed: 2, failed: 0, turns: 4 });
    const synthetic = await call('GET', `/core/agents/${agentId}/replays/${done.replays[0].id}`);
    expect(synthetic.body.turns[1].caller.source).toBe('synthesized');
    expect(words(synthetic.body.turns[1].caller.heard)).toMatch(/open|monday/);
    expect(synthetic.body.counts).toEqual({ turns: 2, changed: 0 });
    // The recorded call answered "we open at nine" instead of booking: its answer changed.
    expect(done.replays[1].counts).toEqual({ turns: 2, changed: 1 });
    expect(done.summary.changed).toBe(1);
    expect(done.summary.conversations_changed).toBe(1);
  }, 120_000);

  it('refuses what cannot be replayed: scopes, other organizations, unknown versions, conversations not ended', async () => {
    const reader = await ctx.session({ sub: t.user, org_id: t.org, org_ids: [t.org], permissions: ['agents:read'] });
    const path = `/core/agents/${agentId}/conversations/${recordedId}/replays`;
    expect((await call('POST', path, { version: 2 }, reader)).status).toBe(403);
    expect((await call('POST', `/core/agents/${agentId}/replays`, { version: 2, last: 1 }, reader)).status).toBe(403);
    const [replay] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM conversation_replays WHERE org_id = ${orgId} LIMIT 1`;
    expect((await call('GET', `/core/agents/${agentId}/replays/${replay!.id}`, undefined, reader)).status).toBe(200);
    // Another organization's agent, conversation and replay are not found.
    const other = await newTenant(ctx);
    expect((await call('POST', path, { version: 2 }, other.session)).status).toBe(404);
    expect((await call('GET', `/core/agents/${agentId}/replays/${replay!.id}`, undefined, other.session)).status).toBe(404);
    expect((await call('POST', `/core/agents/${agentId}/replays`, { version: 2, last: 1 }, other.session)).status).toBe(404);
    // Unknown version; a conversation still in progress.
    const unknown = await call('POST', path, { version: 9 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Version not found');
    const live = await conversations.insertConversation(ctx.deps.sql, {
      org_id: orgId,
      agent_id: agentId,
      agent_version: 1,
      channel: 'widget',
      direction: 'inbound',
      call_id: null,
      phone_number: null,
      contact_id: null,
      engine_id: 'voice-test',
    });
    const notEnded = await call('POST', `/core/agents/${agentId}/conversations/${live.id}/replays`, { version: 2 });
    expect(notEnded.status).toBe(409);
    // Validation: last within 1..100, no unknown fields; nothing is written.
    const count = async () => (await ctx.deps.sql`SELECT count(*)::int AS n FROM conversation_replays WHERE org_id = ${orgId}`)[0]!.n;
    const n = await count();
    expect((await call('POST', `/core/agents/${agentId}/replays`, { version: 2, last: 101 })).status).toBe(422);
    expect((await call('POST', `/core/agents/${agentId}/replays`, { version: 2, last: 0 })).status).toBe(422);
    expect((await call('POST', path, { version: 2, extra: true })).status).toBe(422);
    expect(await count()).toBe(n);
    // A batch of an agent with no ended conversation.
    const fresh = await call('POST', '/core/agents', { name: 'New desk' });
    await call('POST', `/core/agents/${fresh.body.id}/versions`, { config: { instructions: 'Hi.' } });
    expect((await call('POST', `/core/agents/${fresh.body.id}/replays`, { version: 1, last: 5 })).status).toBe(409);
  }, 60_000);
});
