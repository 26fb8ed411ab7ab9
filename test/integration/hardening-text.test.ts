import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createContact, crmTenant, type CrmTenant } from '../support/crm-contacts';
import { timed } from '../support/faults';

// Text the service cannot store as sent (a lone UTF-16 surrogate, U+0000) is refused at the door, on
// every kind of route, at once, and leaves the pool serving: probes that keep these closed.

let ctx: TestContext;
let t: CrmTenant;
let contactId: string;
let tagId: string;
const TABLE = 'probe_rows';
beforeAll(async () => {
  ctx = await createTestContext();
  t = await crmTenant(ctx);
  contactId = (await createContact(ctx, t, { first_name: 'Grace', last_name: 'Hopper' })).id;
  tagId = (await ctx.request('POST', '/tags', { token: t.session, body: { name: 'probe' } })).body.id;
  const table = await ctx.request('PUT', `/core/custom-data/tables/${TABLE}`, {
    token: t.session,
    body: {
      key: ['id'],
      properties: [
        { name: 'id', type: 'string' },
        { name: 'v', type: 'string' },
      ],
    },
  });
  expect(table.status).toBe(200);
});
afterAll(() => ctx?.close());

const POOL = 5; // test/support/context.ts
const send = (method: string, path: string, rawBody: string) =>
  ctx.request(method, path, { token: t.session, rawBody, headers: { 'Content-Type': 'application/json' } });

/** One route of each kind that reads a JSON body, with a body whose text field is `text` (JSON). */
const probes = (text: string) => [
  { kind: 'an ordinary create', method: 'POST', path: '/tags', body: `{"name":${text}}`, field: ['name'] },
  {
    kind: 'a create with several fields',
    method: 'POST',
    path: '/contacts',
    body: `{"first_name":${text},"last_name":"x"}`,
    field: ['first_name'],
  },
  { kind: 'a PATCH', method: 'PATCH', path: () => `/contacts/${contactId}`, body: `{"last_name":${text}}`, field: ['last_name'] },
  { kind: 'a PATCH of a tag', method: 'PATCH', path: () => `/tags/${tagId}`, body: `{"name":${text}}`, field: ['name'] },
  {
    kind: 'a custom data bulk upsert',
    method: 'POST',
    path: `/core/custom-data/tables/${TABLE}/upsert`,
    body: `{"rows":[{"id":"r","v":${text}}]}`,
    field: ['rows', 0, 'v'],
  },
  {
    kind: 'a custom data bulk replace',
    method: 'POST',
    path: `/core/custom-data/tables/${TABLE}/replace`,
    body: `{"rows":[{"id":"r","v":${text}}]}`,
    field: ['rows', 0, 'v'],
  },
];
const pathOf = (p: { path: string | (() => string) }) => (typeof p.path === 'function' ? p.path() : p.path);

const serves = async () => {
  const { value, ms } = await timed(() => ctx.request('GET', '/tags', { token: t.session }));
  expect(value.status).toBe(200);
  expect(ms).toBeLessThan(10_000); // a held connection would be freed only by the 15 s idle-in-transaction timeout
};

describe('a lone UTF-16 surrogate escape', () => {
  it.each(probes('"a\\ud800b"'))('in $kind is 400 at once, more of them than the pool holds, and the pool serves after', async (probe) => {
    const { value: answers, ms } = await timed(() =>
      Promise.all(Array.from({ length: POOL * 2 }, () => send(probe.method, pathOf(probe), probe.body))),
    );
    expect(ms).toBeLessThan(10_000); // at once, on a loaded machine: well below the 15 s a held connection waits
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        detail: `Request body is not valid Unicode: a lone UTF-16 surrogate (\\ud800) in the value at ${['body', ...probe.field].join('.')}`,
      });
    }
    await serves();
  });

  it('is never stored as U+FFFD', async () => {
    const tags = (await ctx.request('GET', '/tags', { token: t.session })).body.tags as { name: string }[];
    expect(tags.map((tag) => tag.name)).toEqual(['probe']);
    const contact = (await ctx.request('GET', `/contacts/${contactId}`, { token: t.session })).body;
    expect(contact).toMatchObject({ first_name: 'Grace', last_name: 'Hopper' });
    const rows = (await ctx.request('GET', `/core/custom-data/tables/${TABLE}/rows?state=all`, { token: t.session })).body;
    expect(rows.data).toEqual([]);
  });

  it('is refused as a low surrogate, and in a property name, too; a real pair is text like any other', async () => {
    expect((await send('POST', '/tags', '{"name":"\\udc00"}')).status).toBe(400);
    expect((await send('POST', '/tags', '{"name":"x","\\ud83d":1}')).body.detail).toMatch(/in the property name at body\.\ud83d$/);
    const pair = await send('POST', '/tags', '{"name":"smile \\ud83d\\ude00"}');
    expect(pair.status).toBe(200);
    expect(pair.body.name).toBe('smile 😀');
  });

  it('is documented among the 400 answers of routes with a body', async () => {
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    expect(doc.paths['/tags'].post.responses['400'].description).toMatch(/lone UTF-16 surrogate/);
    expect(doc.paths['/core/custom-data/tables/{name}/upsert'].post.responses['400'].description).toMatch(/lone UTF-16 surrogate/);
  });
});

describe('U+0000', () => {
  it.each(probes('"a\\u0000b"'))('in $kind is 422 naming the field, before any query', async (probe) => {
    const res = await send(probe.method, pathOf(probe), probe.body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', ...probe.field],
          msg: 'Value error, the character U+0000 (NUL) is not accepted (in the value)',
          input: null,
          ctx: {},
        },
      ],
    });
    await serves();
  });

  it('in a query value is 422 naming the parameter; percent-escapes that are not UTF-8 are 400', async () => {
    const nul = await ctx.request('GET', '/contacts?search=a%00b', { token: t.session });
    expect(nul.status).toBe(422);
    expect(nul.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['query', 'search'], msg: expect.stringContaining('U+0000') }),
    ]);
    const notUtf8 = await ctx.request('GET', '/contacts?search=%ED%A0%80', { token: t.session });
    expect(notUtf8.status).toBe(400);
    expect(notUtf8.body).toEqual({ detail: 'Query string is not valid UTF-8' });
    expect((await ctx.request('GET', '/contacts?search=100%25', { token: t.session })).status).toBe(200);
  });
});
