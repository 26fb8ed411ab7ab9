import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createContact, crmTenant, type CrmTenant } from '../support/crm-contacts';
import { newTenant } from '../support/identity';

// The spec's rules that the service departed from, and what the document states about itself.
let ctx: TestContext;
let t: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext();
  t = await crmTenant(ctx);
});
afterAll(() => ctx?.close());

const FIVE_KEYS = ['ctx', 'input', 'loc', 'msg', 'type'];

describe('departures from the spec', () => {
  it('serves any integer limit above the cap as the cap, however large', async () => {
    for (const limit of ['9999999999999999999999999', '501', '9007199254740993']) {
      const res = await ctx.request('GET', `/accounts?limit=${limit}`, { token: t.session });
      expect(res.status, res.text).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
    }
    expect((await ctx.request('GET', '/accounts?limit=0', { token: t.session })).status).toBe(422);
    expect((await ctx.request('GET', '/accounts?limit=1.5', { token: t.session })).status).toBe(422);
  });

  it('gives every 422 item type, loc, msg, input (null when absent) and ctx', async () => {
    const agent = await ctx.request('POST', '/core/agents', { token: t.session, body: { name: 'A' } });
    expect(agent.status).toBe(200);
    const bodies: [string, string, unknown][] = [
      ['POST', `/core/agents/${agent.body.id}/versions`, { config: { tools: [{ type: 'nope' }, {}] } }],
      ['POST', '/accounts', {}],
      ['POST', '/deals', { name: 'x', stage: 'nowhere' }],
      ['POST', '/tags', { color: 5 }],
    ];
    for (const [method, path, body] of bodies) {
      const res = await ctx.request(method, path, { token: t.session, body });
      expect(res.status, `${path} ${res.text}`).toBe(422);
      for (const item of res.body.detail) expect(Object.keys(item).sort(), `${path} ${JSON.stringify(item)}`).toEqual(FIVE_KEYS);
    }
  });

  it('lets PATCH clear first_name, last_name and email together', async () => {
    const contact = await createContact(ctx, t, { email: `ada-${Date.now()}@example.com` });
    const res = await ctx.request('PATCH', `/contacts/${contact.id}`, {
      token: t.session,
      body: { first_name: null, last_name: null, email: null },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ first_name: null, last_name: null, email: null });
  });

  it('refuses unknown query parameters on routes without a query schema, and declares the 400', async () => {
    const contact = await createContact(ctx, t);
    for (const path of ['/tags?limit=1', `/contacts/${contact.id}?foo=1`]) {
      const res = await ctx.request('GET', path, { token: t.session });
      expect(res.status, path).toBe(400);
      expect(res.body.detail).toMatch(/^Unknown filter/);
    }
    const document = (await ctx.request('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/accounts', 'get'],
      ['/accounts/{account_id}/health', 'get'],
      ['/folders/{folder_id}', 'delete'],
      ['/tags', 'get'],
    ] as const) {
      expect(document.paths[path][method].responses['400'], `${method} ${path}`).toBeDefined();
    }
  });

  it('takes ISO 8601 timestamps without an offset, and dates, as UTC', async () => {
    const account = await ctx.request('POST', '/accounts', { token: t.session, body: { name: 'Acme' } });
    for (const [due, expected] of [
      ['2030-01-01T10:00:00', '2030-01-01T10:00:00.000Z'],
      ['2030-01-01', '2030-01-01T00:00:00.000Z'],
    ]) {
      const res = await ctx.request('POST', `/accounts/${account.body.id}/activities`, {
        token: t.session,
        body: { type: 'task', due_at: due },
      });
      expect(res.status, res.text).toBe(200);
      const feed = await ctx.request('GET', `/accounts/${account.body.id}/activities`, { token: t.session });
      const item = (feed.body.activities ?? feed.body.items ?? feed.body).find?.((a: { id: string }) => a.id === res.body.id);
      if (item) expect(new Date(item.due_at ?? item.effective_time).toISOString()).toBe(expected);
    }
    const bad = await ctx.request('POST', `/accounts/${account.body.id}/activities`, {
      token: t.session,
      body: { type: 'task', due_at: '2030-02-30' },
    });
    expect(bad.status).toBe(422);
  });

  it('answers 415 to a JSON body sent with another media type', async () => {
    const contact = await createContact(ctx, t);
    const res = await ctx.request('PATCH', `/contacts/${contact.id}`, {
      token: t.session,
      rawBody: JSON.stringify({ first_name: 'Grace' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(Object.keys(res.body)).toEqual(['detail']);
    expect((await ctx.request('GET', `/contacts/${contact.id}`, { token: t.session })).body.first_name).toBe('Ada');
  });

  it('answers an undeclared method on a literal path 405 with its own Allow, not its parametric sibling', async () => {
    const res = await ctx.request('PATCH', '/contacts/import', { token: t.session, body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const options = await ctx.request('OPTIONS', '/files/initiate-upload', { token: t.session });
    expect(options.status).toBe(405);
    expect(options.headers.get('allow')).toBe('POST');
  });
});

describe('the document as tools read it', () => {
  it('has servers, a description, a licence, a contact and a unique operationId on every operation', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    expect(document.servers.length).toBeGreaterThan(0);
    expect(document.info.description).toBeTruthy();
    expect(document.info.license.name).toBeTruthy();
    expect(document.info.contact).toBeTruthy();
    const ids: string[] = [];
    for (const item of Object.values(document.paths) as Record<string, { operationId?: string }>[]) {
      for (const [method, operation] of Object.entries(item))
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) ids.push(operation.operationId!);
    }
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['listAccounts', 'patchContact', 'publishAgentVersion']));
    const tags = new Set(
      Object.values(document.paths).flatMap((item) =>
        Object.values(item as Record<string, { tags?: string[] }>).flatMap((op) => op.tags ?? []),
      ),
    );
    for (const tag of document.tags) expect(tags.has(tag.name), tag.name).toBe(true);
  });

  it('marks PATCH bodies minProperties 1, and a body required only where the server needs one', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    const schemaOf = (op: { requestBody: { content: Record<string, { schema: { $ref?: string } }> } }) => {
      const schema = op.requestBody.content['application/json']!.schema;
      return schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()!] : schema;
    };
    expect(schemaOf(document.paths['/contacts/{contact_id}'].patch).minProperties).toBe(1);
    expect(document.paths['/core/agents/{id}/versions/{version}/publish'].post.requestBody?.required ?? false).toBe(false);
    expect(document.paths['/accounts'].post.requestBody.required).toBe(true);
  });

  it('states "exactly one of config or base_version" as a not of the bodies breaking it, and the server answers it', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    const create = document.paths['/core/agents/{id}/versions'].post.requestBody;
    expect(create.required).toBe(true);
    // One object for generators (no oneOf), the rule as the bodies it refuses: neither field, or both.
    const schema = create.content['application/json'].schema;
    expect(schema.oneOf).toBeUndefined();
    expect(schema.not).toEqual({
      anyOf: [
        { properties: { config: { not: {} }, base_version: { not: {} } } },
        { required: ['config', 'base_version'], properties: { config: {}, base_version: {} } },
      ],
    });
    const tenant = await newTenant(ctx, ['api:read', 'api:manage', 'agents:manage']);
    const agent = (await ctx.request('POST', '/core/agents', { token: tenant.session, body: { name: 'One of' } })).body;
    const postVersion = (body: object) => ctx.request('POST', `/core/agents/${agent.id}/versions`, { token: tenant.session, body });
    expect((await postVersion({})).status).toBe(422);
    expect((await postVersion({ config: {}, base_version: 1 })).status).toBe(422);
    expect((await postVersion({ config: {} })).status).toBe(200);
    expect((await postVersion({ base_version: 1 })).status).toBe(200);
  });

  it('has no two paths that each hold a parameter where the other holds a literal (Redocly no-ambiguous-paths)', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    const isParam = (segment: string) => segment.startsWith('{');
    const crosses = (a: string[], b: string[]) =>
      a.length === b.length &&
      a.every((x, k) => x === b[k] || isParam(x) || isParam(b[k]!)) &&
      a.some((x, k) => isParam(x) && !isParam(b[k]!)) &&
      b.some((x, k) => isParam(x) && !isParam(a[k]!));
    const paths = Object.keys(document.paths);
    const ambiguous = paths.flatMap((a, i) =>
      paths
        .slice(i + 1)
        .filter((b) => crosses(a.split('/'), b.split('/')))
        .map((b) => `${a} ~ ${b}`),
    );
    expect(ambiguous).toEqual([]);
  });
});
