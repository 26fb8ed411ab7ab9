import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderImmediateEmail } from '../../domain/notifications';
import { createLogger } from '../../platform/core/logger';
import { createMailTransport } from '../../platform/adapters/mail/mail';
import { NOTIFICATION_EVENTS } from '../../domain/notification-events';
import { newId } from '../../platform/core/ids';
import { freePort } from '../../dev-servers/ports';
import { createTemporalClient } from '../../platform/core/temporal';
import { emitEvent } from '../../services/notifications/emit';
import { sendQueuedEmails } from '../../services/notifications/emails';
import { relayOrganization, relayPending, startOutboxRelay } from '../../services/notifications/relay';
import { notificationActorId, notificationActorStatusQuery, notificationEventsSignal } from '../../workflows/notification-messages';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { keepHistory } from '../support/histories';
import { createOrgKey, createUserToken, externalId, orgUuid } from '../support/identity';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server';

let ctx: TestContext;
let smtp: TestSmtpServer;

const MANAGE = ['api:read', 'api:manage'];
const ADMIN = ['api:read', 'api:manage', 'organizations:manage'];

interface Member {
  ext: string;
  email: string;
  session: string;
  /** users.id */
  id: string;
}

interface Org {
  ext: string;
  id: string;
  admin: Member;
}

async function member(org: string, scopes = MANAGE, extraOrgs: string[] = []): Promise<Member> {
  const ext = externalId('user');
  const email = `${ext}@example.test`;
  const session = await ctx.session({ sub: ext, org_id: org, org_ids: [org, ...extraOrgs], permissions: scopes, email });
  const me = await ctx.request('GET', '/me', { token: session });
  expect(me.status).toBe(200);
  const [row] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${ext}`;
  return { ext, email, session, id: row!.id };
}

async function newOrg(): Promise<Org> {
  const ext = externalId('org');
  const admin = await member(ext, ADMIN);
  return { ext, id: await orgUuid(ctx, { session: admin.session }), admin };
}

/** Hands the outbox to the actors, as the worker's relay does. */
const relay = () => relayPending(ctx.deps);

async function feed(m: Member, query = '') {
  const res = await ctx.request('GET', `/notifications${query}`, { token: m.session });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: any[]; pagination: { limit: number; next_cursor: string | null; total: number; offset: number } };
}

/** Relays until the member's feed holds an item of this type (for this entity, if given). */
async function waitForItem(m: Member, eventType: string, entityId?: string) {
  return waitFor(
    async () => {
      await relay();
      return (await feed(m, '?limit=200')).data.find((i) => i.event_type === eventType && (!entityId || i.entity_id === entityId));
    },
    30_000,
    `${eventType} in the feed of ${m.ext}`,
  );
}

async function createDeal(m: Member, body: Record<string, unknown>) {
  const res = await ctx.request('POST', '/deals', { token: m.session, body: { stage: 'prospecting', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; name: string };
}

const outboxOf = (orgId: string) =>
  ctx.deps.sql<{ event_type: string; payload: any; relayed_at: Date | null }[]>`
    SELECT event_type, payload, relayed_at FROM notification_outbox WHERE org_id = ${orgId} ORDER BY created_at, id`;

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await createTestContext({
    worker: true,
    env: {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'CRM <notify@crm.test>',
      NOTIFICATION_DIGEST_INTERVAL_SECONDS: '3',
      NOTIFICATION_DIGEST_HOUR_UTC: '0',
      NOTIFICATION_ACTOR_HISTORY_LIMIT: '100',
    },
  });
}, 60_000);
afterAll(async () => {
  await ctx?.close();
  await smtp?.close();
});

describe('GET /notifications/event-catalog', () => {
  it('lists the subscribable events in registry order, always-send alerts excluded', async () => {
    const org = await newOrg();
    const readOnly = await member(org.ext, ['api:read']);
    const res = await ctx.request('GET', '/notifications/event-catalog', { token: readOnly.session });
    expect(res.status).toBe(200);
    const types = res.body.events.map((e: any) => e.event_type);
    expect(types).toEqual(NOTIFICATION_EVENTS.filter((e) => !e.always_send).map((e) => e.event_type));
    expect(types).not.toContain('credential.refresh_failed');
    expect(types).not.toContain('integration.needs_reconnect');
    expect(types).toContain('deal.stage_changed');
    for (const e of res.body.events) {
      expect(Object.keys(e).sort()).toEqual(['category', 'default_cadence', 'default_in_app', 'description', 'event_type', 'label']);
      expect(['off', 'immediate', 'digest']).toContain(e.default_cadence);
      expect(e.event_type).toMatch(/^[a-z_]+\.[a-z_]+$/);
    }
    expect(res.body.events.find((e: any) => e.event_type === 'deal.stage_changed')).toMatchObject({ category: 'deals' });
  });

  it('is 403 without an active organization, also for a pat_ without X-Service-Org', async () => {
    const ext = externalId('user');
    const noOrg = await ctx.session({ sub: ext, org_ids: [], permissions: MANAGE });
    expect((await ctx.request('GET', '/notifications/event-catalog', { token: noOrg })).status).toBe(403);
    const org = await newOrg();
    const pat = await createUserToken(ctx, org.admin.session);
    expect((await ctx.request('GET', '/notifications/event-catalog', { token: pat })).status).toBe(403);
    expect((await ctx.request('GET', '/notifications/event-catalog', { token: pat, org: org.ext })).status).toBe(200);
  });
});

describe('POST /notifications/events', () => {
  let org: Org;
  let owner: Member;
  let deal: { id: string; name: string };

  beforeAll(async () => {
    org = await newOrg();
    owner = await member(org.ext);
    deal = await createDeal(org.admin, { name: 'Stored name', value: 1200, currency: 'EUR', owner_id: owner.ext });
  });

  const emit = (token: string, body: Record<string, unknown>, orgHeader?: string) =>
    ctx.request('POST', '/notifications/events', { token, body, org: orgHeader });

  it('rule 1: entity_type other than deal is 400; an unregistered event_type is 400', async () => {
    const contact = await emit(org.admin.session, {
      event_type: 'contact.assigned',
      entity_type: 'contact',
      entity_id: deal.id,
      payload: {},
    });
    expect(contact.status).toBe(400);
    expect(contact.body.detail).toMatch(/entity_type/);
    const unknown = await emit(org.admin.session, { event_type: 'deal.exploded', entity_type: 'deal', entity_id: deal.id, payload: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/event_type/);
  });

  it('rule 4: a deal not visible in the organization is 404 (another organization, or none)', async () => {
    const other = await newOrg();
    const theirs = await createDeal(other.admin, { name: 'Theirs' });
    const foreign = await emit(org.admin.session, { event_type: 'deal.won', entity_type: 'deal', entity_id: theirs.id, payload: {} });
    expect(foreign.status).toBe(404);
    const missing = await emit(org.admin.session, { event_type: 'deal.won', entity_type: 'deal', entity_id: newId(), payload: {} });
    expect(missing.status).toBe(404);
    expect(await outboxOf(org.id)).not.toContainEqual(
      expect.objectContaining({ payload: expect.objectContaining({ deal_id: theirs.id }) }),
    );
  });

  it('rule 6: no CRM manage scope, or no active organization, is 403', async () => {
    const readKey = await createOrgKey(ctx, org.admin.session, { scopes: ['api:read'] });
    const body = { event_type: 'deal.won', entity_type: 'deal', entity_id: deal.id, payload: {} };
    expect((await emit(readKey, body)).status).toBe(403);
    const readOnly = await member(org.ext, ['api:read', 'deals:read']);
    expect((await emit(readOnly.session, body)).status).toBe(403);
    const noOrg = await ctx.session({ sub: externalId('user'), org_ids: [], permissions: MANAGE });
    expect((await emit(noOrg, body)).status).toBe(403);
    const manageKey = await createOrgKey(ctx, org.admin.session, { scopes: ['api:manage'] });
    expect((await emit(manageKey, body)).status).toBe(202);
  });

  it('rules 2 and 3: 202 {accepted: true} at once; stored deal facts overwrite the payload, other hints are kept', async () => {
    const res = await emit(org.admin.session, {
      event_type: 'deal.stage_changed',
      entity_type: 'deal',
      entity_id: deal.id,
      payload: {
        deal_name: 'Forged',
        value: 1,
        currency: 'XXX',
        owner_id: 'intruder',
        new_owner_id: 'intruder',
        deal_id: newId(),
        field: 'stage',
        old: 'prospecting',
        new: 'proposal',
        new_stage: 'proposal',
      },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true });
    const item = await waitForItem(owner, 'deal.stage_changed', deal.id);
    expect(item.payload).toMatchObject({
      deal_id: deal.id,
      deal_name: 'Stored name',
      value: 1200,
      currency: 'EUR',
      owner_id: owner.ext,
      new_owner_id: owner.ext,
      field: 'stage',
      old: 'prospecting',
      new: 'proposal',
      new_stage: 'proposal',
    });
    expect(item.title).toBe('Deal stage changed: Stored name');
  });

  it('rule 5: an event that cannot be queued is answered 202 {accepted: false}, not an error', async () => {
    // The database refuses this one outbox row, so the write fails.
    await ctx.deps.sql.unsafe(`
      CREATE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.payload->>'note' = 'refuse me' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_outbox BEFORE INSERT ON notification_outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox();`);
    try {
      const res = await emit(org.admin.session, {
        event_type: 'deal.won',
        entity_type: 'deal',
        entity_id: deal.id,
        payload: { note: 'refuse me' },
      });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ accepted: false });
    } finally {
      await ctx.deps.sql.unsafe('DROP TRIGGER refuse_outbox ON notification_outbox; DROP FUNCTION refuse_outbox()');
    }
    // A value no row could hold (U+0000) is the caller's error, refused before anything is tried.
    const nul = await emit(org.admin.session, {
      event_type: 'deal.won',
      entity_type: 'deal',
      entity_id: deal.id,
      payload: { note: 'nul \u0000 byte' },
    });
    expect(nul.status).toBe(422);
    expect(nul.body.detail[0].loc).toEqual(['body', 'payload', 'note']);
  });

  it('validates the body (422) and declares it in OpenAPI', async () => {
    expect((await emit(org.admin.session, { event_type: 'deal.won', entity_type: 'deal', entity_id: 'nope', payload: {} })).status).toBe(
      422,
    );
    expect((await emit(org.admin.session, { event_type: 'deal.won', entity_type: 'deal', entity_id: deal.id, payload: [] })).status).toBe(
      422,
    );
    const doc = (await ctx.request('GET', '/openapi.json')).body;
    const op = doc.paths['/notifications/events'].post;
    expect(Object.keys(op.responses).sort()).toEqual(expect.arrayContaining(['202', '400', '401', '403', '404', '422']));
  });
});

describe('events the service produces from deal changes', () => {
  it('writes them in the same transaction as the change; a refused change writes none', async () => {
    const org = await newOrg();
    const deal = await createDeal(org.admin, { name: 'Outboxed', owner_id: 'someone', value: 10 });
    const patch = await ctx.request('PATCH', `/deals/${deal.id}`, {
      token: org.admin.session,
      body: { stage: 'proposal', value: 20, owner_id: 'another' },
    });
    expect(patch.status).toBe(200);
    const refused = await ctx.request('PATCH', `/deals/${deal.id}`, { token: org.admin.session, body: { account_id: newId() } });
    expect(refused.status).toBe(404);
    const won = await ctx.request('PATCH', `/deals/${deal.id}`, { token: org.admin.session, body: { stage: 'closed_won' } });
    expect(won.status).toBe(200);
    const rows = await outboxOf(org.id);
    expect(rows.map((r) => r.event_type)).toEqual([
      'deal.created',
      'deal.stage_changed',
      'deal.owner_changed',
      'deal.value_changed',
      'deal.won',
    ]);
    expect(rows[2]!.payload).toMatchObject({ owner_id: 'someone', new_owner_id: 'another' });
    expect(rows[3]!.payload).toMatchObject({ old: '10.00 USD', new: '20.00 USD', value: 20 });
  });

  it("reach the deal's owner and new owner, never the actor, and a won deal is mailed at once with escaped content", async () => {
    const org = await newOrg();
    const first = await member(org.ext);
    const second = await member(org.ext);
    const name = `<script>alert("x")</script> & Co`;
    const deal = await createDeal(org.admin, { name, owner_id: first.ext, value: 5000 });
    await waitForItem(first, 'deal.created', deal.id);
    await ctx.request('PATCH', `/deals/${deal.id}`, { token: org.admin.session, body: { owner_id: second.ext } });
    const handedOver = await waitForItem(first, 'deal.owner_changed', deal.id);
    await waitForItem(second, 'deal.owner_changed', deal.id);
    expect(handedOver.body).toContain(second.ext);
    expect((await feed(org.admin)).data).toEqual([]);

    await ctx.request('PATCH', `/deals/${deal.id}`, { token: org.admin.session, body: { stage: 'closed_won' } });
    await waitForItem(second, 'deal.won', deal.id);
    const mails = await smtp.waitForMail(second.email, 2);
    const wonMail = mails.find((m) => m.mail.subject?.startsWith('Deal won'))!;
    expect(wonMail).toBeDefined();
    expect(wonMail.rcptTo).toEqual([second.email]);
    expect(wonMail.mail.from?.text).toContain('notify@crm.test');
    expect(wonMail.mail.subject).toBe(`Deal won: ${name}`);
    expect(wonMail.mail.text).toContain(name);
    expect(wonMail.mail.text).toContain('5,000.00 USD');
    const html = String(wonMail.mail.html);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co');
    expect(html).not.toContain('<script>');
    expect(wonMail.mail.messageId).toMatch(/@voice-crm\.local>$/);
    // The admin acted; no mail went to them.
    expect(smtp.to(org.admin.email)).toEqual([]);
  });
});

describe('the in-app feed', () => {
  let org: Org;
  let user: Member;
  let dealIds: string[];

  beforeAll(async () => {
    org = await newOrg();
    user = await member(org.ext);
    dealIds = [];
    for (const n of [1, 2, 3]) dealIds.push((await createDeal(org.admin, { name: `Feed deal ${n}`, owner_id: user.ext })).id);
    await waitFor(async () => (await relay(), (await feed(user)).pagination.total === 3), 30_000, 'three items');
  });

  it('lists newest first with cursor pagination and a total', async () => {
    const page1 = await feed(user, '?limit=2');
    expect(page1.data.map((i) => i.entity_id)).toEqual([dealIds[2], dealIds[1]]);
    expect(page1.pagination).toMatchObject({ limit: 2, total: 3, offset: 0 });
    expect(page1.pagination.next_cursor).toEqual(expect.any(String));
    const page2 = await feed(user, `?limit=2&cursor=${page1.pagination.next_cursor}`);
    expect(page2.data.map((i) => i.entity_id)).toEqual([dealIds[0]]);
    expect(page2.pagination.next_cursor).toBeNull();
    expect(page1.data[0]).toMatchObject({ event_type: 'deal.created', category: 'deals', read: false, read_at: null, archived_at: null });
    expect((await ctx.request('GET', '/notifications?cursor=garbage', { token: user.session })).status).toBe(400);
    expect((await ctx.request('GET', '/notifications?unread=maybe', { token: user.session })).status).toBe(400);
    expect((await ctx.request('GET', '/notifications?limit=0', { token: user.session })).status).toBe(422);
  });

  it('marks one read, filters unread, counts, marks all read and archives', async () => {
    const [newest] = (await feed(user)).data;
    const read = await ctx.request('POST', `/notifications/${newest.id}/read`, { token: user.session });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: newest.id, read: true, read_at: expect.any(String) });
    const again = await ctx.request('POST', `/notifications/${newest.id}/read`, { token: user.session });
    expect(again.body.read_at).toBe(read.body.read_at);
    expect((await ctx.request('GET', '/notifications/unread-count', { token: user.session })).body).toEqual({ unread: 2 });
    expect((await feed(user, '?unread=true')).data.map((i) => i.id)).not.toContain(newest.id);

    const all = await ctx.request('POST', '/notifications/read-all', { token: user.session });
    expect(all.body).toEqual({ updated: 2 });
    expect((await ctx.request('GET', '/notifications/unread-count', { token: user.session })).body).toEqual({ unread: 0 });

    const archived = await ctx.request('POST', `/notifications/${newest.id}/archive`, { token: user.session });
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    const after = await feed(user);
    expect(after.pagination.total).toBe(2);
    expect(after.data.map((i) => i.id)).not.toContain(newest.id);
    expect((await ctx.request('POST', `/notifications/${newest.id}/read`, { token: user.session })).status).toBe(404);
  });

  it("never shows or touches another user's or another organization's items (404)", async () => {
    const [item] = (await feed(user)).data;
    const colleague = await member(org.ext);
    expect((await ctx.request('POST', `/notifications/${item.id}/read`, { token: colleague.session })).status).toBe(404);
    expect((await ctx.request('POST', `/notifications/${item.id}/archive`, { token: colleague.session })).status).toBe(404);
    expect((await feed(colleague)).data).toEqual([]);

    // The same user, active in another organization, sees that organization's feed only.
    const other = await newOrg();
    const elsewhere = await ctx.session({ sub: user.ext, org_id: other.ext, org_ids: [other.ext, org.ext], permissions: MANAGE });
    const res = await ctx.request('GET', '/notifications', { token: elsewhere });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect((await ctx.request('POST', `/notifications/${item.id}/read`, { token: elsewhere })).status).toBe(404);
  });

  it('is refused to organization API keys (they have no user) with 403, and to requests without an organization', async () => {
    const key = await createOrgKey(ctx, org.admin.session);
    for (const [method, path] of [
      ['GET', '/notifications'],
      ['GET', '/notifications/unread-count'],
      ['POST', '/notifications/read-all'],
      ['GET', '/notification-preferences'],
    ] as const) {
      const res = await ctx.request(method, path, { token: key });
      expect(res.status, path).toBe(403);
      expect(res.body.detail).toMatch(/no user/);
    }
    const noOrg = await ctx.session({ sub: user.ext, org_ids: [], permissions: MANAGE });
    expect((await ctx.request('GET', '/notifications', { token: noOrg })).status).toBe(403);
  });
});

describe('preferences', () => {
  it("default to the catalog's values, change one field at a time, and null restores the default", async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const list = await ctx.request('GET', '/notification-preferences', { token: user.session });
    expect(list.status).toBe(200);
    const catalog = (await ctx.request('GET', '/notifications/event-catalog', { token: user.session })).body.events;
    expect(list.body.preferences.map((p: any) => [p.event_type, p.in_app, p.email_cadence, p.subscribed, p.customized])).toEqual(
      catalog.map((e: any) => [e.event_type, e.default_in_app, e.default_cadence, false, false]),
    );
    const patched = await ctx.request('PATCH', '/notification-preferences/deal.won', {
      token: user.session,
      body: { email_cadence: 'digest' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ event_type: 'deal.won', in_app: true, email_cadence: 'digest', customized: true });
    const inApp = await ctx.request('PATCH', '/notification-preferences/deal.won', { token: user.session, body: { in_app: false } });
    expect(inApp.body).toMatchObject({ in_app: false, email_cadence: 'digest' });
    const reset = await ctx.request('PATCH', '/notification-preferences/deal.won', {
      token: user.session,
      body: { in_app: null, email_cadence: null },
    });
    expect(reset.body).toMatchObject({ in_app: true, email_cadence: 'immediate', customized: false });

    expect((await ctx.request('PATCH', '/notification-preferences/deal.won', { token: user.session, body: {} })).status).toBe(400);
    expect(
      (await ctx.request('PATCH', '/notification-preferences/deal.nope', { token: user.session, body: { in_app: false } })).status,
    ).toBe(400);
    expect(
      (await ctx.request('PATCH', '/notification-preferences/credential.refresh_failed', { token: user.session, body: { in_app: false } }))
        .status,
    ).toBe(400);
    expect(
      (await ctx.request('PATCH', '/notification-preferences/deal.won', { token: user.session, body: { email_cadence: 'weekly' } })).status,
    ).toBe(422);
    // Preferences are per organization.
    const other = await newOrg();
    const elsewhere = await ctx.session({ sub: user.ext, org_id: other.ext, org_ids: [other.ext, org.ext], permissions: MANAGE });
    await ctx.request('PATCH', '/notification-preferences/deal.lost', { token: user.session, body: { in_app: false } });
    const there = await ctx.request('GET', '/notification-preferences', { token: elsewhere });
    expect(there.body.preferences.find((p: any) => p.event_type === 'deal.lost').in_app).toBe(true);
  });

  it('are applied by the actor: in-app off writes no item, email off sends nothing, a subscriber hears of every deal', async () => {
    const org = await newOrg();
    const quiet = await member(org.ext);
    const watcher = await member(org.ext);
    await ctx.request('PATCH', '/notification-preferences/deal.created', { token: quiet.session, body: { in_app: false } });
    await ctx.request('PATCH', '/notification-preferences/deal.won', { token: quiet.session, body: { email_cadence: 'off' } });
    await ctx.request('PATCH', '/notification-preferences/deal.won', { token: watcher.session, body: { subscribed: true } });
    const deal = await createDeal(org.admin, { name: 'Prefs', owner_id: quiet.ext });
    await ctx.request('PATCH', `/deals/${deal.id}`, { token: org.admin.session, body: { stage: 'closed_won' } });
    await waitForItem(quiet, 'deal.won', deal.id);
    await waitForItem(watcher, 'deal.won', deal.id);
    await smtp.waitForMail(watcher.email, 1);
    expect((await feed(quiet)).data.map((i) => i.event_type)).toEqual(['deal.won']);
    const emails = await ctx.deps.sql`SELECT user_id FROM notification_emails WHERE org_id = ${org.id} AND kind = 'immediate'`;
    expect(emails.map((e) => e.user_id)).toEqual([watcher.id]);
    expect((await feed(watcher)).data.map((i) => i.event_type)).toEqual(['deal.won']);
  });
});

describe('always-send alerts', () => {
  it('ignore preferences, and reach the organization admins when nobody was named', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    // Preferences cannot be set for them through the API; even a stored "off" is ignored.
    await ctx.deps.sql`
      INSERT INTO notification_preferences (org_id, user_id, event_type, in_app, email_cadence)
      VALUES (${org.id}, ${user.id}, 'credential.refresh_failed', false, 'off')`;
    await ctx.deps.sql.begin((tx) =>
      emitEvent(tx, org.id, {
        event_type: 'credential.refresh_failed',
        entity_type: 'credential',
        entity_id: 'cred-1',
        payload: { name: 'Salesforce token', reason: 'invalid_grant <b>' },
        recipient_user_ids: [user.id],
      }),
    );
    const item = await waitForItem(user, 'credential.refresh_failed');
    expect(item).toMatchObject({ title: 'Credential refresh failed: Salesforce token', body: 'invalid_grant <b>' });
    const [mail] = await smtp.waitForMail(user.email, 1);
    expect(mail!.mail.subject).toBe('Credential refresh failed: Salesforce token');
    expect(String(mail!.mail.html)).toContain('invalid_grant &lt;b&gt;');

    await emitEvent(ctx.deps.sql, org.id, {
      event_type: 'integration.needs_reconnect',
      entity_type: 'integration',
      entity_id: 'hubspot',
      payload: { name: 'HubSpot' },
    });
    await waitForItem(org.admin, 'integration.needs_reconnect');
    await smtp.waitForMail(org.admin.email, 1);
    expect((await feed(user)).data.map((i) => i.event_type)).toEqual(['credential.refresh_failed']);
  });
});

describe('digests', () => {
  it('collapse the events of one window into one email per recipient', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const deal = await createDeal(org.admin, { name: 'Digest & <Co>', owner_id: user.ext });
    // Three stage changes (default cadence: digest) in one transaction.
    await ctx.deps.sql.begin(async (tx) => {
      for (const [from, to] of [
        ['prospecting', 'qualification'],
        ['qualification', 'proposal'],
        ['proposal', 'negotiation'],
      ]) {
        await emitEvent(tx, org.id, {
          event_type: 'deal.stage_changed',
          entity_type: 'deal',
          entity_id: deal.id,
          payload: { deal_id: deal.id, deal_name: deal.name, owner_id: user.ext, old_stage: from, new_stage: to },
        });
      }
    });
    const mails = await waitFor(
      async () => (await relay(), smtp.to(user.email).filter((m) => m.mail.subject?.includes('digest')).length > 0 && smtp.to(user.email)),
      30_000,
      'digest',
    );
    const digests = mails.filter((m) => m.mail.subject?.includes('digest'));
    expect(digests).toHaveLength(1);
    const digest = digests[0]!;
    expect(digest.mail.subject).toBe('Your notification digest: 4 updates');
    expect(digest.mail.text).toContain('Stage moved from prospecting to qualification.');
    expect(digest.mail.text).toContain('Stage moved from proposal to negotiation.');
    expect(digest.mail.text).toContain('Deal created: Digest & <Co>');
    expect(String(digest.mail.html)).toContain('Digest &amp; &lt;Co&gt;');
    // Every entry went into that one email; none waits for another.
    await waitFor(
      async () => {
        const [row] = await ctx.deps.sql<{ pending: number; digests: number }[]>`
        SELECT (SELECT count(*)::int FROM notification_digest_entries WHERE org_id = ${org.id} AND digest_email_id IS NULL) AS pending,
               (SELECT count(*)::int FROM notification_emails WHERE org_id = ${org.id} AND kind = 'digest' AND sent_at IS NOT NULL) AS digests`;
        return row!.pending === 0 && row!.digests === 1;
      },
      10_000,
      'digest sent',
    );
    // Nothing left to digest: the actor stops waking for digests.
    const handle = ctx.deps.temporal.workflow.getHandle(notificationActorId(org.id));
    await waitFor(async () => (await handle.query(notificationActorStatusQuery)).digestDueAt === null, 10_000, 'no digest due');
    // No immediate email: stage changes and creation are digest events by default.
    expect(smtp.to(user.email)).toHaveLength(1);
  });
});

describe('the outbox and the actor', () => {
  it('keeps events while Temporal is unreachable and hands them over once it answers', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const deal = await createDeal(org.admin, { name: 'Survivor', owner_id: user.ext });
    const downClient = createTemporalClient(`127.0.0.1:${await freePort()}`, 'default', {}, 1000);
    try {
      const down = await relayOrganization({ ...ctx.deps, temporal: downClient }, org.id).then(
        () => 'relayed',
        () => 'failed',
      );
      expect(down).toBe('failed');
    } finally {
      await downClient.connection.close().catch(() => {});
    }
    const pending = await outboxOf(org.id);
    expect(pending.map((r) => [r.event_type, r.relayed_at])).toEqual([['deal.created', null]]);
    await waitForItem(user, 'deal.created', deal.id);
    expect((await outboxOf(org.id))[0]!.relayed_at).toBeInstanceOf(Date);
  });

  it('the running relay delivers a committed event without being called (LISTEN/NOTIFY)', async () => {
    const relayer = await startOutboxRelay({
      ...ctx.deps,
      config: { ...ctx.config, NOTIFICATION_RELAY_INTERVAL_SECONDS: 3600 },
    });
    try {
      const org = await newOrg();
      const user = await member(org.ext);
      const deal = await createDeal(org.admin, { name: 'Listened', owner_id: user.ext });
      await waitFor(async () => (await feed(user)).data.find((i) => i.entity_id === deal.id), 30_000, 'relayed by NOTIFY');
    } finally {
      await relayer.stop();
    }
  });

  it('deduplicates an event delivered twice, and continues as new with a bounded history', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const deal = await createDeal(org.admin, { name: 'Twice', owner_id: user.ext });
    await waitForItem(user, 'deal.created', deal.id);
    const [row] = await ctx.deps.sql<any[]>`SELECT * FROM notification_outbox WHERE org_id = ${org.id}`;
    const event = {
      id: row.id,
      event_type: row.event_type,
      entity_type: row.entity_type,
      entity_id: row.entity_id,
      payload: row.payload,
      actor_user_id: row.actor_user_id,
      recipient_user_ids: row.recipient_user_ids,
      created_at: row.created_at.toISOString(),
    };
    const handle = ctx.deps.temporal.workflow.getHandle(notificationActorId(org.id));
    await handle.signal(notificationEventsSignal, [event]);
    const firstRun = (await handle.describe()).runId;

    // Events, one signal each, until the history limit (100) is passed at least once: at least 40; on a busy
    // machine the actor takes several signals per task, so more may be needed (at most 200).
    let sent = 0;
    while (sent < 200 && (sent < 40 || (await handle.describe()).runId === firstRun)) {
      for (let i = 0; i < 10; i++, sent++) {
        await emitEvent(ctx.deps.sql, org.id, {
          event_type: 'deal.value_changed',
          entity_type: 'deal',
          entity_id: deal.id,
          payload: { deal_id: deal.id, deal_name: 'Twice', owner_id: user.ext, value: sent },
        });
        await relay();
      }
    }
    await waitFor(async () => (await feed(user)).pagination.total === sent + 1, 60_000, `${sent + 1} items`);
    expect((await feed(user, '?limit=200')).data.filter((i) => i.event_type === 'deal.created')).toHaveLength(1);
    const description = await handle.describe();
    expect(description.runId).not.toBe(firstRun);
    expect(description.status.name).toBe('RUNNING');
    expect(description.searchAttributes.OrganizationId).toEqual([org.id]);
    const status = await handle.query(notificationActorStatusQuery);
    expect(status.historyLength).toBeLessThan(200);
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, notificationActorId(org.id), 'notification-actor');
  });
});

describe('email transports', () => {
  it('a queued email is sent once, however often the sending activity runs', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const mail = createMailTransport(ctx.config, ctx.deps.logger);
    await ctx.deps.sql`
      INSERT INTO notification_emails (id, org_id, user_id, idempotency_key, kind, to_address, subject, text_body, html_body)
      VALUES (${newId()}, ${org.id}, ${user.id}, ${`immediate:${newId()}:${user.id}`}, 'immediate', ${user.email}, 'Once', 'text', '<p>html</p>')`;
    const first = await sendQueuedEmails({ ...ctx.deps, mail }, org.id);
    const second = await sendQueuedEmails({ ...ctx.deps, mail }, org.id);
    expect(first).toEqual({ sent: 1, failed: 0 });
    expect(second).toEqual({ sent: 0, failed: 0 });
    const [received] = await smtp.waitForMail(user.email, 1);
    expect(received!.mail.headers.get('x-idempotency-key')).toMatch(/^immediate:/);
    expect(smtp.to(user.email)).toHaveLength(1);
    mail.close();
  });

  it('an email the SMTP server refused is retried by the next attempt, and the others still go out', async () => {
    const org = await newOrg();
    const user = await member(org.ext);
    const queue = (subject: string) => ctx.deps.sql`
      INSERT INTO notification_emails (id, org_id, user_id, idempotency_key, kind, to_address, subject, text_body, html_body)
      VALUES (${newId()}, ${org.id}, ${user.id}, ${`immediate:${newId()}:${user.id}`}, 'immediate', ${user.email}, ${subject}, 't', '<p>h</p>')`;
    await queue('First');
    await queue('Second');
    const real = createMailTransport(ctx.config, ctx.deps.logger);
    // A transport that refuses the first message once, as a server answering 451 would.
    let refused = false;
    const flaky = {
      ...real,
      send: async (m: Parameters<typeof real.send>[0]) => {
        if (m.subject === 'First' && !refused) {
          refused = true;
          throw new Error('451 try again later');
        }
        await real.send(m);
      },
    };
    expect(await sendQueuedEmails({ ...ctx.deps, mail: flaky }, org.id)).toEqual({ sent: 1, failed: 1 });
    expect(await sendQueuedEmails({ ...ctx.deps, mail: flaky }, org.id)).toEqual({ sent: 1, failed: 0 });
    const mails = await smtp.waitForMail(user.email, 2);
    expect(mails.map((m) => m.mail.subject).sort()).toEqual(['First', 'Second']);
    const rows = await ctx.deps.sql`SELECT subject, attempts FROM notification_emails WHERE org_id = ${org.id} ORDER BY subject`;
    expect(rows.map((r) => [r.subject, r.attempts])).toEqual([
      ['First', 2],
      ['Second', 1],
    ]);
    real.close();
  });

  it('without SMTP_URL, each message becomes an .eml file under DATA_DIR/mail and one log line', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-'));
    const logs: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _e, done) => (logs.push(String(chunk)), done()) }));
    const mail = createMailTransport({ SMTP_URL: undefined, MAIL_FROM: 'CRM <notify@crm.test>', dataDir }, logger);
    expect(mail.name).toBe('files');
    const rendered = renderImmediateEmail({ title: 'Deal won: A & <B>', body: 'Value: 1.00 USD.' });
    await mail.send({ to: 'someone@example.test', ...rendered, idempotencyKey: 'immediate:x:y' });
    const files = fs.readdirSync(path.join(dataDir, 'mail'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const parsed = await simpleParser(fs.readFileSync(path.join(dataDir, 'mail', files[0]!)));
    expect(parsed.subject).toBe('Deal won: A & <B>');
    expect(String(parsed.html)).toContain('Deal won: A &amp; &lt;B&gt;');
    expect((parsed.to as { text: string }).text).toBe('someone@example.test');
    expect(logs.filter((l) => l.includes('email written to file'))).toHaveLength(1);
    expect(logs.join('')).not.toContain('someone@example.test');
  });
});
