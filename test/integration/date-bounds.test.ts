import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATE_PATTERN, TIMESTAMP_PATTERN } from '../../api/schemas/dates';
import { signWebhook } from '../../platform/adapters/meetings/vendor';
import { signBody } from '../../platform/adapters/dialers/dialer';
import { ALWAYS, contact, type CampaignTenant } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import type { HttpResponse } from '../support/http';
import { externalId } from '../support/identity';

// Every date and timestamp a request takes, written at its extremes through every route that takes it
// (api/schemas/dates.ts): the first and last allowed are stored and read back from the single read and the
// list (activities, campaign contacts and keys have a list only); one below and one above are 422 naming the
// field, and nothing changes. A field the document has and the table below does not name fails the last test:
// a new date field gets a row here.

const MEETING_SECRET = `whsec_${crypto.randomBytes(24).toString('base64')}`;
const DIALER_SECRET = 'dialer-callback-secret-for-date-bounds';

type Kind = 'timestamp' | 'date';
/** What each kind takes at its ends, and what a read shows of them. */
const EXTREMES: Record<Kind, { allowed: [string, string][]; refused: string[] }> = {
  timestamp: {
    allowed: [
      ['1900-01-01T00:00:00Z', '1900-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ],
    // one below, the value that was once stored and broke every read of its list, one above (10000-01-01T00:00:59.999Z)
    refused: ['1899-12-31T23:59:59.999Z', '0021-05-24T22:52', '9999-12-31T23:59:59.999-00:01'],
  },
  date: {
    allowed: [
      ['1900-01-01', '1900-01-01'],
      ['9999-12-31', '9999-12-31'],
    ],
    refused: ['1899-12-31', '0021-05-24', '10000-01-01'],
  },
};

interface DateField {
  /** The operation and the field as the document names them: `POST /deals body.close_date`, `GET /core/agents query:created_after`. */
  field: string;
  kind: Kind;
  /** The field's own narrower end, with what a read shows of it (an expiry must lie ahead). */
  first?: [string, string];
  /** Sends a request carrying the value in the field. */
  write(value: string): Promise<HttpResponse>;
  /** The statuses of an accepted write (default 200). */
  accepted?: number[];
  /** The field as read back after an accepted write: from the single read (where the resource has one) and the list. */
  read?(written: HttpResponse, value: string): Promise<{ single?: unknown; list: unknown }>;
  /** What a refused write must leave unchanged. */
  state?(): Promise<unknown>;
  /** Why the field is not read back (a signed callback handed to a workflow). */
  unread?: string;
}

let ctx: TestContext;
let t: CampaignTenant;
const ids = { account: '', deal: '', card: '', campaign: '', sequence: '', credential: '', link: '' };
const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });
const ok = async (res: Promise<HttpResponse>) => {
  const r = await res;
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const items = (body: any): any[] => (Array.isArray(body) ? body : (body.data ?? body.share_links));
const inList = async (path: string, id: string, key: string) => items(await ok(call('GET', path))).find((x) => x.id === id)?.[key];
const one = async (path: string, key: string) => (await ok(call('GET', path)))[key];
const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString();

beforeAll(async () => {
  ctx = await createTestContext({ env: { MEETING_WEBHOOK_SECRETS: MEETING_SECRET, DIALER_CALLBACK_SECRET: DIALER_SECRET } });
  const org = externalId('org');
  const user = externalId('user');
  const scopes = ['api:read', 'api:manage', 'agents:manage', 'organizations:manage', 'outreach:manage'];
  const session = await ctx.session({ sub: user, org_id: org, org_ids: [org], permissions: scopes });
  t = { org, user, session, orgId: '', agentId: '' };
  t.orgId = (await ok(call('GET', '/me'))).organization.id;
  t.agentId = (await ok(call('POST', '/core/agents', { name: 'Caller' }))).id;
  await ok(call('GET', `/core/agents/${t.agentId}/versions/latest`)); // a draft, for the versions' filters
  ids.account = (await ok(call('POST', '/accounts', { name: 'Acme' }))).id;
  ids.deal = (await ok(call('POST', '/deals', { name: 'Renewal' }))).id;
  ids.card = (await ok(call('POST', '/cards', { name: 'Ada Lovelace' }))).id;
  ids.campaign = (await ok(call('POST', '/campaign/campaigns', { name: 'Dates', agent_id: t.agentId, calling_window: ALWAYS }))).id;
  ids.sequence = (await ok(call('POST', '/outreach/sequencer/sequences', { name: 'Patched' }))).id;
  ids.credential = (await ok(call('POST', '/workflow/credentials', { name: 'Typed in', value: { api_key: 'k' } }))).id;
});
afterAll(() => ctx?.close());

const activityField = (owner: 'accounts' | 'deals'): DateField => ({
  field: `POST /${owner}/{${owner === 'accounts' ? 'account' : 'deal'}_id}/activities body.due_at`,
  kind: 'timestamp',
  write: (v) => call('POST', `/${owner}/${ids[owner === 'accounts' ? 'account' : 'deal']}/activities`, { type: 'task', due_at: v }),
  read: async (res) => ({
    list: await inList(`/${owner}/${ids[owner === 'accounts' ? 'account' : 'deal']}/activities?limit=500`, res.body.id, 'due_at'),
  }),
  state: async () =>
    items(await ok(call('GET', `/${owner}/${ids[owner === 'accounts' ? 'account' : 'deal']}/activities?limit=500`))).length,
});

const campaignContactsField = (route: 'create' | 'add'): DateField => {
  let externalKey = '';
  const body = (v: string) => {
    externalKey = `dated-${crypto.randomUUID()}`;
    return { contacts: [contact({ external_id: externalKey, scheduled_at: v })] };
  };
  return {
    field:
      route === 'create'
        ? 'POST /campaign/campaigns body.contacts[].scheduled_at'
        : 'POST /campaign/campaigns/{id}/contacts body.contacts[].scheduled_at',
    kind: 'timestamp',
    write: (v) =>
      route === 'create'
        ? call('POST', '/campaign/campaigns', { name: 'Dates', agent_id: t.agentId, calling_window: ALWAYS, ...body(v) })
        : call('POST', `/campaign/campaigns/${ids.campaign}/contacts`, body(v)),
    read: async (res) => {
      const campaign = route === 'create' ? res.body.id : ids.campaign;
      await ok(call('GET', `/campaign/campaigns/${campaign}`)); // the campaign's own read answers too
      const list = items(await ok(call('GET', `/campaign/campaigns/${campaign}/contacts?limit=200`)));
      return { list: list.find((c) => c.external_id === externalKey)?.scheduled_at };
    },
    state: async () =>
      route === 'create'
        ? (await ok(call('GET', '/campaign/campaigns?limit=200'))).data.length
        : items(await ok(call('GET', `/campaign/campaigns/${ids.campaign}/contacts?limit=200`))).length,
  };
};

const patField = (kind: 'organization-pats' | 'user-pats'): DateField => ({
  field: `POST /${kind} body.expires_at`,
  kind: 'timestamp',
  first: [inOneHour(), ''],
  write: (v) => call('POST', `/${kind}`, { name: `expiring ${v}`, expires_at: v }),
  read: async (_res, v) => ({ list: items(await ok(call('GET', `/${kind}`))).find((k) => k.name === `expiring ${v}`)?.expires_at }),
  state: async () => items(await ok(call('GET', `/${kind}`))).length,
});

/** Every date field of every request, by operation. */
const TABLE: DateField[] = [
  activityField('accounts'),
  activityField('deals'),
  {
    field: 'POST /deals body.close_date',
    kind: 'date',
    write: (v) => call('POST', '/deals', { name: `Closing ${v}`, close_date: v }),
    read: async (res) => ({
      single: await one(`/deals/${res.body.id}`, 'close_date'),
      list: await inList('/deals?limit=500', res.body.id, 'close_date'),
    }),
    state: async () => (await ok(call('GET', '/deals?limit=500'))).length,
  },
  {
    field: 'PATCH /deals/{deal_id} body.close_date',
    kind: 'date',
    write: (v) => call('PATCH', `/deals/${ids.deal}`, { close_date: v }),
    read: async () => ({
      single: await one(`/deals/${ids.deal}`, 'close_date'),
      list: await inList('/deals?limit=500', ids.deal, 'close_date'),
    }),
    state: () => one(`/deals/${ids.deal}`, 'close_date'),
  },
  campaignContactsField('create'),
  campaignContactsField('add'),
  {
    field: 'POST /campaign/call-events body.started_at',
    kind: 'timestamp',
    write: (v) => signedCallEvent({ started_at: v }),
    accepted: [404], // valid, for an attempt this deployment never placed
    unread: "a call event is handed to the organization's dispatcher workflow, which records it",
  },
  {
    field: 'POST /campaign/call-events body.ended_at',
    kind: 'timestamp',
    write: (v) => signedCallEvent({ ended_at: v }),
    accepted: [404],
    unread: "a call event is handed to the organization's dispatcher workflow, which records it",
  },
  {
    field: 'POST /cards/{card_id}/share-links body.expires_at',
    kind: 'timestamp',
    first: [inOneHour(), ''],
    write: (v) => call('POST', `/cards/${ids.card}/share-links`, { source: 'dated', expires_at: v }),
    read: async (res) => ({
      single: await one(`/cards/${ids.card}/share-links/${res.body.id}`, 'expires_at'),
      list: await inList(`/cards/${ids.card}/share-links`, res.body.id, 'expires_at'),
    }),
    state: async () => items(await ok(call('GET', `/cards/${ids.card}/share-links`))).length,
  },
  {
    field: 'POST /meetings/bots body.join_at',
    kind: 'timestamp',
    write: (v) => call('POST', '/meetings/bots', { meeting_url: 'https://us02web.zoom.us/j/81234567890', join_at: v }),
    read: async (res) => ({
      single: await one(`/meetings/bots/${res.body.id}`, 'join_at'),
      list: await inList('/meetings/bots?limit=200', res.body.id, 'join_at'),
    }),
    state: async () => (await ok(call('GET', '/meetings/bots?limit=200'))).data.length,
  },
  {
    field: 'POST /meetings/webhooks/capture body.data.data.updated_at',
    kind: 'timestamp',
    write: (v) => {
      const body = JSON.stringify({
        event: 'bot.joining_call',
        data: { data: { code: 'joining_call', updated_at: v }, bot: { id: 'vendor-unknown' } },
      });
      const headers = { 'Content-Type': 'application/json', ...signWebhook(MEETING_SECRET, `msg_${crypto.randomUUID()}`, body) };
      return ctx.request('POST', '/meetings/webhooks/capture', { rawBody: body, headers });
    },
    accepted: [202], // valid, about no bot of ours
    unread: "a capture event is signalled to its bot's workflow, which records it",
  },
  patField('organization-pats'),
  patField('user-pats'),
  {
    field: 'POST /outreach/sequencer/sequences body.start_at',
    kind: 'timestamp',
    write: (v) => call('POST', '/outreach/sequencer/sequences', { name: `Starting ${v}`, start_at: v }),
    read: async (res) => ({
      single: await one(`/outreach/sequencer/sequences/${res.body.id}`, 'start_at'),
      list: await inList('/outreach/sequencer/sequences?limit=200', res.body.id, 'start_at'),
    }),
    state: async () => (await ok(call('GET', '/outreach/sequencer/sequences?limit=200'))).data.length,
  },
  {
    field: 'PATCH /outreach/sequencer/sequences/{sequence_id} body.start_at',
    kind: 'timestamp',
    write: (v) => call('PATCH', `/outreach/sequencer/sequences/${ids.sequence}`, { start_at: v }),
    read: async () => ({
      single: await one(`/outreach/sequencer/sequences/${ids.sequence}`, 'start_at'),
      list: await inList('/outreach/sequencer/sequences?limit=200', ids.sequence, 'start_at'),
    }),
    state: () => one(`/outreach/sequencer/sequences/${ids.sequence}`, 'start_at'),
  },
  {
    field: 'POST /workflow/credentials body.expires_at',
    kind: 'timestamp',
    write: (v) =>
      call('POST', '/workflow/credentials', { name: `Expiring ${crypto.randomUUID()}`, value: { api_key: 'k' }, expires_at: v }),
    read: async (res) => ({
      single: await one(`/workflow/credentials/${res.body.id}`, 'expires_at'),
      list: await inList('/workflow/credentials?limit=100', res.body.id, 'expires_at'),
    }),
    state: async () => (await ok(call('GET', '/workflow/credentials?limit=100'))).data.length,
  },
  {
    field: 'PUT /workflow/credentials/{credential_id}/value body.expires_at',
    kind: 'timestamp',
    write: (v) => call('PUT', `/workflow/credentials/${ids.credential}/value`, { value: { api_key: 'k2' }, expires_at: v }),
    read: async () => ({
      single: await one(`/workflow/credentials/${ids.credential}`, 'expires_at'),
      list: await inList('/workflow/credentials?limit=100', ids.credential, 'expires_at'),
    }),
    state: () => one(`/workflow/credentials/${ids.credential}`, 'expires_at'),
  },
  ...(['created_after', 'created_before', 'updated_after', 'updated_before'] as const).flatMap((name) =>
    (['/core/agents', '/core/agents/{id}/versions'] as const).map(
      (path): DateField => ({
        field: `GET ${path} query:${name}`,
        kind: 'timestamp',
        write: (v) => call('GET', `${path.replace('{id}', t.agentId)}?${name}=${encodeURIComponent(v)}`),
        // A filter is read back as what it selects: the agent (and its draft) made now lies after 1900 and before 9999.
        read: async (res) => ({ list: items(res.body).length > 0 }),
      }),
    ),
  ),
  ...(['/cards/{card_id}/events/summary', '/cards/{card_id}/share-links/{link_id}/events/summary'] as const).flatMap((path) =>
    (['from', 'to'] as const).map(
      (name): DateField => ({
        field: `GET ${path} query:${name}`,
        kind: 'date',
        write: async (v) => {
          const link = ids.link || (ids.link = (await ok(call('POST', `/cards/${ids.card}/share-links`, { source: 'summary' }))).id);
          const p = path.replace('{card_id}', ids.card).replace('{link_id}', link);
          // the other end of the range is the same day, so the summary is that one day
          return call('GET', `${p}?from=${encodeURIComponent(v)}&to=${encodeURIComponent(v)}`);
        },
        read: async (res) => ({ list: res.body.by_day.map((d: { date: string }) => d.date).join(',') }),
      }),
    ),
  ),
];

function signedCallEvent(times: Record<string, string>) {
  const raw = JSON.stringify({ idempotency_key: `never-placed-${crypto.randomUUID()}`, status: 'completed', ...times });
  return ctx.request('POST', '/campaign/call-events', {
    rawBody: raw,
    headers: { 'Content-Type': 'application/json', 'X-Dialer-Signature': signBody(DIALER_SECRET, raw) },
  });
}

/** What a read shows of an accepted value: a filter whether it selected what was made now, a summary the day it covers. */
function expected(row: DateField, shown: string, sent: string): unknown {
  if (/query:(created|updated)_after$/.test(row.field)) return sent.startsWith('1900');
  if (/query:(created|updated)_before$/.test(row.field)) return sent.startsWith('9999');
  if (row.field.includes('events/summary')) return sent;
  return shown;
}

describe.each(TABLE.map((row) => [row.field, row] as const))('%s', (_name, row) => {
  const [first, last] = EXTREMES[row.kind].allowed;
  const allowed = row.first ? [row.first, last!] : [first!, last!];

  it.each(allowed)('takes %s and reads it back', async (value, shown) => {
    const res = await row.write(value);
    expect(row.accepted ?? [200], `${res.status} ${res.text}`).toContain(res.status);
    if (!row.read) return expect(row.unread).toBeTruthy();
    const read = await row.read(res, value);
    // A narrower first end (a future expiry) reads back as its instant, normalized.
    const want = expected(row, shown || new Date(value).toISOString(), value);
    if ('single' in read) expect(read.single, 'single read').toEqual(want);
    expect(read.list, 'list').toEqual(want);
  });

  it.each(EXTREMES[row.kind].refused)('refuses %s with 422 naming the field, and changes nothing', async (value) => {
    const before = row.state ? await row.state() : undefined;
    const res = await row.write(value);
    expect(res.status, res.text).toBe(422);
    const fieldName = row.field.split(/[.:]/).pop();
    expect(
      res.body.detail.some((d: { loc: (string | number)[] }) => d.loc.at(-1) === fieldName),
      JSON.stringify(res.body.detail),
    ).toBe(true);
    if (row.state) expect(await row.state()).toEqual(before);
  });
});

type Schema = { [key: string]: any };

/** Every request field the document states with a date pattern or format, as `METHOD /path body.a.b` or `query:name`. */
function documentedDateFields(document: Schema): { field: string; pattern?: string; format?: string }[] {
  const components = document.components?.schemas ?? {};
  const found: { field: string; pattern?: string; format?: string }[] = [];
  const walk = (schema: Schema | undefined, at: string, seen: Set<string>): void => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.$ref) {
      const name = schema.$ref.split('/').pop();
      if (!seen.has(name)) walk(components[name], at, new Set([...seen, name]));
      return;
    }
    const isDate =
      schema.pattern === TIMESTAMP_PATTERN ||
      schema.pattern === DATE_PATTERN ||
      schema.format === 'date' ||
      schema.format === 'date-time' ||
      /(_at|_date|_day|_since|_until)$|^(due|expires|since|until|from|to|date|day)$/.test(at.split(/[.:]/).pop() ?? '');
    if (isDate && [schema.type].flat().includes('string')) found.push({ field: at, pattern: schema.pattern, format: schema.format });
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const s of schema[key] ?? []) walk(s, at, seen);
    for (const [name, s] of Object.entries(schema.properties ?? {})) walk(s as Schema, `${at}.${name}`, seen);
    if (schema.items) walk(schema.items, `${at}[]`, seen);
  };
  for (const [path, operations] of Object.entries(document.paths as Schema)) {
    for (const [method, operation] of Object.entries(operations as Schema)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const op = `${method.toUpperCase()} ${path}`;
      for (const p of operation.parameters ?? []) {
        const parameter = p.$ref ? document.components.parameters[p.$ref.split('/').pop()] : p;
        if (parameter.in === 'query') walk(parameter.schema, `${op} query:${parameter.name}`, new Set());
      }
      for (const media of Object.values(operation.requestBody?.content ?? {}) as Schema[]) walk(media.schema, `${op} body`, new Set());
    }
  }
  return found;
}

/**
 * Request fields named like dates that are not ours to bound, with why. (Twilio's `Timestamp` and Vapi's
 * `startedAt`, a provider's own formats, are read by domain/timestamps.ts's providerInstant and dropped outside the years.)
 */
const NOT_DATES: Record<string, string> = {
  'GET /storage/objects/{key} query:expires':
    "a signed URL's expiry in Unix seconds, covered by its signature: any other value is the same 403",
  'PUT /storage/objects/{key} query:expires':
    "a signed URL's expiry in Unix seconds, covered by its signature: any other value is the same 403",
};

describe('the table', () => {
  it('names every date field of every request the document has, each stated by one of the two helpers', async () => {
    const document = (await ctx.request('GET', '/openapi.json')).body;
    const fields = documentedDateFields(document);
    const named = new Set(TABLE.map((row) => row.field));
    const missing = fields.filter((f) => !named.has(f.field) && !(f.field in NOT_DATES)).map((f) => f.field);
    expect(missing, 'date fields without a row in TABLE').toEqual([]);
    const unbounded = fields
      .filter((f) => named.has(f.field) && f.pattern !== TIMESTAMP_PATTERN && f.pattern !== DATE_PATTERN)
      .map((f) => f.field);
    expect(unbounded, 'date fields not declared with timestampInput or dateInput').toEqual([]);
    const documented = new Set(fields.map((f) => f.field));
    expect(
      TABLE.map((row) => row.field).filter((f) => !documented.has(f)),
      'rows naming no field of the document',
    ).toEqual([]);
  });
});

describe('values stored before the bounds', () => {
  // Written straight to the database, as an earlier version or a hand edit could: every read still answers,
  // with the instant read exactly, or the nearest renderable one past the years 0001 to 9999 (db/kit/timestamps.ts).
  const STORED: [string, string][] = [
    ['0021-05-24 22:52:00+00', '0021-05-24T22:52:00.000Z'],
    ['0099-05-24 22:52:00+00', '0099-05-24T22:52:00.000Z'],
    ['0001-12-31 23:59:59+00 BC', '0001-01-01T00:00:00.000Z'],
    ['10000-01-01 00:59:00+00', '9999-12-31T23:59:59.999Z'],
    ['infinity', '9999-12-31T23:59:59.999Z'],
    ['-infinity', '0001-01-01T00:00:00.000Z'],
  ];

  it.each(STORED)('a sequence starting %s reads as %s, alone and in its list', async (stored, shown) => {
    await ctx.deps.sql`UPDATE outreach_sequences SET start_at = ${stored}::text::timestamptz WHERE id = ${ids.sequence}`;
    expect(await one(`/outreach/sequencer/sequences/${ids.sequence}`, 'start_at')).toBe(shown);
    expect(await inList('/outreach/sequencer/sequences?limit=200', ids.sequence, 'start_at')).toBe(shown);
  });

  it.each(STORED)('a credential expiring %s reads as %s, alone and in its list', async (stored, shown) => {
    await ctx.deps.sql`UPDATE workflow_credentials SET expires_at = ${stored}::text::timestamptz WHERE id = ${ids.credential}`;
    expect(await one(`/workflow/credentials/${ids.credential}`, 'expires_at')).toBe(shown);
    expect(await inList('/workflow/credentials?limit=100', ids.credential, 'expires_at')).toBe(shown);
  });

  it.each(STORED)('an activity due %s reads as %s in its list', async (stored, shown) => {
    const id = (await ok(call('POST', `/accounts/${ids.account}/activities`, { type: 'task' }))).id;
    await ctx.deps.sql`UPDATE activities SET due_at = ${stored}::text::timestamptz WHERE id = ${id}`;
    expect(await inList(`/accounts/${ids.account}/activities?limit=500`, id, 'due_at')).toBe(shown);
  });

  it.each([
    ['0021-05-24', '0021-05-24'],
    ['0044-03-15 BC', '0001-01-01'],
    ['10000-01-01', '9999-12-31'],
    ['infinity', '9999-12-31'],
  ])('a deal closing %s reads as %s, alone and in its list', async (stored, shown) => {
    await ctx.deps.sql`UPDATE deals SET close_date = ${stored}::text::date WHERE id = ${ids.deal}`;
    expect(await one(`/deals/${ids.deal}`, 'close_date')).toBe(shown);
    expect(await inList('/deals?limit=500', ids.deal, 'close_date')).toBe(shown);
  });

  it('reads a session in another time zone exactly (offsets with seconds before standard time)', async () => {
    const [row] = await ctx.deps.sql.begin(async (tx) => {
      await tx`SET LOCAL TIME ZONE 'Europe/Paris'`;
      return tx<
        { t: Date; text: string }[]
      >`SELECT '1900-01-01 00:00:00+00'::timestamptz AS t, '1900-01-01 00:00:00+00'::timestamptz::text AS text`;
    });
    expect(row!.text).toBe('1900-01-01 00:09:21+00:09:21');
    expect(row!.t.toISOString()).toBe('1900-01-01T00:00:00.000Z');
  });
});
