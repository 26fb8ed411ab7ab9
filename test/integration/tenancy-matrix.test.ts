import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createTestContext, type TestContext } from '../support/context';
import { pngBytes } from '../support/cards';
import { newTenant, orgUuid, type Tenant } from '../support/identity';
import { insertConnection } from '../../db/integrations';
import { newId } from '../../platform/core/ids';

// Every route with an id in its path, walked from the app's own route list: organization A sends
// organization B's real ids (one of each resource, created first) and gets 404 every time. A new route
// is covered by being declared; one whose path parameter has no fixture here fails until it gets one.

/** Path parameters that are no organization's resource id, with the reason they are left out. */
const NOT_IDS: Record<string, string> = {
  key: 'storage object keys are signed capabilities (public route), not organization ids',
  token: 'share tokens are public capabilities, answered 404 when unknown by their own tests',
  file: 'public media file names are read through an allowlisted key, not an organization id',
  index: 'a link position inside a public share page',
  event_type: 'a notification event type name, the same catalog in every organization',
  workflow_id: 'a workflow id is `<kind>:<id>`: covered through the ids it embeds (built below)',
  feedback_id: "feedback is global, not an organization's: only the service's operators address it by id",
};

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
const ids: Record<string, string> = {};
const fixtureErrors: string[] = [];

async function create(path: string, body: unknown, token = b.session, method = 'POST'): Promise<Record<string, unknown> | undefined> {
  const res = await ctx.request(method, path, { token, body });
  if (res.status !== 200 && res.status !== 201 && res.status !== 202) {
    fixtureErrors.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return undefined;
  }
  return res.body as Record<string, unknown>;
}
const idOf = (body: Record<string, unknown> | undefined) => (body?.id ?? body?.dataset_id ?? body?.source_id) as string | undefined;

beforeAll(async () => {
  ctx = await createTestContext();
  const scopes = ['api:read', 'api:manage', 'agents:manage', 'organizations:manage', 'data:access', 'outreach:provision'];
  [a, b] = await Promise.all([newTenant(ctx, scopes), newTenant(ctx, scopes)]);

  const account = idOf(await create('/accounts', { name: 'Other Org Inc' }))!;
  ids.account_id = account;
  const contact = idOf(await create('/contacts', { first_name: 'Bea', account_id: account }));
  if (contact) ids.contact_id = contact;
  const deal = idOf(await create('/deals', { name: 'Big deal', account_id: account }));
  if (deal) ids.deal_id = deal;
  const activity = idOf(await create(`/accounts/${account}/activities`, { type: 'note', summary: 'hello' }));
  if (activity) ids.activity_id = activity;
  const tag = idOf(await create('/tags', { name: 'vip' }));
  if (tag) ids.tag_id = tag;
  const folder = idOf(await create('/folders', { name: 'Docs' }));
  if (folder) ids.folder_id = folder;
  const file = await create('/files/initiate-upload', { name: 'a.txt', content_type: 'text/plain' });
  const fileId = (file?.file_id ?? file?.id) as string | undefined;
  if (fileId) ids.file_id = fileId;
  const agent = idOf(await create('/core/agents', { name: 'Caller' }));
  if (agent) {
    ids.id = agent;
    const widget = idOf(await create(`/core/agents/${agent}/widgets`, { name: 'B widget', allowed_origins: ['https://b.example'] }));
    if (widget) ids.widget_id = widget;
    // A replay of one of B's agent's conversations, and a batch of them (their rows straight in: a replay needs a recorded call).
    const orgB = await orgUuid(ctx, b);
    const conversation = newId();
    await ctx.deps.sql`
      INSERT INTO conversations (id, org_id, agent_id, agent_version, direction, channel, status, started_at, ended_at)
      VALUES (${conversation}, ${orgB}, ${agent}, 1, 'inbound', 'widget', 'completed', now(), now())`;
    ids.batch_id = newId();
    ids.replay_id = newId();
    await ctx.deps.sql`
      INSERT INTO conversation_replay_batches (id, org_id, agent_id, version) VALUES (${ids.batch_id}, ${orgB}, ${agent}, 1)`;
    await ctx.deps.sql`
      INSERT INTO conversation_replays (id, org_id, agent_id, conversation_id, batch_id, version)
      VALUES (${ids.replay_id}, ${orgB}, ${agent}, ${conversation}, ${ids.batch_id}, 1)`;
    const campaign = idOf(
      await create('/campaign/campaigns', {
        name: 'Spring',
        agent_id: agent,
        calling_window: { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] },
      }),
    );
    if (campaign) ids.campaign_id = campaign;
  }
  const phone = idOf(await create('/core/phone-numbers', { number: '+14155550199' }));
  if (phone) ids.phone_id = phone;
  // The do-not-call list is addressed by the number itself.
  if (await create('/core/do-not-call', { number: '+14155550198' })) ids.number = '+14155550198';
  const profile = idOf(
    await create('/intelligence/icp-profiles', { name: 'ICP', criteria: [{ type: 'industry', values: ['software'], weight: 1 }] }),
  );
  if (profile) {
    ids.profile_id = profile;
    const fit = idOf(await create('/intelligence/icp-fit-runs', { profile_id: profile, account_ids: [account] }));
    if (fit) ids.fit_run_id = fit;
  }
  const card = idOf(await create('/cards', { name: 'Bea Other' }));
  if (card) {
    ids.card_id = card;
    const link = await create(`/cards/${card}/share-links`, {});
    if (link) {
      ids.link_id = link.id as string;
      // A lead in B's card inbox, sent through the public form.
      await ctx.request('POST', `/share/${link.token}/leads`, { body: { name: 'Lee Lead', email: 'lee@example.com', consent: true } });
      const [lead] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM card_leads WHERE card_id = ${card}`;
      if (lead) ids.lead_id = lead.id;
      else fixtureErrors.push('no lead in the card inbox');
    }
  }
  const suppression = idOf(await create('/outreach/suppressions', { email: 'gone@other.example' }));
  if (suppression) ids.suppression_id = suppression;
  const dataset = idOf(await create('/knowledge-base/datasets', { name: 'Docs' }));
  if (dataset) ids.dataset_id = dataset;
  const credential = idOf(await create('/workflow/credentials', { name: 'crm-token' }));
  if (credential) {
    ids.credential_id = credential;
    // A connection is made only by a provider's consent: its row goes straight in, holding B's credential.
    ids.connection_id = newId();
    await insertConnection(ctx.deps.sql, await orgUuid(ctx, b), ids.connection_id, {
      integration: 'acme',
      externalAccountId: 'b-account',
      externalAccountLabel: 'b@example.com',
      grantedScopes: [],
      endUserId: null,
      connectedBy: `user:${b.user}`,
      credentialId: credential,
    });
  }
  const bot = idOf(await create('/meetings/bots', { meeting_url: 'https://zoom.us/j/1234567890' }));
  if (bot) ids.bot_id = bot;
  const run = idOf(await create('/intelligence/research-runs', { domain: 'example.com' }));
  if (run) ids.run_id = run;
  const source = idOf(await create('/knowledge-base/sources', { type: 'URL', url: 'https://example.com/docs' }));
  if (source) ids.source_id = source;
  const table = await create(
    '/core/custom-data/tables/orders',
    { key: ['order_id'], properties: [{ name: 'order_id', type: 'string' }] },
    b.session,
    'PUT',
  );
  if (table) ids.name = 'orders';
  const outreachDomain = idOf(await create('/outreach/domains', { name: 'other-org-mail.com' }));
  if (outreachDomain) ids.domain_id = outreachDomain;
  const mailbox = idOf(
    await create('/outreach/mailboxes', {
      email_address: 'sender@other-org-mail.com',
      smtp: { host: '127.0.0.1', port: 2525, secure: false },
    }),
  );
  if (mailbox) {
    ids.mailbox_id = mailbox;
    const sequence = idOf(
      await create('/outreach/sequencer/sequences', {
        name: 'Cold',
        steps: [{ delay_days: 0, subject: 'Hi', body: 'Hello' }],
        mailbox_ids: [mailbox],
      }),
    );
    const prospect = idOf(await create('/contacts', { first_name: 'Pia', email: 'pia@prospect.example' }));
    if (sequence && prospect) {
      ids.sequence_id = sequence;
      const enrolled = await create(`/outreach/sequencer/sequences/${sequence}/enrollments`, { contact_ids: [prospect] });
      const enrollment = (enrolled?.enrolled as { id: string }[] | undefined)?.[0]?.id;
      if (enrollment) ids.enrollment_id = enrollment;
      // A thread starts with a sent message: its row goes straight in, under B's sequence.
      ids.thread_id = newId();
      await ctx.deps.sql`
        INSERT INTO outreach_threads (id, org_id, mailbox_id, sequence_id, contact_id, subject, counterpart)
        VALUES (${ids.thread_id}, ${await orgUuid(ctx, b)}, ${mailbox}, ${sequence}, ${prospect}, 'Hi', 'pia@prospect.example')`;
    }
  }
  // A notification exists only for its recipient: B's user gets one straight in the feed table.
  ids.notification_id = newId();
  await ctx.deps.sql`
    INSERT INTO notification_items (id, org_id, user_id, event_id, event_type, category, entity_type, entity_id, title, body, payload)
    SELECT ${ids.notification_id}, ${await orgUuid(ctx, b)}, u.id, ${newId()}, 'deal.created', 'deals', 'deal', 'x', 'Deal created', 'x', '{}'
    FROM users u WHERE u.external_id = ${b.user}`;
  // An AI chat of B and a change proposed in it (a proposal is made by a turn: its rows go straight in).
  const chat = idOf(await create('/ai/chats', { title: 'B chat' }));
  if (chat) {
    ids.chat_id = chat;
    const orgB = await orgUuid(ctx, b);
    const turn = newId();
    await ctx.deps.sql`
      INSERT INTO ai_chat_turns (id, org_id, chat_id, status, user_message, assistant_message_id, first_frame_id)
      VALUES (${turn}, ${orgB}, ${chat}, 'awaiting_approval', ${ctx.deps.sql.json({ id: 'm', role: 'user', parts: [] })}, 'a', 1)`;
    ids.approval_id = newId();
    await ctx.deps.sql`
      INSERT INTO ai_chat_approvals (id, org_id, chat_id, turn_id, step, tool_call_id, tool_name, input, input_hash, status, expires_at)
      VALUES (${ids.approval_id}, ${orgB}, ${chat}, ${turn}, 0, 'c', 'update_account', '{}', 'x', 'pending', now() + interval '1 day')`;
  }
  // An Analytics Assistant conversation of B's user (a conversation is made by a question: its row goes straight in).
  ids.conversation_id = newId();
  await ctx.deps.sql`
    INSERT INTO analytics_conversations (id, org_id, owner_user_id, title)
    SELECT ${ids.conversation_id}, ${await orgUuid(ctx, b)}, u.id, 'B question' FROM users u WHERE u.external_id = ${b.user}`;
  // A webhook endpoint of B, and a message to it (an event after the endpoint: a deal created).
  const endpoint = idOf(await create('/webhooks/endpoints', { url: 'https://hooks.other.example/in' }));
  if (endpoint) {
    ids.endpoint_id = endpoint;
    await create('/deals', { name: 'Webhook deal' });
    const [message] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM webhook_messages WHERE org_id = ${await orgUuid(ctx, b)}`;
    if (message) ids.message_id = `msg_${message.id.replaceAll('-', '')}`;
    else fixtureErrors.push('no webhook message');
  }
  const key = idOf(await create('/organization-pats', { name: 'b key' }));
  const userToken = idOf(await create('/user-pats', { name: 'b token' }));
  if (key) ids.organization_key = key;
  if (userToken) ids.user_token = userToken;
}, 120_000);
afterAll(() => ctx?.close());

/** The real id for a path parameter, or undefined when no fixture gives one. */
function idFor(path: string, param: string): string | undefined {
  if (param === 'id' && path.startsWith('/organization-pats')) return ids.organization_key;
  if (param === 'id' && path.startsWith('/user-pats')) return ids.user_token;
  if (param === 'id' && path.startsWith('/core/phone-numbers')) return ids.phone_id;
  if (param === 'id' && path.startsWith('/campaign/')) return ids.campaign_id;
  if (param === 'version') return '1';
  if (param === 'run_id' && path.includes('icp-fit-runs')) return ids.fit_run_id;
  return ids[param];
}

/** Bodies that pass validation, so the lookup (not the body) decides; an empty object elsewhere. */
const BODIES: Record<string, unknown> = {
  'PATCH /accounts/{account_id}': { name: 'x' },
  'PATCH /deals/{deal_id}': { name: 'x' },
  'PATCH /contacts/{contact_id}': { first_name: 'x' },
  'PATCH /tags/{tag_id}': { name: 'x' },
  'PATCH /folders/{folder_id}': { name: 'x' },
  'PATCH /cards/{card_id}': { name: 'x' },
  'PATCH /outreach/domains/{domain_id}': { tracking_enabled: true },
  'PATCH /knowledge-base/datasets/{dataset_id}': { name: 'x' },
  'PATCH /intelligence/icp-profiles/{profile_id}': { name: 'x' },
  'PATCH /workflow/credentials/{credential_id}': { name: 'x' },
  'PUT /integrations/telephony-accounts/{connection_id}': {
    provider: 'vapi',
    api_key: '018f0000-0000-7000-8000-000000000001',
    phone_number_id: '018f0000-0000-7000-8000-000000000002',
  },
  'PUT /integrations/speech-accounts/{connection_id}': { provider: 'deepgram', api_key: 'dg-0123456789abcdef' },
  'PATCH /outreach/mailboxes/{mailbox_id}': { daily_limit: 10 },
  'PATCH /outreach/sequencer/sequences/{sequence_id}': { name: 'x' },
  'POST /outreach/sequencer/sequences/{sequence_id}/enrollments': { contact_ids: ['018f0000-0000-7000-8000-000000000000'] },
  'POST /outreach/sequencer/unibox/threads/{thread_id}/read': { read: true },
  'POST /outreach/sequencer/unibox/threads/{thread_id}/reply': { text: 'x' },
  'PUT /core/agents/{id}': { name: 'x' },
  'POST /core/agents/{id}/versions': { base_version: 1 },
  'POST /core/agents/{id}/conversations/{conversation_id}/replays': { version: 1 },
  'POST /core/agents/{id}/replays': { version: 1, last: 1 },
  'POST /core/agents/{id}/knowledge-base/query': { query: 'pricing' },
  'PUT /core/agents/{id}/versions/{version}': { config: {} },
  'PUT /workflow/credentials/{credential_id}/value': { value: { token: 'x' } },
  'POST /accounts/{account_id}/activities': { type: 'note' },
  'POST /deals/{deal_id}/activities': { type: 'note' },
  'POST /core/agents/{id}/versions/compare': { from_version: 1, to_version: 1 },
  'POST /campaign/campaigns/{id}/contacts': { contacts: [{ phone_numbers: ['+14155550100'] }] },
  'POST /knowledge-base/datasets/{dataset_id}/sources/pattern': { pattern: 'x', type: 'URL' },
  'POST /knowledge-base/datasets/{dataset_id}/query': { query: 'x' },
  'POST /core/custom-data/tables/{name}/replace': { rows: [] },
  'POST /core/custom-data/tables/{name}/upsert': { rows: [] },
  'PUT /core/custom-data/tables/{name}': { key: ['order_id'], properties: [{ name: 'order_id', type: 'string' }] },
  'POST /ai/chats/{chat_id}/messages': { message: { id: 'm', role: 'user', parts: [{ type: 'text', text: 'hi' }] } },
  'POST /ai/chats/{chat_id}/approvals/{approval_id}': { approved: true },
  'PATCH /webhooks/endpoints/{endpoint_id}': { description: 'x' },
  'POST /core/agents/{id}/widgets': { name: 'x', allowed_origins: ['https://site.example'] },
  'PATCH /core/agents/{id}/widgets/{widget_id}': { name: 'x' },
};

describe('tenancy matrix: another organization’s ids are 404 on every route', () => {
  it('creates one of each resource in organization B', () => {
    expect(fixtureErrors).toEqual([]);
  });

  it('answers 404 to organization A for every route with an id of B in its path', async () => {
    const { routes } = createApp(ctx.deps);
    const uncovered: string[] = [];
    const wrong: string[] = [];
    let checked = 0;
    for (const route of routes) {
      const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      if (params.length === 0 || route.auth === 'public') continue;
      if (params.some((p) => p in NOT_IDS)) continue;
      // PUT on a custom data table creates it in the caller's organization (names are per organization).
      if (route.method === 'put' && route.path === '/core/custom-data/tables/{name}') continue;
      const values = params.map((p) => idFor(route.path, p));
      if (values.some((v) => v === undefined)) {
        uncovered.push(`${route.method.toUpperCase()} ${route.path}`);
        continue;
      }
      let path = route.path;
      for (const [i, p] of params.entries()) path = path.replace(`{${p}}`, encodeURIComponent(values[i]!));
      const key = `${route.method.toUpperCase()} ${route.path}`;
      const body = route.method === 'get' || route.method === 'delete' ? undefined : (BODIES[key] ?? {});
      const res =
        key === 'POST /cards/{card_id}/media'
          ? await fetch(`${ctx.baseUrl}${path}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${a.session}`, 'content-type': 'image/png' },
              body: await pngBytes(),
            }).then(async (r) => ({ status: r.status, body: await r.json() }))
          : await ctx.request(route.method.toUpperCase(), path, { token: a.session, body });
      checked++;
      // The spec answers a PATCH of a contact no row matched with 200 {} (not 404): nothing is revealed either way.
      if (key === 'PATCH /contacts/{contact_id}' && res.status === 200 && JSON.stringify(res.body) === '{}') continue;
      if (res.status !== 404) wrong.push(`${key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    console.log(`tenancy matrix: ${checked} routes checked; without a fixture: ${uncovered.join(', ') || 'none'}`);
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(60);
    // Routes left without a fixture are named, so adding one is the next step rather than a silent gap.
    expect(uncovered).toEqual(WITHOUT_FIXTURE);
  }, 300_000);
});

/** Routes left without a fixture (none: a fixture is the way to cover a new route). */
const WITHOUT_FIXTURE: string[] = [];
