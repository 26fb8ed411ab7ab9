import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../platform/tools';
import { messageFrom, newChat, parseStream, types } from '../support/ai-chat';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';

// One turn end to end on the local model (SmolLM2-135M-Instruct run in the worker by node-llama-cpp,
// tool calls under a JSON grammar): no LLM_BASE_URL. It prints the time to the first token and the
// tokens per second the stream delivered (docs/performance.md).

const modelFile = path.join(PROJECT_ROOT, '.tools', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const installed = fs.existsSync(modelFile);
if (!installed) console.warn('AI chat local-model test skipped: run `npm run tools llm` to install the model');

let ctx: TestContext;
let t: Tenant;
beforeAll(async () => {
  if (!installed) return;
  ctx = await createTestContext({ worker: true, env: { AI_CHAT_MAX_STEPS: '2', LLM_CALL_TIMEOUT_MS: '120000' } });
  t = await newTenant(ctx, ['api:read', 'api:manage']);
  await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Acme Robotics', industry: 'manufacturing' } });
});
afterAll(() => ctx?.close());

it.skipIf(!installed)('answers a turn with the local model, streamed in the UI message stream protocol', { timeout: 300_000 }, async () => {
  const chatId = await newChat(ctx, t.session);
  const started = performance.now();
  let firstFrame = 0;
  const stepStarts: number[] = [];
  let firstToken = 0;
  const res = await fetch(`${ctx.baseUrl}/ai/chats/${chatId}/messages`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${t.session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Say hello to the sales team in one sentence.' }] },
    }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let raw = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const now = performance.now();
    for (const type of value.match(/"type":"[a-z-]+"/g) ?? []) {
      if (type === '"type":"start-step"') stepStarts.push(now);
      if (!firstFrame && type === '"type":"start-step"') firstFrame = now;
      if (!firstToken && type === '"type":"text-delta"') firstToken = now;
    }
    raw += value;
  }
  const ended = performance.now();
  const parsed = await parseStream(raw);
  expect(types(parsed)[0]).toBe('start');
  expect(types(parsed).at(-1)).toBe('finish');
  expect(parsed.filter((c) => c.type === 'error')).toEqual([]);
  const answer = await messageFrom(parsed);
  expect(answer.parts.some((p) => p.type === 'text' || p.type.startsWith('tool-'))).toBe(true);
  const chat = (await ctx.request('GET', `/ai/chats/${chatId}`, { token: t.session })).body;
  const [turn] = await ctx.deps.sql`SELECT model, status FROM ai_chat_turns WHERE chat_id = ${chatId}`;
  expect(turn!.model).toMatch(/^local:/);
  expect(chat.messages.at(-1)).toEqual(answer);
  const deltas = parsed.filter((c) => c.type === 'text-delta').length;
  const seconds = (ended - firstToken) / 1000;
  console.info(
    `AI chat on the local model: first frame after ${Math.round(firstFrame - started)} ms, first text token after ${Math.round(firstToken - started)} ms ` +
      `(${Math.round(firstToken - (stepStarts.filter((t) => t <= firstToken).at(-1) ?? started))} ms after its step began), ${deltas} text deltas in ${seconds.toFixed(2)} s (${(deltas / Math.max(seconds, 0.001)).toFixed(1)} tokens/s), ` +
      `frames: ${types(parsed).join(',')}`,
  );
});
