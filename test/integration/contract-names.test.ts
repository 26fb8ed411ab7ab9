import crypto from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';

// Names of tags, agents, accounts, deals and datasets, on create and on update: the server trims them before it checks
// their length, and the served document says exactly that (a pattern, no raw maxLength: domain/trimmed-text.ts), so the
// document and the server take the same names. Each body is checked against the served document and sent to the server.
let ctx: TestContext;
let tenant: Tenant;
let document: { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: object }> } }>> };
const ajv = new Ajv2020({ strict: false, validateFormats: false, logger: false });

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await newTenant(ctx, ['api:read', 'api:manage', 'agents:read', 'agents:manage']);
  document = (await ctx.request('GET', '/openapi.json')).body;
  ajv.addSchema(document, 'doc');
});
afterAll(() => ctx?.close());

/** Letters only, unique per call: tag and account names are unique per organization. */
const word = (length: number) =>
  Array.from(crypto.randomBytes(length), (b) => String.fromCharCode(97 + (b % 26)))
    .join('')
    .slice(0, length);

interface NamedBody {
  name: string;
  create: string;
  /** Where an update goes, from the created row's id; absent: the body is a create. */
  update?: { method: string; path: (id: string) => string };
  max: number;
  extra?: Record<string, unknown>;
}
const BODIES: NamedBody[] = [
  { name: 'TagCreate', create: '/tags', max: 100 },
  { name: 'TagPatch', create: '/tags', update: { method: 'PATCH', path: (id) => `/tags/${id}` }, max: 100 },
  { name: 'AgentCreate', create: '/core/agents', max: 200 },
  { name: 'AgentUpdate', create: '/core/agents', update: { method: 'PUT', path: (id) => `/core/agents/${id}` }, max: 200 },
  { name: 'AccountCreate', create: '/accounts', max: 300 },
  { name: 'AccountUpdate', create: '/accounts', update: { method: 'PATCH', path: (id) => `/accounts/${id}` }, max: 300 },
  { name: 'DealCreate', create: '/deals', max: 300 },
  { name: 'DealUpdate', create: '/deals', update: { method: 'PATCH', path: (id) => `/deals/${id}` }, max: 300 },
  { name: 'KnowledgeDatasetCreate', create: '/knowledge-base/datasets', max: 200 },
  {
    name: 'KnowledgeDatasetPatch',
    create: '/knowledge-base/datasets',
    update: { method: 'PATCH', path: (id) => `/knowledge-base/datasets/${id}` },
    max: 200,
  },
];

/** Sends `body` where the case says, and what the served document says of it. */
async function send(c: NamedBody, body: Record<string, unknown>) {
  const valid = ajv.validate({ $ref: `doc#/components/schemas/${c.name}` }, body);
  let method = 'POST';
  let path = c.create;
  if (c.update) {
    const made = await ctx.request('POST', c.create, { token: tenant.session, body: { name: word(12) } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    method = c.update.method;
    path = c.update.path(made.body.id);
  }
  const res = await ctx.request(method, path, { token: tenant.session, body });
  return { valid, res };
}

describe('names: the document and the server take the same ones', () => {
  it.each(BODIES)('$name: no raw maxLength, a pattern asking for something besides white space', ({ name }) => {
    const schema = (document as unknown as { components: { schemas: Record<string, { properties: Record<string, object> }> } }).components
      .schemas[name]!.properties.name!;
    expect(schema).not.toHaveProperty('maxLength');
    expect(schema).toHaveProperty('pattern');
  });

  it.each(BODIES)('$name: a name of white space only is 422 at both', async (c) => {
    for (const blank of ['   ', '\t\n', '\u3000\u00a0']) {
      const { valid, res } = await send(c, { name: blank });
      expect(valid, JSON.stringify(blank)).toBe(false);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'name'] });
    }
  });

  it.each(BODIES)('$name: a padded name at the limit is taken by both and stored trimmed', async (c) => {
    const name = word(c.max);
    const { valid, res } = await send(c, { name: `  ${name} \n` });
    expect(valid).toBe(true);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.name).toBe(name);
  });

  it.each(BODIES)('$name: a padded name one past the limit is refused by both (422)', async (c) => {
    const { valid, res } = await send(c, { name: ` ${word(c.max + 1)} ` });
    expect(valid).toBe(false);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_too_long' });
  });

  it.each(['AccountCreate', 'DealCreate'])('%s: owner_id follows the same rule', async (name) => {
    const c = BODIES.find((b) => b.name === name)!;
    const blank = await send(c, { name: word(8), owner_id: '  ' });
    expect([blank.valid, blank.res.status]).toEqual([false, 422]);
    const padded = await send(c, { name: word(8), owner_id: ` ${'u'.repeat(200)} ` });
    expect([padded.valid, padded.res.status]).toEqual([true, 200]);
    expect(padded.res.body.owner_id).toBe('u'.repeat(200));
  });
});

describe('rules between fields: one object in the document, refused by the server in the validation format', () => {
  it('a contact without a first_name, last_name or email is 422, and the document says so', async () => {
    for (const body of [{}, { title: 'CEO' }, { first_name: '', last_name: null }, { email: null }]) {
      const valid = ajv.validate({ $ref: 'doc#/components/schemas/ContactCreate' }, body);
      expect(valid, JSON.stringify(body)).toBe(false);
      const res = await ctx.request('POST', '/contacts', { token: tenant.session, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail).toEqual([
        expect.objectContaining({
          type: 'value_error',
          loc: ['body'],
          msg: 'A contact needs at least one of first_name, last_name or email',
        }),
      ]);
    }
    expect(ajv.validate({ $ref: 'doc#/components/schemas/ContactCreate' }, { last_name: 'Lovelace' })).toBe(true);
    expect((await ctx.request('POST', '/contacts', { token: tenant.session, body: { last_name: 'Lovelace' } })).status).toBe(200);
  });

  it('a research run names exactly one target, and the document says so', async () => {
    for (const body of [{}, { domain: 'a.example', website: 'https://a.example' }]) {
      expect(ajv.validate({ $ref: 'doc#/components/schemas/ResearchRunCreate' }, body), JSON.stringify(body)).toBe(false);
      const res = await ctx.request('POST', '/intelligence/research-runs', { token: tenant.session, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail).toEqual([
        expect.objectContaining({ loc: ['body'], msg: 'Send exactly one of account_id, domain or website' }),
      ]);
    }
  });
});
