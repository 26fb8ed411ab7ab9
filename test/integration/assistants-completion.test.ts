import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReaderPools } from '../../db/analytics-assistant';
import type { PlanCompleter } from '../../services/assistants/plan-completer';
import { attemptQuery } from '../../services/assistants/query-runner';
import { understandQuestion } from '../../services/assistants/understanding';
import { type AnalyticsTenant, analyticsTenant, seedCrm } from '../support/analytics';
import { createTestContext, type TestContext } from '../support/context';

// A completer may finish what the rules left unread by naming one field of the question's subject; the
// answer then lists what the model read, and anything else it says leaves the sentence of what was not
// understood. The completer here is a plain function: what the local model would answer.

let ctx: TestContext;
let a: AnalyticsTenant;
beforeAll(async () => {
  ctx = await createTestContext({ env: { LLM_BASE_URL: '' } });
  a = await analyticsTenant(ctx);
  await seedCrm(ctx.deps.sql, a.orgId, 'A');
}, 60_000);
afterAll(async () => {
  await closeReaderPools();
  await ctx?.close();
});

const QUESTION = 'How pricey is the A Gamma deal?';
const naming = (field: string | null) => {
  const asked: Parameters<PlanCompleter>[0][] = [];
  const completer: PlanCompleter = async (input) => {
    asked.push(input);
    return field;
  };
  return { completer, asked };
};

describe('the plan completed where the rules stop', () => {
  it('is a sentence of what was not understood without a completer', async () => {
    const understood = await understandQuestion(ctx.deps, a.orgId, QUESTION);
    expect(understood).toMatchObject({ kind: 'refuse', reason: 'unknown' });
    expect((understood as { text: string }).text).toMatch(/"pricey"/);
  });

  it("shows the field the completer names, among the subject's fields, and says the model read it", async () => {
    const { completer, asked } = naming('value');
    const understood = await understandQuestion(ctx.deps, a.orgId, QUESTION, { completer });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ phrase: 'pricey', subject: 'deals' });
    expect(asked[0]!.options).toEqual(expect.arrayContaining(['value', 'close date', 'account industry']));
    if (understood.kind !== 'plan') throw new Error(`${understood.kind}: ${'text' in understood ? understood.text : ''}`);
    expect(understood.plan.fields).toContain('value');
    expect(understood.read).toContain('"pricey" read by the local model as "value"');
    expect(understood.words.find((w) => w.word === 'pricey')).toEqual({ word: 'pricey', as: 'field value (local model)' });
    const outcome = await attemptQuery(ctx.deps, a.orgId, understood.compiled.sql);
    if (!outcome.ok) throw new Error(outcome.error.detail);
    expect(outcome.result.rows).toEqual([['A Gamma expansion', '75000.00']]);
  });

  it('leaves the refusal as it was when the completer names none, fails, or names what is not offered', async () => {
    const failing: PlanCompleter = async () => {
      throw new Error('model busy');
    };
    for (const completer of [naming(null).completer, failing, naming('revenue per employee').completer]) {
      const understood = await understandQuestion(ctx.deps, a.orgId, QUESTION, { completer });
      expect(understood).toMatchObject({ kind: 'refuse', reason: 'unknown' });
    }
  });

  it('is never asked about a word of logic: "not" stays not understood', async () => {
    const { completer, asked } = naming('stage');
    const understood = await understandQuestion(ctx.deps, a.orgId, 'How many deals are not pricey?', { completer });
    expect(asked).toHaveLength(0);
    expect(understood).toMatchObject({ kind: 'refuse', reason: 'unknown' });
  });
});
