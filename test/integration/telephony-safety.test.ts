import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertConnection } from '../../db/integrations';
import { newId } from '../../platform/core/ids';
import { createTestContext, type TestContext } from '../support/context';
import { contact, createCampaign, move, tenantWithAgent, type CampaignTenant } from '../support/campaigns';

// No silent fake and no number that cannot ring: a campaign dialing through the simulated dialer says so
// (`simulated`), a provider account is refused while the service has no public https address for its
// callbacks, and every number the API dials or registers is a valid number of its region (422 otherwise).

let ctx: TestContext;

beforeAll(async () => {
  // The test context's PUBLIC_BASE_URL is http://127.0.0.1:<port>, as a machine without a public address.
  ctx = await createTestContext({ worker: true });
});
afterAll(() => ctx?.close());

/** A telephony connection row, as a successful connect leaves it (the provider is not asked here). */
async function connected(t: CampaignTenant) {
  const id = newId();
  const credential = await ctx.request('POST', '/workflow/credentials', { token: t.session, body: { name: `twilio-${id}` } });
  expect(credential.status).toBe(200);
  await insertConnection(ctx.deps.sql, t.orgId, id, {
    integration: 'twilio',
    kind: 'api_key',
    externalAccountId: `AC${'1'.repeat(32)}`,
    externalAccountLabel: 'Main',
    grantedScopes: [],
    endUserId: null,
    connectedBy: `user:${t.user}`,
    credentialId: credential.body.id,
  });
  return id;
}

describe('simulated', () => {
  it('is true on create, start, read and list while the organization dials through the simulated dialer', async () => {
    const t = await tenantWithAgent(ctx);
    const created = await createCampaign(ctx, t, { contacts: [contact()] });
    expect(created.simulated).toBe(true);
    const started = await move(ctx, t, created.id, 'resume');
    expect(started.status).toBe(200);
    expect(started.body.simulated).toBe(true);
    expect((await ctx.request('GET', `/campaign/campaigns/${created.id}`, { token: t.session })).body.simulated).toBe(true);
    const listed = await ctx.request('GET', '/campaign/campaigns', { token: t.session });
    expect(listed.body.data.map((c: { simulated: boolean }) => c.simulated)).toEqual([true]);
  });

  it('is false once the organization has a telephony account of its own', async () => {
    const t = await tenantWithAgent(ctx);
    await connected(t);
    const created = await createCampaign(ctx, t, { contacts: [contact()] });
    expect(created.simulated).toBe(false);
    expect((await ctx.request('GET', `/campaign/campaigns/${created.id}`, { token: t.session })).body.simulated).toBe(false);
  });
});

describe('a provider account without a public https address', () => {
  const keys = { provider: 'twilio', account_sid: `AC${'a'.repeat(32)}`, auth_token: 'b'.repeat(32) };

  it('is refused with 409 naming PUBLIC_BASE_URL, and nothing is stored', async () => {
    const t = await tenantWithAgent(ctx);
    const res = await ctx.request('POST', '/integrations/telephony-accounts', { token: t.session, body: keys });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/PUBLIC_BASE_URL is http:\/\/127\.0\.0\.1:\d+, not https/);
    expect((await ctx.request('GET', '/integrations/connections', { token: t.session })).body.data).toEqual([]);
  });

  it('new keys on an existing account are refused the same way; another organization’s connection stays 404', async () => {
    const t = await tenantWithAgent(ctx);
    const other = await tenantWithAgent(ctx);
    const id = await connected(t);
    const res = await ctx.request('PUT', `/integrations/telephony-accounts/${id}`, { token: t.session, body: keys });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/public https address/);
    expect((await ctx.request('PUT', `/integrations/telephony-accounts/${id}`, { token: other.session, body: keys })).status).toBe(404);
  });
});

describe('phone numbers', () => {
  const INVALID = '+10000000000'; // E.164 in shape, assigned by no region

  it('a campaign contact or caller id that is not a valid number is 422 naming the field; nothing is created', async () => {
    const t = await tenantWithAgent(ctx);
    const create = (body: Record<string, unknown>) =>
      ctx.request('POST', '/campaign/campaigns', { token: t.session, body: { name: 'x', agent_id: t.agentId, ...body } });
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ contacts: [contact(), { phone_numbers: ['+14155550100', INVALID] }] }, ['body', 'contacts', 1, 'phone_numbers', 1]],
      [{ agent_number: INVALID }, ['body', 'agent_number']],
      [{ contacts: [contact({ agent_number: '+1415555010' })] }, ['body', 'contacts', 0, 'agent_number']],
    ];
    for (const [body, loc] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
    }
    expect((await ctx.request('GET', '/campaign/campaigns', { token: t.session })).body.data).toEqual([]);
  });

  it('a valid number is stored in E.164, from any region', async () => {
    const t = await tenantWithAgent(ctx);
    const created = await createCampaign(ctx, t, { agent_number: '+442071838750', contacts: [{ phone_numbers: ['+33612345678'] }] });
    expect(created.agent_number).toBe('+442071838750');
    const contacts = await ctx.request('GET', `/campaign/campaigns/${created.id}/contacts`, { token: t.session });
    expect(contacts.body.data[0].phone_numbers).toEqual(['+33612345678']);
  });

  it('the inventory, the telephony caller id and agent transfer destinations refuse it too', async () => {
    const t = await tenantWithAgent(ctx);
    const registered = await ctx.request('POST', '/core/phone-numbers', { token: t.session, body: { number: INVALID } });
    expect(registered.status).toBe(422);
    expect(registered.body.detail[0].loc).toEqual(['body', 'number']);
    const account = await ctx.request('POST', '/integrations/telephony-accounts', {
      token: t.session,
      body: { provider: 'twilio', account_sid: `AC${'a'.repeat(32)}`, auth_token: 'b'.repeat(32), from_number: INVALID },
    });
    expect(account.status).toBe(422);
    expect(account.body.detail[0].loc).toEqual(['body', 'from_number']);
    const version = await ctx.request('POST', `/core/agents/${t.agentId}/versions`, {
      token: t.session,
      body: { config: { transfer: { enabled: true, default_destination: INVALID } } },
    });
    expect(version.status).toBe(422);
    expect(version.body.detail[0].loc).toEqual(['body', 'config', 'transfer', 'default_destination']);
  });
});
