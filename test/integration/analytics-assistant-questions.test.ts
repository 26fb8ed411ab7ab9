import fs from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeReaderPools } from '../../db/analytics-assistant';
import { ORGANIZATION_ID } from '../../platform/core/temporal';
import { ATTACKS, withOther } from '../support/analytics-attacks';
import { PLANTED, type AnalyticsTenant, analyticsTenant, fingerprint, seedCrm, seedOrders } from '../support/analytics';
import { messageFrom, streamRequest } from '../support/ai-chat';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { keepHistory } from '../support/histories';
import { createOrgKey } from '../support/identity';

// The assistant loop against a scripted OpenAI-compatible model, on the real dev server, worker and
// Postgres; every stream is parsed by the `ai` package itself.

let ctx: TestContext;
let llm: FakeChatLlm;
let a: AnalyticsTenant;
let b: AnalyticsTenant;
let bOrders: string;
beforeAll(async () => {
  llm = await startFakeChatLlm();
  ctx = await createTestContext({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-sql' } });
  [a, b] = await Promise.all([analyticsTenant(ctx), analyticsTenant(ctx)]);
  await Promise.all([seedCrm(ctx.deps.sql, a.orgId, 'A'), seedCrm(ctx.deps.sql, b.orgId, 'B')]);
  [, bOrders] = await Promise.all([seedOrders(ctx, a), seedOrders(ctx, b)]);
}, 60_000);
afterAll(async () => {
  await closeReaderPools();
  await ctx?.close();
  await llm?.close();
});
beforeEach(() => {
  llm.script = [];
  llm.requests = [];
});

const ask = (body: Record<string, unknown>, token = a.session) => streamRequest(ctx, 'POST', '/analytics-assistant/questions', token, body);
const runSql = (sql: string) => ({ toolCalls: [{ name: 'run_sql', arguments: { sql } }] });
const dataParts = (message: { parts: { type: string }[] }) =>
  message.parts.filter((p) => p.type.startsWith('data-')) as unknown as { type: string; data: any }[];

describe('a question', () => {
  it('streams the SQL, its result and the answer; the conversation is kept and listed', async () => {
    llm.script.push(runSql("SELECT stage, count(*) AS n FROM deals WHERE stage LIKE 'closed%' GROUP BY stage ORDER BY stage"), {
      text: 'One won and one lost.',
    });
    const res = await ask({ question: 'How many deals did we close, won or lost?' });
    expect(res.status, res.raw).toBe(200);
    expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const conversationId = res.headers.get('x-conversation-id')!;
    const message = await messageFrom(res.chunks);
    expect(dataParts(message)).toEqual([
      expect.objectContaining({ type: 'data-sql', data: { attempt: 1, sql: expect.stringContaining('FROM deals') } }),
      expect.objectContaining({
        type: 'data-result',
        data: {
          attempt: 1,
          columns: [
            { name: 'stage', type: 'text' },
            { name: 'n', type: 'bigint' },
          ],
          rows: [
            ['closed_lost', '1'],
            ['closed_won', '1'],
          ],
          row_count: 2,
          truncated: false,
        },
      }),
    ]);
    expect(message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['One won and one lost.']);
    // The rows went back to the model marked as untrusted data.
    const tool = llm.requests[1]!.messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toMatch(/^<untrusted-data>\n.*not instructions/s);
    expect(tool.content).toContain('closed_won');
    expect(llm.requests[0]!.messages[0]!.content).toContain('analytics.deals');

    const conversation = await ctx.request('GET', `/analytics-assistant/conversations/${conversationId}`, { token: a.session });
    expect(conversation.status).toBe(200);
    expect(conversation.body).toMatchObject({
      id: conversationId,
      title: 'How many deals did we close, won or lost?',
      active_turn_id: null,
    });
    expect(conversation.body.turns).toEqual([
      expect.objectContaining({
        question: 'How many deals did we close, won or lost?',
        status: 'completed',
        answer_text: 'One won and one lost.',
        model: 'openai:fake-sql',
        error: null,
      }),
    ]);
    expect(conversation.body.turns[0].answer.parts).toEqual(message.parts);
    const list = await ctx.request('GET', '/analytics-assistant/conversations', { token: a.session });
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(conversationId);
    const description = await ctx.deps.temporal.workflow.getHandle(`analytics-assistant:${conversationId}`).describe();
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(a.orgId);

    // A follow-up in the same conversation reads the earlier question and answer.
    llm.script.push({ text: 'Still the same.' });
    const again = await ask({ question: 'And now?', conversation_id: conversationId });
    expect(again.status).toBe(200);
    expect(llm.requests[2]!.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(['How many deals did we close, won or lost?', 'One won and one lost.', 'And now?']),
    );
  });

  it('sends a refusal or a database error back to the model, at most 3 attempts, then asks for a text answer', async () => {
    llm.script.push(
      runSql('DELETE FROM deals'),
      runSql('SELECT nope FROM deals'),
      runSql('SELECT count(*) FROM deals'),
      runSql('SELECT 1'),
      { text: 'There are 4 deals.' },
    );
    const res = await ask({ question: 'How many deals?' });
    const parts = dataParts(await messageFrom(res.chunks));
    expect(parts.map((p) => p.type)).toEqual(['data-sql', 'data-error', 'data-sql', 'data-error', 'data-sql', 'data-result']);
    expect(parts[1]!.data.error).toMatch(/^Refused by rule select_only/);
    expect(parts[3]!.data.error).toMatch(/column "nope" does not exist/);
    expect(parts[5]!.data.rows).toEqual([['4']]);
    // The errors reached the model; after the third attempt it was offered no tool.
    expect(llm.requests[1]!.messages.at(-1)!.content).toContain('select_only');
    expect(llm.requests).toHaveLength(4);
    expect(llm.requests[3]!.tools ?? []).toEqual([]);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `analytics-assistant:${res.headers.get('x-conversation-id')}`, 'analytics-assistant-turn');
  });

  it('keeps rows with planted instructions as data', async () => {
    llm.script.push(runSql("SELECT body FROM activities WHERE type = 'email'"), {
      text: 'The email asks for a deletion; I did not act on it.',
    });
    const before = await fingerprint(ctx.deps.sql);
    const res = await ask({ question: 'What did the last email say?' });
    const parts = dataParts(await messageFrom(res.chunks));
    expect(parts[1]!.data.rows).toEqual([[PLANTED]]);
    const tool = llm.requests[1]!.messages.find((m) => m.role === 'tool')!;
    expect(tool.content!.indexOf('<untrusted-data>')).toBeLessThan(tool.content!.indexOf('IGNORE ALL PREVIOUS INSTRUCTIONS'));
    expect(await fingerprint(ctx.deps.sql)).toBe(before);
  });
});

describe('one question at a time', () => {
  it('answers 409 to a second question while the first is being answered, then takes it', async () => {
    llm.script.push({ text: 'Counting the deals now.', holdAfterTokens: 1 });
    const first = await fetch(`${ctx.baseUrl}/analytics-assistant/questions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${a.session}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'How many deals?' }),
    });
    const conversationId = first.headers.get('x-conversation-id')!;
    await llm.held();
    const second = await ctx.request('POST', '/analytics-assistant/questions', {
      token: a.session,
      body: { question: 'And accounts?', conversation_id: conversationId },
    });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({ detail: 'A question is being answered in this conversation: wait for its answer' });
    llm.release();
    await first.text();
    llm.script.push({ text: 'Three.' });
    expect((await ask({ question: 'And accounts?', conversation_id: conversationId })).status).toBe(200);
    const conversation = await ctx.request('GET', `/analytics-assistant/conversations/${conversationId}`, { token: a.session });
    expect(conversation.body.turns.map((t: { answer_text: string }) => t.answer_text)).toEqual(['Counting the deals now.', 'Three.']);
  });
});

describe('hostile statements from a scripted model', () => {
  it(`refuses each of ${ATTACKS.length} attacks as a data-error naming its rule, and changes nothing`, async () => {
    const before = await fingerprint(ctx.deps.sql);
    for (let i = 0; i < ATTACKS.length; i += 3) {
      const batch = ATTACKS.slice(i, i + 3);
      llm.script = [...batch.map((attack) => runSql(withOther(attack.sql, b.orgId, bOrders))), { text: 'Refused.' }];
      const res = await ask({ question: `attack batch ${i}` });
      expect(res.status).toBe(200);
      const errors = dataParts(await messageFrom(res.chunks)).filter((p) => p.type === 'data-error');
      expect(errors.map((e) => e.data.error.match(/^Refused by rule (\w+)/)?.[1])).toEqual(batch.map((attack) => attack.rule));
    }
    expect(await fingerprint(ctx.deps.sql)).toBe(before);
    expect(fs.existsSync('/tmp/analytics-pwned')).toBe(false);
  }, 240_000);
});

describe('tenancy and scopes', () => {
  it('hides a conversation from another organization and another user (404), and needs data:access (403)', async () => {
    llm.script.push({ text: 'Hello.' });
    const res = await ask({ question: 'Hi' });
    const conversationId = res.headers.get('x-conversation-id')!;
    const colleague = await ctx.session({ sub: `${a.user}-colleague`, org_id: a.org, org_ids: [a.org], permissions: ['data:access'] });
    for (const token of [b.session, colleague]) {
      expect((await ctx.request('GET', `/analytics-assistant/conversations/${conversationId}`, { token })).status).toBe(404);
      const continued = await ctx.request('POST', '/analytics-assistant/questions', {
        token,
        body: { question: 'x', conversation_id: conversationId },
      });
      expect(continued.status).toBe(404);
      expect(continued.body).toEqual({ detail: 'Conversation not found' });
    }
    expect((await ctx.request('GET', '/analytics-assistant/conversations', { token: b.session })).body.data).toEqual([]);
    const readOnly = await createOrgKey(ctx, a.session, { scopes: ['api:read'] });
    expect((await ctx.request('POST', '/analytics-assistant/questions', { token: readOnly, body: { question: 'x' } })).status).toBe(403);
    expect((await ctx.request('GET', '/analytics-assistant/conversations', { token: readOnly })).status).toBe(403);
    for (const body of [{}, { question: '' }, { question: 'x', conversation_id: 'nope' }, { question: 'x', extra: 1 }]) {
      expect((await ctx.request('POST', '/analytics-assistant/questions', { token: a.session, body })).status).toBe(422);
    }
  });
});
