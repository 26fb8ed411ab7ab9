import { afterAll, beforeAll, expect, it } from 'vitest';
import { newChat, streamRequest, types } from '../support/ai-chat';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { freeze, startOwnTemporal, timed, type OwnTemporal } from '../support/faults';
import { newTenant, type Tenant } from '../support/identity';

// This file's own Temporal dev server is frozen (SIGSTOP): every AI chat request that needs it ends
// within its deadline with a 503 and records nothing; after the thaw the same request goes through.

const TEMPORAL_MS = 2000;
const SLACK_MS = 1500;

let temporal: OwnTemporal;
let ctx: TestContext;
let llm: FakeChatLlm;
let t: Tenant;
let thaw: (() => void) | undefined;

beforeAll(async () => {
  temporal = await startOwnTemporal();
  llm = await startFakeChatLlm();
  ctx = await createTestContext({
    worker: true,
    env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_REQUEST_TIMEOUT_MS: String(TEMPORAL_MS), LLM_BASE_URL: llm.baseUrl },
  });
  t = await newTenant(ctx, ['api:read', 'api:manage']);
}, 120_000);
afterAll(async () => {
  thaw?.();
  await ctx?.close();
  await temporal?.stop();
  await llm?.close();
});

const message = (id: string) => ({ message: { id, role: 'user', parts: [{ type: 'text', text: 'Rename it' }] } });

it('answers 503 within the deadline with nothing recorded when Temporal is frozen, and serves again after', {
  timeout: 120_000,
}, async () => {
  const account = (await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Frozen Co' } })).body.id;
  llm.script.push(
    { toolCalls: [{ name: 'update_account', arguments: { account_id: account, changes: { name: 'Thawed Co' } } }] },
    { text: 'Renamed.' },
  );
  const chatId = await newChat(ctx, t.session);
  const first = await streamRequest(ctx, 'POST', `/ai/chats/${chatId}/messages`, t.session, message('m1'));
  const { approvalId } = first.chunks.find((c) => c.type === 'tool-approval-request') as { approvalId: string };
  const idle = await newChat(ctx, t.session);

  thaw = freeze(temporal.pid);
  const [answer, send, stop] = await Promise.all([
    timed(() => ctx.request('POST', `/ai/chats/${chatId}/approvals/${approvalId}`, { token: t.session, body: { approved: true } })),
    timed(() => ctx.request('POST', `/ai/chats/${idle}/messages`, { token: t.session, body: message('m2') })),
    timed(() => ctx.request('POST', `/ai/chats/${chatId}/stop`, { token: t.session })),
  ]);
  for (const r of [answer, send, stop]) {
    expect(r.value.status).toBe(503);
    expect(r.value.body).toEqual({ detail: expect.stringContaining('Workflow engine unavailable') });
    expect(r.ms).toBeLessThan(TEMPORAL_MS + SLACK_MS);
  }
  // Reads need no Temporal; nothing of the refused requests was recorded.
  const chat = (await ctx.request('GET', `/ai/chats/${chatId}`, { token: t.session })).body;
  expect(chat.approvals[0].status).toBe('pending');
  expect((await ctx.request('GET', `/ai/chats/${idle}`, { token: t.session })).body).toMatchObject({ active_turn_id: null, messages: [] });
  const [turn] = await ctx.deps.sql`SELECT stop_requested FROM ai_chat_turns WHERE chat_id = ${chatId}`;
  expect(turn!.stop_requested).toBe(false);
  expect((await ctx.request('GET', `/accounts/${account}`, { token: t.session })).body.name).toBe('Frozen Co');

  thaw();
  thaw = undefined;
  const resumed = await streamRequest(ctx, 'POST', `/ai/chats/${chatId}/approvals/${approvalId}`, t.session, { approved: true });
  expect(resumed.status).toBe(200);
  expect(types(resumed.chunks)).toContain('tool-output-available');
  expect((await ctx.request('GET', `/accounts/${account}`, { token: t.session })).body.name).toBe('Thawed Co');
});
