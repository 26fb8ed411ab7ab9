import { describe, expect, it } from 'vitest';
import { parseChatIntent } from '../../domain/semantic-layer/chat-intents';
import { catalogOf } from '../../domain/semantic-layer/catalog';
import { compilePlan } from '../../domain/semantic-layer/compile';
import { describeFilters } from '../../domain/semantic-layer/describe';
import { parseQuestion, type Understanding } from '../../domain/semantic-layer/parser';
import { Plan } from '../../domain/semantic-layer/plan';
import { type ValueEntry, ValueIndex } from '../../domain/semantic-layer/values';
import { STOP_WORDS, knownValues, valueAliases } from '../../domain/semantic-layer/vocabulary';
import { checkSql } from '../../services/assistants/guard';

// Every word of a question accounted for, and the layer's reach over the whole CRM: without a database,
// over a small organization's values in memory.

const catalog = catalogOf([]);
const values: ValueEntry[] = [
  ...['Acme', 'Globex', 'Hooli'].map((value) => ({ entity: 'accounts', field: 'name', value })),
  ...['software', 'retail'].map((value) => ({ entity: 'accounts', field: 'industry', value })),
  ...['acme.com', 'globex.fr'].map((value) => ({ entity: 'accounts', field: 'domain', value })),
  { entity: 'accounts', field: 'owner_id', value: 'alice' },
  { entity: 'deals', field: 'owner_id', value: 'alice' },
  { entity: 'deals', field: 'owner_id', value: 'bob' },
  ...['Acme renewal', 'Globex pilot'].map((value) => ({ entity: 'deals', field: 'name', value })),
  ...['prospecting', 'negotiation', 'closed_won', 'closed_lost'].map((value) => ({ entity: 'deals', field: 'stage', value })),
  ...['USD', 'EUR'].map((value) => ({ entity: 'deals', field: 'currency', value })),
  ...['Ada Lovelace', 'Ada Byron', 'Grace Hopper'].map((value) => ({ entity: 'contacts', field: 'name', value })),
  { entity: 'contacts', field: 'title', value: 'Owner' },
  { entity: 'contacts', field: 'title', value: 'CEO' },
  ...['call', 'meeting', 'email'].map((value) => ({ entity: 'activities', field: 'type', value })),
  { entity: 'tags', field: 'name', value: 'vip' },
  { entity: 'campaigns', field: 'name', value: 'Spring push' },
];
const index = new ValueIndex(values, STOP_WORDS, [...valueAliases(), ...knownValues(catalog)]);
const today = new Date('2026-03-16T00:00:00Z');
const ask = (question: string): Understanding => parseQuestion(question, { catalog, index, currencies: ['USD', 'EUR'], today });
const planOf = (question: string) => {
  const understood = ask(question);
  if (understood.kind !== 'plan') throw new Error(`${question}: ${understood.kind} ${understood.text}`);
  return understood;
};
const allowed = new Set(
  ['accounts', 'contacts', 'deals', 'activities', 'tags', 'campaigns', 'campaign_contacts', 'conversations'].map((v) => `analytics.${v}`),
);

describe('every word of a question', () => {
  it('is listed with what it became, or as carrying nothing', () => {
    const { words } = planOf('How many deals are in negotiation?');
    expect(words).toEqual([
      { word: 'how', as: 'measure' },
      { word: 'many', as: 'measure' },
      { word: 'deals', as: 'entity deals' },
      { word: 'are', as: null },
      { word: 'in', as: 'value stage = negotiation' },
      { word: 'negotiation', as: 'value stage = negotiation' },
    ]);
  });

  it('says which words it did not understand and what it did, never answering a broader question', () => {
    for (const [question, word] of [
      ['How many deals did we lose to competitors?', 'competitors'],
      ['Break down contacts by gender', 'gender'],
      ['Which accounts were founded before 2000?', 'founded'],
    ]) {
      const understood = ask(question!);
      expect(understood.kind, question).toBe('refuse');
      expect((understood as { text: string }).text).toContain(`"${word}"`);
      expect((understood as { text: string }).text).toMatch(/I understood/);
    }
    const place = ask('Which accounts are in Spain?');
    expect(place.kind).toBe('refuse');
    expect((place as { text: string }).text).toMatch(/no place for accounts \(no country, city or address\)/);
    expect((place as { text: string }).text).toMatch(/Accounts have: name, domain, industry/);
  });

  it('reads a value the organization has no record of as a filter that finds nothing', () => {
    expect(planOf('How many deals do we have with Initech?').plan.filters).toEqual([{ op: 'eq', field: 'account.name', value: 'Initech' }]);
    expect(planOf('How many contacts work at Pied Piper?').plan.filters).toEqual([
      { op: 'eq', field: 'account.name', value: 'Pied Piper' },
    ]);
    expect(planOf('Show our deals in Swiss francs').plan.filters).toEqual([{ op: 'eq', field: 'currency', value: 'CHF' }]);
    expect(planOf('List accounts in the automotive industry').plan.filters).toEqual([{ op: 'eq', field: 'industry', value: 'automotive' }]);
    expect(planOf('How many contacts have the title Chief Happiness Officer?').plan.filters).toEqual([
      { op: 'eq', field: 'title', value: 'Chief Happiness Officer' },
    ]);
    expect(planOf('How many deals does sophie own?').plan.filters).toEqual([{ op: 'eq', field: 'owner_id', value: 'sophie' }]);
    expect(describeFilters(planOf('deals with Initech').plan)).toEqual(['account name = Initech']);
  });

  it('negates values with NOT IN instead of dropping or inverting the negation', () => {
    expect(planOf('How many deals are not won or lost?').plan.filters).toEqual([
      { op: 'not_in', field: 'stage', values: ['closed_won', 'closed_lost'] },
    ]);
    expect(planOf('Which accounts are not in the software industry?').plan.filters).toEqual([
      { op: 'neq', field: 'industry', value: 'software' },
    ]);
    expect(planOf('How many activities are not calls?').plan.filters).toEqual([{ op: 'neq', field: 'type', value: 'call' }]);
    expect(planOf('Which deals are not owned by alice?').plan.filters).toEqual([{ op: 'neq', field: 'owner_id', value: 'alice' }]);
    expect(planOf('Open deals that are not in the negotiation stage').plan.filters).toEqual([
      { op: 'neq', field: 'stage', value: 'negotiation' },
      { op: 'not_in', field: 'stage', values: ['closed_won', 'closed_lost'] },
    ]);
  });

  it('does not read a field word as a value of another field ("owner" is not the title Owner)', () => {
    expect(planOf('Number of deals per owner').plan).toMatchObject({
      dimensions: [{ field: 'owner_id' }],
      filters: [],
      measures: ['count'],
    });
  });
});

describe('the whole CRM in the layer', () => {
  it('ranks groups and shows the number it ranks by', () => {
    expect(planOf('Which owner has the largest pipeline?').plan).toMatchObject({
      entity: 'deals',
      dimensions: [{ field: 'owner_id' }, { field: 'currency' }],
      measures: ['sum:value'],
      order: [{ by: 'sum:value', direction: 'desc' }],
      limit: 1,
    });
    expect(planOf('Who owns the fewest accounts?').plan).toMatchObject({
      entity: 'accounts',
      dimensions: [{ field: 'owner_id' }],
      measures: ['count'],
      order: [{ by: 'count', direction: 'asc' }],
      limit: 1,
    });
    expect(planOf('Which industry has the most accounts?').plan).toMatchObject({
      dimensions: [{ field: 'industry' }],
      measures: ['count'],
    });
  });

  it('reads "without", "never" and "no … at all" as NOT EXISTS narrowed to the records named', async () => {
    const open = planOf('Which accounts have no open deals?').plan;
    expect(open.filters).toEqual([
      { op: 'without', entity: 'deals', where: [{ field: 'stage', op: 'not_in', values: ['closed_won', 'closed_lost'] }] },
    ]);
    const sql = compilePlan(open, catalog).sql;
    expect(sql).toContain(
      "NOT EXISTS (SELECT 1 FROM deals AS c WHERE c.account_id = t.id AND (c.stage NOT IN ('closed_won', 'closed_lost') OR c.stage IS NULL))",
    );
    expect(await checkSql(sql, allowed)).toMatchObject({ ok: true });
    expect(planOf('Which contacts have never been called?').plan.filters).toEqual([
      { op: 'without', entity: 'activities', where: [{ field: 'type', values: ['call'] }] },
    ]);
    expect(planOf('How many accounts have never had a meeting?').plan.filters).toEqual([
      { op: 'without', entity: 'activities', where: [{ field: 'type', values: ['meeting'] }] },
    ]);
    expect(planOf('Accounts with no contacts at all').plan.filters).toEqual([{ op: 'without', entity: 'contacts' }]);
  });

  it("lists a joined record's fields and one record's details", () => {
    expect(planOf("List each won deal with its contact's name").plan.fields).toEqual(['name', 'contact.name']);
    expect(planOf("Show open deals with their account's industry").plan.fields).toEqual(['name', 'account.industry']);
    expect(planOf('What industry is Hooli in?').plan).toMatchObject({
      entity: 'accounts',
      fields: ['name', 'industry'],
      filters: [{ op: 'eq', field: 'name', value: 'Hooli' }],
    });
    expect(planOf('Who owns Acme?').plan.fields).toEqual(['name', 'owner_id']);
    expect(planOf('Who is the contact on the Acme renewal deal?').plan).toMatchObject({
      entity: 'deals',
      fields: ['name', 'contact.name'],
    });
  });

  it('filters text by its start or end, and escapes what it is given', async () => {
    expect(planOf('Which accounts have a .fr domain?').plan.filters).toEqual([{ op: 'ends_with', field: 'domain', value: '.fr' }]);
    expect(planOf('Accounts whose name starts with C').plan.filters).toEqual([{ op: 'starts_with', field: 'name', value: 'c' }]);
    expect(planOf('Contacts whose email ends with .de').plan.filters).toEqual([{ op: 'ends_with', field: 'email', value: '.de' }]);
    const plan = Plan.parse({ entity: 'accounts', filters: [{ op: 'starts_with', field: 'name', value: "50%_O'" }] });
    const { sql } = compilePlan(plan, catalog);
    expect(sql).toContain("t.name ILIKE '50\\%\\_O''%'");
    expect(await checkSql(sql, allowed)).toMatchObject({ ok: true });
  });

  it("reads a campaign's contacts and the agents' conversations", async () => {
    const plan = planOf('How many contacts are in the Spring push campaign?').plan;
    expect(plan).toMatchObject({
      entity: 'campaign_contacts',
      measures: ['count'],
      filters: [{ op: 'eq', field: 'campaign.name', value: 'Spring push' }],
    });
    expect(await checkSql(compilePlan(plan, catalog).sql, allowed)).toMatchObject({ ok: true });
    expect(planOf('Which campaign has the most contacts?').plan).toMatchObject({
      entity: 'campaign_contacts',
      dimensions: [{ field: 'campaign.name' }],
      measures: ['count'],
      limit: 1,
    });
    expect(planOf('How many campaign contacts are pending?').plan.filters).toEqual([{ op: 'eq', field: 'status', value: 'pending' }]);
    expect(planOf('average duration of agent conversations').plan).toMatchObject({
      entity: 'conversations',
      measures: ['avg:duration_seconds'],
    });
  });
});

describe('a chat proposal carries every field named and none other', () => {
  const chat = (message: string) => parseChatIntent(message, { index, today });

  it('adds a new person with the title, email and phone said, even when another contact shares the first name', () => {
    expect(chat('Add Ada Smith as CFO at Hooli, email ada.smith@hooli.com')).toEqual({
      kind: 'write',
      tool: 'create_contact',
      target: { entity: 'accounts', name: 'Hooli' },
      contact: { first_name: 'Ada', last_name: 'Smith', title: 'CFO', email: 'ada.smith@hooli.com' },
    });
    expect(chat('Add a contact at Globex: Tony Rhodes, Head of Security')).toMatchObject({
      contact: { first_name: 'Tony', last_name: 'Rhodes', title: 'Head of Security' },
    });
    expect(chat('Add Pepper Potts to Acme as COO, phone +1 555 0199')).toMatchObject({
      contact: { first_name: 'Pepper', last_name: 'Potts', title: 'COO', phone: '+1 555 0199' },
    });
  });

  it('reads each field from its own clause, and asks rather than propose less than was said', () => {
    expect(chat('Set the title of Grace Hopper to VP Sales and her email to grace@globex.io')).toMatchObject({
      tool: 'update_contact',
      changes: { title: 'VP Sales', email: 'grace@globex.io' },
    });
    expect(chat('Grace Hopper moved to the Finance department')).toMatchObject({
      tool: 'update_contact',
      changes: { department: 'Finance' },
    });
    expect(chat('Update Globex: industry retail, 450 employees')).toMatchObject({
      tool: 'update_account',
      changes: { industry: 'retail', employee_count: 450 },
    });
    expect(chat('Change the email of Grace Hopper to grace@globex.io and her phone too')).toMatchObject({ kind: 'clarify' });
  });
});
