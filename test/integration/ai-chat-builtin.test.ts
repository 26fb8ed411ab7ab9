import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReaderPools } from '../../db/analytics-assistant';
import { newChat, send, streamRequest, types } from '../support/ai-chat';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';

// The chat on the defaults (no LLM_BASE_URL): the service's own understanding reads the message, the
// tools run as in any turn, the answer is composed from their output. A change is proposed with exactly
// the fields named, shown before → after, and written only once approved. The figure printed is the
// time to the first text of a read (docs/performance.md).

let ctx: TestContext;
let t: Tenant;
let other: Tenant;
const ids: Record<string, string> = {};
beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { LLM_BASE_URL: '' } });
  [t, other] = await Promise.all([newTenant(ctx, ['api:read', 'api:manage']), newTenant(ctx, ['api:read', 'api:manage'])]);
  const post = async (path: string, body: Record<string, unknown>, token = t.session) => {
    const res = await ctx.request('POST', path, { token, body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body.id as string;
  };
  ids.acme = await post('/accounts', { name: 'Acme Robotics', industry: 'manufacturing' });
  ids.globex = await post('/accounts', { name: 'Globex', industry: 'software' });
  ids.deal = await post('/deals', {
    name: 'Acme Robotics renewal',
    stage: 'negotiation',
    value: 40000,
    currency: 'USD',
    account_id: ids.acme,
  });
  await post('/deals', { name: 'Globex pilot', stage: 'proposal', value: 9000, currency: 'USD', account_id: ids.globex });
  await post('/contacts', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@acme.example', title: 'CTO', account_id: ids.acme });
  // Another organization's account of the same name: never seen.
  await post('/accounts', { name: 'Acme Robotics', industry: 'retail' }, other.session);
}, 60_000);
afterAll(async () => {
  await closeReaderPools();
  await ctx?.close();
});

const textOf = (answer: { parts: { type: string }[] }) =>
  answer.parts.flatMap((p) => (p.type === 'text' ? [(p as unknown as { text: string }).text] : [])).join('');

describe('the chat without a large model', () => {
  it('answers a read from the tool output, proposes nothing, and records who answered', async () => {
    const chatId = await newChat(ctx, t.session);
    const started = performance.now();
    const { answer, chunks } = await send(ctx, t.session, chatId, 'Which deals are in negotiation?');
    const seconds = (performance.now() - started) / 1000;
    expect(textOf(answer)).toContain('Acme Robotics renewal');
    expect(textOf(answer)).not.toContain('Globex pilot');
    expect(types(chunks)).not.toContain('tool-approval-request');
    expect(textOf(answer).trim()).not.toMatch(/^[{[]/);
    const [turn] = await ctx.deps.sql`SELECT model FROM ai_chat_turns WHERE chat_id = ${chatId}`;
    expect(turn!.model).toBe('builtin:semantic-layer');
    console.info(`AI chat on the defaults: a read answered in ${seconds.toFixed(2)} s`);
  });

  it('summarises one record with its deals and contacts', async () => {
    const chatId = await newChat(ctx, t.session);
    const { answer } = await send(ctx, t.session, chatId, 'Tell me about Acme Robotics');
    expect(textOf(answer)).toContain('Acme Robotics renewal');
    expect(textOf(answer)).toContain('Ada Lovelace');
    expect(textOf(answer)).toContain('manufacturing');
  });

  it('proposes exactly the stage named, shows it before → after, and approving writes that stage', async () => {
    const chatId = await newChat(ctx, t.session);
    const { chunks } = await send(ctx, t.session, chatId, 'Mark Acme Robotics renewal as won');
    const request = chunks.find((c) => c.type === 'tool-approval-request') as { approvalId: string; toolCallId: string };
    expect(request).toBeDefined();
    const input = chunks.find((c) => c.type === 'tool-input-available') as { toolName: string; input: unknown };
    expect(input).toMatchObject({ toolName: 'move_deal_stage', input: { deal_id: ids.deal, stage: 'closed_won' } });
    const preview = chunks.find((c) => c.type === 'data-proposal') as { data: { changes: unknown[]; target: { name: string } } };
    expect(preview.data).toMatchObject({
      target: { name: 'Acme Robotics renewal' },
      changes: [{ field: 'stage', before: 'negotiation', after: 'closed_won' }],
    });
    // Nothing is written before the approval.
    expect((await ctx.request('GET', `/deals/${ids.deal}`, { token: t.session })).body.stage).toBe('negotiation');
    const resumed = await streamRequest(ctx, 'POST', `/ai/chats/${chatId}/approvals/${request.approvalId}`, t.session, { approved: true });
    expect(types(resumed.chunks)).toContain('tool-output-available');
    expect((await ctx.request('GET', `/deals/${ids.deal}`, { token: t.session })).body.stage).toBe('closed_won');
    const said = resumed.chunks.flatMap((c) => (c.type === 'text-delta' ? [(c as { delta: string }).delta] : [])).join('');
    expect(said).toContain('closed_won');
  });

  it('a rename carries the new name only', async () => {
    const chatId = await newChat(ctx, t.session);
    const { chunks } = await send(ctx, t.session, chatId, 'Rename Globex to "Globex Corporation"');
    const input = chunks.find((c) => c.type === 'tool-input-available') as { toolName: string; input: unknown };
    expect(input).toMatchObject({ toolName: 'update_account', input: { account_id: ids.globex, changes: { name: 'Globex Corporation' } } });
    expect(Object.keys((input.input as { changes: object }).changes)).toEqual(['name']);
  });

  it('adds a new person with every field said, title and phone included, once approved', async () => {
    const chatId = await newChat(ctx, t.session);
    // "Ada" is also an existing contact's first name: the new person is still a new person.
    const { chunks } = await send(ctx, t.session, chatId, 'Add Ada Byron to Globex as COO, phone +1 555 0199');
    const input = chunks.find((c) => c.type === 'tool-input-available') as { toolName: string; input: unknown };
    expect(input).toEqual(
      expect.objectContaining({
        toolName: 'create_contact',
        input: { account_id: ids.globex, first_name: 'Ada', last_name: 'Byron', title: 'COO', phone: '+1 555 0199' },
      }),
    );
    const request = chunks.find((c) => c.type === 'tool-approval-request') as { approvalId: string };
    await streamRequest(ctx, 'POST', `/ai/chats/${chatId}/approvals/${request.approvalId}`, t.session, { approved: true });
    const [row] = await ctx.deps.sql`SELECT title, phone FROM contacts WHERE account_id = ${ids.globex!} AND last_name = 'Byron'`;
    expect(row).toEqual({ title: 'COO', phone: '+1 555 0199' });
  });

  it("answers a record's detail and says a name it does not know found nothing", async () => {
    const detail = await send(ctx, t.session, await newChat(ctx, t.session), 'What industry is Globex in?');
    expect(textOf(detail.answer)).toContain('software');
    const none = await send(ctx, t.session, await newChat(ctx, t.session), 'Show me the deals we have with Initech');
    expect(textOf(none.answer)).toMatch(/^No deals \(account name = Initech\) match\.$/);
  });

  it('declines deletions and messages to everyone in a sentence, with no tool call', async () => {
    for (const message of ['Delete all accounts', 'Email everyone about the new pricing']) {
      const chatId = await newChat(ctx, t.session);
      const { answer, chunks } = await send(ctx, t.session, chatId, message);
      expect(types(chunks).some((c) => c.startsWith('tool-'))).toBe(false);
      expect(textOf(answer)).toMatch(/cannot delete records or send messages/);
    }
  });
});
