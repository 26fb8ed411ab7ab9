import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { listen } from '../../server/listen';
import { freePort } from '../../dev-servers/ports';
import { messageFrom, newChat, parseStream, streamRequest, types } from '../support/ai-chat';
import { waitFor } from '../support/campaigns';
import { startChildWorker, startInProcessWorker, stopInProcessWorker, type InProcessWorker } from '../support/durability-workers';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, type Tenant } from '../support/identity';

// A turn outlives what may die around it: the client (disconnect), the API process (restart), the
// worker (kill -9), and it ends when asked (stop) or when its approval is never answered (expiry).

let ctx: TestContext;
let llm: FakeChatLlm;
let t: Tenant;
let child: ChildProcess | undefined;
let inProcess: InProcessWorker | undefined;
/** The settings of the context, and of the worker process the kill test starts. */
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startFakeChatLlm();
  env = { AI_CHAT_APPROVAL_TTL_SECONDS: '3', AI_CHAT_KEEPALIVE_MS: '300', LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat' };
  ctx = await createTestContext({ env });
  t = await newTenant(ctx, ['api:read', 'api:manage']);
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await stopInProcessWorker(inProcess);
  await ctx?.close();
  await llm?.close();
});
beforeEach(async (test) => {
  llm.script = [];
  // Every test but the worker kill runs on a worker in this process (the kill test starts it after the kill).
  if (!test.task.name.startsWith('a worker killed')) await ensureInProcessWorker();
});

async function ensureInProcessWorker() {
  inProcess ??= await startInProcessWorker(ctx);
}

/** An SSE response read as it arrives. */
async function open(url: string, init: RequestInit) {
  const abort = new AbortController();
  const res = await fetch(url, { ...init, signal: abort.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let raw = '';
  let ended = false;
  const pump = async (until: (raw: string) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!ended && !until(raw)) {
      if (Date.now() > deadline) throw new Error(`stream did not reach the expected point: ${raw.slice(-500)}`);
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) ended = true;
      else raw += value;
    }
    return raw;
  };
  return {
    res,
    pump,
    rest: () => pump(() => false, 120_000),
    abort: () => abort.abort(),
    get raw() {
      return raw;
    },
  };
}

const message = (text: string) => ({
  message: { id: `u-${Math.random().toString(36).slice(2)}`, role: 'user', parts: [{ type: 'text', text }] },
});
const post = (base: string, chatId: string, text: string) =>
  open(`${base}/ai/chats/${chatId}/messages`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${t.session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(message(text)),
  });
const deltas = (raw: string) => (raw.match(/"type":"text-delta"/g) ?? []).length;
const lastId = (raw: string) => Math.max(...[...raw.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));

const idle = (chatId: string) =>
  waitFor(
    async () => {
      const chat = (await ctx.request('GET', `/ai/chats/${chatId}`, { token: t.session })).body;
      return !chat.active_turn_id && chat;
    },
    90_000,
    `the turn of chat ${chatId} to end`,
  );

const textOf = (m: { parts: { type: string; text?: string }[] }) =>
  m.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('|');

describe('a turn survives', () => {
  it('a worker killed mid-answer: the call is redone, the cut-off text closed and left out of the stored answer', {
    timeout: 120_000,
  }, async () => {
    child = await startChildWorker(ctx, env);
    llm.script.push({ text: 'one two three four five six', holdAfterTokens: 3 }, { text: 'The whole answer after the restart.' });
    const chatId = await newChat(ctx, t.session);
    const stream = await post(ctx.baseUrl, chatId, 'Tell me');
    await llm.held();
    await stream.pump((raw) => deltas(raw) >= 3);
    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    child = undefined;
    await ensureInProcessWorker();
    const raw = await stream.rest();
    const chunks = await parseStream(raw);
    expect(types(chunks)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'text-start',
      ...Array(6).fill('text-delta'),
      'text-end',
      'finish-step',
      'finish',
    ]);
    const live = await messageFrom(chunks);
    expect(textOf(live)).toBe('one two three |The whole answer after the restart.');
    const chat = await idle(chatId);
    expect(textOf(chat.messages[1])).toBe('The whole answer after the restart.');
  });

  it('an API restart: the client resumes from its Last-Event-ID on another API process and misses nothing', async () => {
    const port = await freePort();
    const { app } = createApp(ctx.deps);
    const other: Server = await listen(app, port, '127.0.0.1');
    llm.script.push({ text: 'alpha beta gamma delta epsilon', holdAfterTokens: 2 });
    const chatId = await newChat(ctx, t.session);
    const stream = await post(`http://127.0.0.1:${port}`, chatId, 'Go');
    await llm.held();
    const before = await stream.pump((raw) => deltas(raw) >= 2);
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
    llm.release();
    const seen = before.slice(0, before.lastIndexOf('\n\n') + 2);
    const resumed = await streamRequest(ctx, 'GET', `/ai/chats/${chatId}/stream`, t.session, undefined, {
      'Last-Event-ID': String(lastId(seen)),
    });
    expect(resumed.status).toBe(200);
    expect(resumed.ids[0]).toBe(lastId(seen) + 1);
    const all = [...(await parseStream(seen)), ...resumed.chunks];
    const answer = await messageFrom(all);
    expect(textOf(answer)).toBe('alpha beta gamma delta epsilon');
    const chat = await idle(chatId);
    expect(chat.messages[1]).toEqual(answer);
    expect((await ctx.request('GET', `/ai/chats/${chatId}/stream`, { token: t.session })).status).toBe(204);
  });

  it('a client that goes away: the turn goes on; a reader without Last-Event-ID gets the segment from its start, with keep-alives', async () => {
    llm.script.push({ text: 'still here after you left', holdAfterTokens: 1 });
    const chatId = await newChat(ctx, t.session);
    const stream = await post(ctx.baseUrl, chatId, 'Go');
    await llm.held();
    await stream.pump((raw) => deltas(raw) >= 1);
    stream.abort();
    const replay = await open(`${ctx.baseUrl}/ai/chats/${chatId}/stream`, { headers: { Authorization: `Bearer ${t.session}` } });
    await replay.pump((raw) => raw.includes(': keep-alive'));
    llm.release();
    const raw = await replay.rest();
    const chunks = await parseStream(raw);
    expect(types(chunks)[0]).toBe('start');
    expect(textOf(await messageFrom(chunks))).toBe('still here after you left');
    expect(textOf((await idle(chatId)).messages[1])).toBe('still here after you left');
  });
});

describe('a turn ends', () => {
  it('when stopped: the stream closes its text and finishes; the turn is stopped', async () => {
    llm.script.push({ text: 'a b c d e f g', holdAfterTokens: 2 });
    const chatId = await newChat(ctx, t.session);
    const stream = await post(ctx.baseUrl, chatId, 'Go');
    await llm.held();
    await stream.pump((raw) => deltas(raw) >= 2);
    const stop = await ctx.request('POST', `/ai/chats/${chatId}/stop`, { token: t.session });
    expect(stop.status).toBe(202);
    const chunks = await parseStream(await stream.rest());
    expect(types(chunks)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(chunks.at(-1)).toMatchObject({ finishReason: 'other' });
    await idle(chatId);
    const [turn] = await ctx.deps.sql`SELECT status FROM ai_chat_turns WHERE chat_id = ${chatId}`;
    expect(turn!.status).toBe('stopped');
  });

  it('when its approval is never answered: it expires, and an answer after that is a conflict', async () => {
    const account = (await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Expiring Co' } })).body.id;
    llm.script.push({ toolCalls: [{ name: 'update_account', arguments: { account_id: account, changes: { name: 'Renamed' } } }] });
    const chatId = await newChat(ctx, t.session);
    const first = await streamRequest(ctx, 'POST', `/ai/chats/${chatId}/messages`, t.session, message('Rename'));
    const { approvalId } = first.chunks.find((c) => c.type === 'tool-approval-request') as { approvalId: string };
    const chat = await idle(chatId);
    expect(chat.approvals[0]).toMatchObject({ id: approvalId, status: 'expired' });
    expect((chat.messages[1] as UIMessage).parts.find((p) => p.type === 'tool-update_account')).toMatchObject({ state: 'output-denied' });
    const late = await ctx.request('POST', `/ai/chats/${chatId}/approvals/${approvalId}`, { token: t.session, body: { approved: true } });
    expect(late.status).toBe(409);
    expect((await ctx.request('GET', `/accounts/${account}`, { token: t.session })).body.name).toBe('Expiring Co');
  });
});
