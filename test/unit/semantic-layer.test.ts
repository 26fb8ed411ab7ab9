import { describe, expect, it } from 'vitest';
import { type ChatIntent, parseChatIntent } from '../../domain/semantic-layer/chat-intents';
import { catalogOf } from '../../domain/semantic-layer/catalog';
import { PlanError, compilePlan } from '../../domain/semantic-layer/compile';
import { dateRangeOf } from '../../domain/semantic-layer/dates';
import { parseQuestion, type Understanding } from '../../domain/semantic-layer/parser';
import { Plan } from '../../domain/semantic-layer/plan';
import { phrase, similarity } from '../../domain/semantic-layer/text';
import { type ValueEntry, ValueIndex } from '../../domain/semantic-layer/values';
import { type CatalogTerm, catalogTerms, clearlyNearest, nearestTerms, readAsTerms, unknownWords } from '../../domain/semantic-layer/terms';
import { PARSER_WORDS, STOP_WORDS, valueAliases } from '../../domain/semantic-layer/vocabulary';
import { checkSql } from '../../services/assistants/guard';

// The semantic layer and the question parser without a database: a small organization's values in memory.

const catalog = catalogOf([
  {
    name: 'orders',
    relation: 'custom_data_x.orders',
    description: 'Shop orders',
    columns: [
      { name: 'id', type: 'integer', description: null },
      { name: 'customer', type: 'text', description: null },
      { name: 'amount', type: 'numeric', description: null },
      { name: 'paid', type: 'boolean', description: null },
    ],
  },
]);
const values: ValueEntry[] = [
  ...['Acme', 'Globex', 'Initrode Labs', 'Initrode Systems', 'Société Générale'].map((value) => ({
    entity: 'accounts',
    field: 'name',
    value,
  })),
  ...['Software', 'Retail'].map((value) => ({ entity: 'accounts', field: 'industry', value })),
  { entity: 'accounts', field: 'owner_id', value: 'carol' },
  { entity: 'deals', field: 'owner_id', value: 'carol' },
  ...['Acme deal 1', 'Globex deal 1', 'Globex deal 2'].map((value) => ({ entity: 'deals', field: 'name', value })),
  ...['negotiation', 'closed_won', 'closed_lost'].map((value) => ({ entity: 'deals', field: 'stage', value })),
  ...['USD', 'EUR'].map((value) => ({ entity: 'deals', field: 'currency', value })),
  { entity: 'contacts', field: 'name', value: 'Ada Lovelace' },
  { entity: 'contacts', field: 'title', value: 'CTO' },
  { entity: 'tags', field: 'name', value: 'vip' },
];
const index = new ValueIndex(values, STOP_WORDS, valueAliases());
const today = new Date('2025-12-31T00:00:00Z');
const ask = (question: string): Understanding => parseQuestion(question, { catalog, index, currencies: ['USD', 'EUR'], today });
const planOf = (question: string) => {
  const understood = ask(question);
  if (understood.kind !== 'plan') throw new Error(`${question}: ${understood.kind} ${understood.text}`);
  return understood.plan;
};
const allowed = new Set([
  'analytics.accounts',
  'analytics.contacts',
  'analytics.deals',
  'analytics.activities',
  'analytics.tags',
  'analytics.campaigns',
  'custom_data_x.orders',
]);

describe('the plan and its compiler', () => {
  it('writes one SELECT the guard accepts, joins from the catalog and values as literals', async () => {
    const plan = Plan.parse({
      entity: 'deals',
      measures: ['sum:value'],
      dimensions: [{ field: 'account.industry' }, { field: 'currency' }],
      filters: [{ op: 'eq', field: 'account.name', value: "O'Brien" }],
    });
    const { sql, columns } = compilePlan(plan, catalog);
    expect(columns).toEqual(['account_industry', 'currency', 'total_value']);
    expect(sql).toContain('LEFT JOIN accounts AS account ON account.id = t.account_id');
    expect(sql).toContain("account.name = 'O''Brien'");
    expect(await checkSql(sql, allowed)).toMatchObject({ ok: true });
  });

  it('escapes LIKE wildcards in contains, unnests tags, truncates dates to a grain, and says "without" with NOT EXISTS', async () => {
    const plan = Plan.parse({
      entity: 'accounts',
      measures: ['count'],
      dimensions: [{ field: 'tags' }, { field: 'created_at', grain: 'quarter' }],
      filters: [
        { op: 'contains', field: 'name', value: '50%_off' },
        { op: 'without', entity: 'deals' },
      ],
    });
    const { sql } = compilePlan(plan, catalog);
    expect(sql).toContain("ILIKE '%50\\%\\_off%'");
    expect(sql).toContain('CROSS JOIN LATERAL unnest(t.tags) AS tag(name)');
    expect(sql).toContain("date_trunc('quarter', t.created_at)::date");
    expect(sql).toContain('NOT EXISTS (SELECT 1 FROM deals AS c WHERE c.account_id = t.id)');
    expect(await checkSql(sql, allowed)).toMatchObject({ ok: true });
  });

  it('refuses what the catalog does not hold, and a field path that is not a name', () => {
    expect(() => compilePlan(Plan.parse({ entity: 'deals', measures: ['sum:name'] }), catalog)).toThrow(PlanError);
    expect(() => compilePlan(Plan.parse({ entity: 'deals', fields: ['password'] }), catalog)).toThrow(PlanError);
    expect(() => compilePlan(Plan.parse({ entity: 'users' }), catalog)).toThrow(PlanError);
    expect(Plan.safeParse({ entity: 'deals', fields: ['name; DROP TABLE deals'] }).success).toBe(false);
    expect(() =>
      compilePlan(Plan.parse({ entity: 'deals', filters: [{ op: 'gt', field: 'close_date', value: "1' OR '1'='1" }] }), catalog),
    ).toThrow(PlanError);
  });
});

describe('the question parser', () => {
  it('reads values of the organization, accent- and case-insensitive, and near misses', () => {
    expect(planOf('How many deals are in negotiation?')).toMatchObject({
      entity: 'deals',
      measures: ['count'],
      filters: [{ op: 'eq', field: 'stage', value: 'negotiation' }],
    });
    expect(planOf('how many contacts does societe generale have')).toMatchObject({
      entity: 'contacts',
      filters: [{ op: 'eq', field: 'account.name', value: 'Société Générale' }],
    });
    expect(planOf('list the deals of Globx')).toMatchObject({ filters: [{ op: 'eq', field: 'account.name', value: 'Globex' }] });
    expect(similarity('globx', 'globex')).toBeGreaterThan(0.4);
    expect(phrase('Société Générale')).toBe('societe generale');
  });

  it('splits money by currency unless one is named', () => {
    expect(planOf('What is the total value of our deals?')).toMatchObject({ measures: ['sum:value'], dimensions: [{ field: 'currency' }] });
    expect(planOf('total value of USD deals')).toMatchObject({ dimensions: [], filters: [{ op: 'eq', field: 'currency', value: 'USD' }] });
  });

  it('reads periods, comparisons and top-N', () => {
    expect(planOf('How many deals did we win last quarter?').filters).toEqual([
      { op: 'eq', field: 'stage', value: 'closed_won' },
      { op: 'gte', field: 'closed_at', value: '2025-07-01' },
      { op: 'lt', field: 'closed_at', value: '2025-10-01' },
    ]);
    expect(planOf('Which accounts have more than 1.5k employees?').filters).toEqual([{ op: 'gt', field: 'employee_count', value: 1500 }]);
    expect(planOf('top 3 accounts by headcount')).toMatchObject({
      fields: ['name'],
      order: [{ by: 'employee_count', direction: 'desc' }],
      limit: 3,
    });
    expect(dateRangeOf('deals created since march', today)).toMatchObject({ from: '2025-03-01' });
    expect(dateRangeOf('in 2024', today)).toMatchObject({ from: '2024-01-01', to: '2025-01-01' });
  });

  it('asks which one when a name matches two records, and declines changes and questions outside the CRM', () => {
    expect(ask('How many contacts does Initrode have?')).toMatchObject({ kind: 'clarify', options: ['Initrode Labs', 'Initrode Systems'] });
    expect(ask('Delete all lost deals')).toMatchObject({ kind: 'refuse', reason: 'write' });
    expect(ask('What will the weather be tomorrow?')).toMatchObject({ kind: 'refuse' });
    expect(ask('close date of the Acme deal 1')).toMatchObject({ kind: 'plan' });
  });

  it('counts a custom table and groups by its columns, with a condition on totals', () => {
    expect(planOf('Which customers spent more than 1000 in total in the orders table?')).toMatchObject({
      entity: 'orders',
      dimensions: [{ field: 'customer' }],
      having: [{ measure: 'sum:amount', op: 'gt', value: 1000 }],
    });
    expect(planOf('total amount of paid orders')).toMatchObject({
      measures: ['sum:amount'],
      filters: [{ op: 'eq', field: 'paid', value: true }],
    });
  });

  it('ranks groups by their totals when the totals are asked beside them, and the extreme of a total said in one phrase', () => {
    expect(planOf('Who are our five biggest customers in the orders table, with their totals?')).toMatchObject({
      dimensions: [{ field: 'customer' }],
      measures: ['sum:amount'],
      order: [{ by: 'sum:amount', direction: 'desc' }],
      limit: 5,
    });
    expect(planOf('What is the maximum order total?')).toMatchObject({ measures: ['max:amount'] });
  });
});

describe('owners, tags and child conditions said of the accounts', () => {
  it('reads an owner or a tag of the accounts as the joined account field', () => {
    for (const q of ['deals of the accounts that carol owns', "opportunities at carol's accounts", 'deals whose account owner is carol'])
      expect(planOf(q).filters, q).toContainEqual({ op: 'eq', field: 'account.owner_id', value: 'carol' });
    expect(planOf("carol's deals").filters).toContainEqual({ op: 'eq', field: 'owner_id', value: 'carol' });
    expect(planOf('contacts at vip companies').filters).toContainEqual({ op: 'eq', field: 'account.tags', value: 'vip' });
  });

  it('narrows "without" to the child rows named, and reads "not linked to any account"', async () => {
    const plan = planOf('accounts with no won deals');
    expect(plan.filters).toContainEqual({ op: 'without', entity: 'deals', where: [{ field: 'stage', values: ['closed_won'] }] });
    expect(compilePlan(plan, catalog).sql).toContain(
      "NOT EXISTS (SELECT 1 FROM deals AS c WHERE c.account_id = t.id AND c.stage IN ('closed_won'))",
    );
    expect(planOf('Which accounts have never won a deal?').filters).toContainEqual({
      op: 'without',
      entity: 'deals',
      where: [{ field: 'stage', values: ['closed_won'] }],
    });
    expect(planOf('contacts not linked to any account').filters).toContainEqual({ op: 'is_null', field: 'account.id' });
  });
});

describe('unknown words read by meaning', () => {
  const terms: CatalogTerm[] = [
    { term: 'industry', target: 'accounts.industry' },
    { term: 'employees', target: 'accounts.employee_count' },
    { term: 'value', target: 'deals.value' },
  ];
  const vectors = [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ];

  it('lists only the words nothing else reads: not the vocabulary, not the parser words, not values', () => {
    const known = new Set([...STOP_WORDS, ...PARSER_WORDS]);
    expect(unknownWords('update the verticals of Acme, how many?', known, (w) => index.holds(w))).toEqual(['verticals']);
    expect(catalogTerms(catalog).some((t) => t.term === 'industry' && t.target === 'accounts.industry')).toBe(true);
  });

  it('reads a word as a term only when one target is clearly nearest, and rewrites the question', () => {
    const [clear, tie, far] = nearestTerms(
      ['verticals', 'staff', 'banana'],
      [
        [0.99, 0.1, 0],
        [0, 0.7, 0.7],
        [0.5, 0.5, 0.5],
      ],
      terms,
      vectors,
    );
    expect(clear!.term.term).toBe('industry');
    expect(clearlyNearest(clear!)).toBe(true);
    expect(clearlyNearest(tie!)).toBe(false); // two targets equally near: for the chooser, if any
    expect(tie!.options.map((o) => o.term.term).sort()).toEqual(['employees', 'industry', 'value']);
    expect(clearlyNearest(far!)).toBe(false);
    expect(readAsTerms('Deals by Verticals', [clear!])).toBe('Deals by industry');
  });
});

describe('the chat intents', () => {
  const intent = (message: string): ChatIntent => parseChatIntent(message, { index, today });

  it('propose exactly the fields a message names', () => {
    expect(intent('Rename Globex to "Globex Corporation"')).toEqual({
      kind: 'write',
      tool: 'update_account',
      target: { entity: 'accounts', name: 'Globex' },
      changes: { name: 'Globex Corporation' },
    });
    expect(intent('Mark Acme deal 1 as won')).toEqual({
      kind: 'write',
      tool: 'move_deal_stage',
      target: { entity: 'deals', name: 'Acme deal 1' },
      stage: 'closed_won',
    });
    expect(intent('Set the value of Globex deal 2 to 20,000')).toMatchObject({ tool: 'update_deal', changes: { value: 20000 } });
    expect(intent('Add a note to Acme: "Sent the quote"')).toMatchObject({
      tool: 'create_activity',
      type: 'note',
      subject: 'Sent the quote',
    });
    expect(intent("Ada Lovelace's title is now CTO")).toMatchObject({ tool: 'update_contact', changes: { title: 'CTO' } });
  });

  it('ask about a deal spoken of through an account with several, and never write on a read', () => {
    expect(intent('Move the Globex deal to negotiation')).toEqual({
      kind: 'write',
      tool: 'move_deal_stage',
      target: { entity: 'deals', ofAccount: 'Globex' },
      stage: 'negotiation',
    });
    expect(intent('Which deals are in negotiation?')).toEqual({ kind: 'read' });
    expect(intent('Tell me about Acme')).toEqual({ kind: 'summary', target: { entity: 'accounts', name: 'Acme' } });
    expect(intent('Delete all accounts')).toMatchObject({ kind: 'refuse' });
  });
});
