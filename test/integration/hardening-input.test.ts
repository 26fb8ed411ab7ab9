import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, type CrmTenant } from '../support/crm-contacts';

let ctx: TestContext;
let t: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext();
  t = await crmTenant(ctx);
});
afterAll(() => ctx?.close());

const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const post = (path: string, rawBody: string | Buffer, contentType = 'application/json') =>
  ctx.request('POST', path, { token: t.session, rawBody, headers: { 'Content-Type': contentType } });
const tagNames = async () =>
  ((await ctx.request('GET', '/tags', { token: t.session })).body.tags as { name: string }[]).map((tag) => tag.name);

describe('deeply nested JSON', () => {
  it.each([65, 5_000, 100_000])(
    'is 400 {detail} at depth %i, arrays or objects, before validation (an anonymous caller: 401, unread)',
    async (depth) => {
      for (const inner of [nestedArrays(depth), nestedObjects(depth)]) {
        const res = await post('/tags', `{"name":${inner}}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ detail: 'JSON nested deeper than 64 levels' });
        // Authentication comes before the body is read (hardening-body-auth.test.ts).
        const anonymous = await ctx.request('POST', '/tags', { rawBody: inner, headers: { 'Content-Type': 'application/json' } });
        expect(anonymous.status).toBe(401);
      }
    },
  );

  it('accepts the limit itself and answers 422 with an echo bounded in depth and size', async () => {
    const res = await post('/tags', `{"name":${nestedArrays(63)}, "color": "${'x'.repeat(100_000)}"}`);
    expect(res.status).toBe(422);
    expect(res.text.length).toBeLessThan(8_000);
    const name = res.body.detail.find((d: { loc: unknown[] }) => d.loc[1] === 'name');
    expect(name.type).toBe('string_type');
    expect(JSON.stringify(name.input)).toMatch(/^\[\[\[\[\[\[\[\[null\]\]\]\]\]\]\]\]$/);
  });

  it('leaves ordinary bodies, the empty body and malformed JSON as they were', async () => {
    expect((await post('/tags', '{"name":"plain"}')).status).toBe(200);
    const malformed = await post('/tags', '{"name":');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0] });
    expect((await post('/tags', '"a string"')).status).toBe(422);
  });
});

describe('request text encoding', () => {
  it('refuses invalid UTF-8 with 400 {detail} and stores nothing', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await post('/tags', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Request body is not valid UTF-8' });
    const overlong = Buffer.concat([Buffer.from('{"name":"x'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    expect((await post('/tags', overlong)).status).toBe(400);
    expect((await tagNames()).filter((n) => n.startsWith('bad') || n.startsWith('x'))).toEqual([]);
  });

  it('refuses a charset other than UTF-8 with 415 and stores nothing; utf-8 in any spelling is accepted', async () => {
    const latin1 = Buffer.from('{"name":"caf\xe9"}', 'latin1');
    for (const charset of ['latin1', 'ISO-8859-1', 'utf-16']) {
      const res = await post('/tags', latin1, `application/json; charset=${charset}`);
      expect(res.status).toBe(415);
      expect(res.body.detail).toMatch(/UTF-8/);
    }
    expect(await tagNames()).not.toContain('café');
    expect((await post('/tags', '{"name":"café"}', 'application/json; charset=UTF-8')).status).toBe(200);
    expect((await post('/tags', '{"name":"tea"}', 'application/json; charset=utf8')).status).toBe(200);
    expect(await tagNames()).toEqual(expect.arrayContaining(['café', 'tea']));
  });

  it('documents 400, 413 and 415 on routes that take a body', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/tags'].post.responses)).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
  });
});

describe('query integers', () => {
  it('refuses an empty, blank or non-decimal offset with 422 on every list that takes one, and the document says integer', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const lists = Object.entries(
      doc.paths as Record<string, Record<string, { parameters?: { name: string; schema: { type: unknown } }[] }>>,
    )
      .filter(([path, ops]) => !path.includes('{') && ops.get?.parameters?.some((p) => p.name === 'offset'))
      .map(([path, ops]) => ({ path, schema: ops.get!.parameters!.find((p) => p.name === 'offset')!.schema }));
    expect(lists.map((l) => l.path)).toEqual(expect.arrayContaining(['/deals', '/accounts', '/contacts', '/files/list', '/folders']));
    const offsetIssue = (body: { detail?: unknown }) =>
      Array.isArray(body.detail) && body.detail.some((d: { loc: unknown[] }) => d.loc[0] === 'query' && d.loc[1] === 'offset');
    for (const { path, schema } of lists) {
      expect(schema.type, path).toBe('integer'); // not ['integer', 'null']: a null offset is no offset a query can send
      for (const bad of ['', '%20', '1e3', '0x10', '1.5', '-1', 'abc']) {
        const res = await ctx.request('GET', `${path}?offset=${bad}`, { token: t.session });
        expect(res.status, `${path}?offset=${bad} ${res.text}`).toBe(422);
        expect(offsetIssue(res.body), `${path}?offset=${bad}`).toBe(true);
      }
      const good = await ctx.request('GET', `${path}?offset=3`, { token: t.session });
      expect(offsetIssue(good.body), `${path}?offset=3 ${good.text}`).toBe(false);
    }
    const deals = await ctx.request('GET', '/deals?offset=', { token: t.session });
    expect(deals.body.detail[0]).toMatchObject({ type: 'float_type', loc: ['query', 'offset'], input: '' });
  });
});
