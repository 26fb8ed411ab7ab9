import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReaderPools } from '../../db/analytics-assistant';
import { type AnalyticsTenant, analyticsTenant, fingerprint, seedCrm } from '../support/analytics';
import { messageFrom, streamRequest } from '../support/ai-chat';
import { createTestContext, type TestContext } from '../support/context';

// The assistant on the defaults (no LLM_BASE_URL): the semantic layer and the question parser build the
// plan, the service compiles it to SQL and runs it as the reader; the answer quotes the result.

let ctx: TestContext;
let a: AnalyticsTenant;
let b: AnalyticsTenant;
beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { LLM_BASE_URL: '' } });
  [a, b] = await Promise.all([analyticsTenant(ctx), analyticsTenant(ctx)]);
  await Promise.all([seedCrm(ctx.deps.sql, a.orgId, 'A'), seedCrm(ctx.deps.sql, b.orgId, 'B')]);
  // Two accounts whose names share a word, for the ambiguity.
  await ctx.deps.sql`
    INSERT INTO accounts (id, org_id, name) VALUES (gen_random_uuid(), ${a.orgId}, 'Initrode Labs'), (gen_random_uuid(), ${a.orgId}, 'Initrode Systems')`;
}, 60_000);
afterAll(async () => {
  await closeReaderPools();
  await ctx?.close();
});

const ask = (question: string, token = a.session) => streamRequest(ctx, 'POST', '/analytics-assistant/questions', token, { question });
const parts = async (question: string, token?: string) => {
  const res = await ask(question, token);
  expect(res.status, res.raw).toBe(200);
  const message = await messageFrom(res.chunks);
  const data = message.parts.filter((p) => p.type.startsWith('data-')) as unknown as { type: string; data: any }[];
  const text = message.parts.flatMap((p) => (p.type === 'text' ? [(p as { text: string }).text] : [])).join('');
  return { data, text, conversationId: res.headers.get('x-conversation-id')! };
};

describe('the Analytics Assistant without a large model', () => {
  it('streams the plan, its SQL and result, and an answer quoting the numbers', async () => {
    const { data, text, conversationId } = await parts('How many deals are in negotiation?');
    const plan = data.find((p) => p.type === 'data-plan')!;
    expect(plan.data.plan).toMatchObject({
      entity: 'deals',
      measures: ['count'],
      filters: [{ op: 'eq', field: 'stage', value: 'negotiation' }],
    });
    expect(data.find((p) => p.type === 'data-sql')!.data.sql).toBe(plan.data.sql);
    expect(data.find((p) => p.type === 'data-result')!.data.rows).toEqual([['1']]);
    expect(text).toMatch(/: 1\.$/);
    const conversation = await ctx.request('GET', `/analytics-assistant/conversations/${conversationId}`, { token: a.session });
    expect((conversation.body as any).turns[0]).toMatchObject({ status: 'completed', model: 'builtin:semantic-layer' });
  });

  it('splits money by currency and reads its own organization only', async () => {
    const { data, text } = await parts('What is the total value of our deals?');
    const result = data.find((p) => p.type === 'data-result')!.data;
    expect(result.columns.map((c: { name: string }) => c.name)).toEqual(['currency', 'total_value']);
    expect(new Map(result.rows.map((r: string[]) => [r[0], Number(r[1])]))).toEqual(
      new Map([
        ['USD', 75000],
        ['EUR', 75000],
      ]),
    );
    expect(text).toContain('USD');
    // Organization B's values are its own (its accounts are named B …).
    const other = await parts('List the accounts in the Software industry', b.session);
    expect(
      other.data
        .find((p) => p.type === 'data-result')!
        .data.rows.flat()
        .sort(),
    ).toEqual(['B Alpha', 'B Gamma']);
  });

  it('matches names without accents or case, and asks which one when a name matches two', async () => {
    const { data } = await parts('how many contacts does a alpha have');
    expect(data.find((p) => p.type === 'data-result')!.data.rows).toEqual([['2']]);
    const ambiguous = await parts('How many contacts does Initrode have?');
    expect(ambiguous.data.some((p) => p.type === 'data-sql')).toBe(false);
    expect(ambiguous.text).toContain('Initrode Labs');
    expect(ambiguous.text).toContain('Initrode Systems');
  });

  it('declines a request to change data in a sentence, runs nothing and changes nothing', async () => {
    const before = await fingerprint(ctx.deps.sql);
    const { data, text } = await parts('Delete all lost deals');
    expect(data).toEqual([]);
    expect(text).toMatch(/cannot change/);
    expect(text.trim()).not.toMatch(/^[{[]/);
    expect(await fingerprint(ctx.deps.sql)).toBe(before);
  });

  it('lists what each word became, says the condition that found nothing, and declines a word it cannot read', async () => {
    const { data, text } = await parts('How many deals do we have with Initech?');
    const plan = data.find((p) => p.type === 'data-plan')!;
    expect(plan.data.words).toContainEqual({ word: 'initech', as: 'value account.name = Initech (no record has it)' });
    expect(plan.data.words).toContainEqual({ word: 'deals', as: 'entity deals' });
    expect(data.find((p) => p.type === 'data-result')!.data.rows).toEqual([['0']]);
    expect(text).toContain('account.name = Initech');
    const unknown = await parts('Which accounts are in Spain?');
    expect(unknown.data.some((p) => p.type === 'data-sql')).toBe(false);
    expect(unknown.text).toMatch(/no place for accounts \(no country, city or address\)/);
  });

  it("counts a campaign's contacts of its own organization only", async () => {
    for (const [tenant, pending] of [
      [a, 2],
      [b, 3],
    ] as const)
      await ctx.deps.sql`
        INSERT INTO campaign_contacts (id, org_id, campaign_id, phone_numbers, status, next_attempt_at)
        SELECT gen_random_uuid(), c.org_id, c.id, ARRAY['+15550100'], 'pending', now() FROM campaigns c, generate_series(1, ${pending})
        WHERE c.org_id = ${tenant.orgId}`;
    const { data } = await parts('How many campaign contacts are pending?');
    expect(data.find((p) => p.type === 'data-plan')!.data.plan.entity).toBe('campaign_contacts');
    expect(data.find((p) => p.type === 'data-result')!.data.rows).toEqual([['2']]);
  });

  it('answers a question it cannot read with what it can answer, never an empty answer', async () => {
    const { text } = await parts('what will the weather be tomorrow');
    expect(text).toMatch(/I answer questions about your CRM data/);
  });
});
