import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey } from '../support/identity';
import { contact, createCampaign, move, tenantWithAgent, waitFor, type CampaignTenant } from '../support/campaigns';

// The organization's do-not-call list: the routes (normalized numbers, 409 on a second add, 422 naming the
// field, tenancy, scopes) and the dispatcher, which never dials a listed number: the attempt fails with
// do_not_call and the contact is not tried again; listing a number cancels the pending contacts that carry it.

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: { DIALER_SIMULATED_LATENCY_MS: '200', DIALER_SIMULATED_OUTCOMES: 'no_answer:1', CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1' },
  });
});
afterAll(() => ctx?.close());

const list = (t: { session: string }, number: string, reason?: string) =>
  ctx.request('POST', '/core/do-not-call', { token: t.session, body: { number, ...(reason ? { reason } : {}) } });

async function contactsOf(orgId: string, campaignId: string) {
  return ctx.deps.sql<{ id: string; phone_numbers: string[]; status: string; attempts: number; last_outcome: string | null }[]>`
    SELECT id, phone_numbers, status, attempts, last_outcome FROM campaign_contacts WHERE org_id = ${orgId} AND campaign_id = ${campaignId}`;
}

describe('the list', () => {
  it('lists a number once (409 after), reads it, and removes it (404 after)', async () => {
    const t = await tenantWithAgent(ctx);
    const added = await list(t, '+14155550142', 'asked on the phone');
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({
      number: '+14155550142',
      organization_id: t.orgId,
      reason: 'asked on the phone',
      canceled_contacts: 0,
    });
    expect(await list(t, '+14155550142')).toMatchObject({
      status: 409,
      body: { detail: 'Number already on the do-not-call list: +14155550142' },
    });
    await list(t, '+33612345678');
    const page = await ctx.request('GET', '/core/do-not-call', { token: t.session });
    expect(page.status).toBe(200);
    expect(page.body.data.map((e: { number: string }) => e.number)).toEqual(['+14155550142', '+33612345678']);
    expect(page.body.pagination).toMatchObject({ total: 2 });
    expect((await ctx.request('GET', '/core/do-not-call/+33612345678', { token: t.session })).body).toMatchObject({
      number: '+33612345678',
    });
    expect((await ctx.request('DELETE', '/core/do-not-call/+33612345678', { token: t.session })).status).toBe(204);
    expect((await ctx.request('DELETE', '/core/do-not-call/+33612345678', { token: t.session })).status).toBe(404);
    expect((await ctx.request('GET', '/core/do-not-call/+33612345678', { token: t.session })).status).toBe(404);
  });

  it('refuses a number that is not valid for its region with 422 naming the field, and changes nothing', async () => {
    const t = await tenantWithAgent(ctx);
    for (const bad of ['+10000000000', '+1415555010', '4155550100', '+1 415 555 0100', '+999123456789']) {
      const res = await list(t, bad);
      expect(res.status, bad).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'number'] });
    }
    expect((await ctx.request('GET', '/core/do-not-call/+10000000000', { token: t.session })).status).toBe(422);
    expect((await ctx.request('GET', '/core/do-not-call', { token: t.session })).body.data).toEqual([]);
  });

  it("keeps each organization's list to itself: another's numbers are invisible and 404", async () => {
    const a = await tenantWithAgent(ctx);
    const b = await tenantWithAgent(ctx);
    await list(b, '+14155550143');
    expect((await ctx.request('GET', '/core/do-not-call', { token: a.session })).body.data).toEqual([]);
    expect((await ctx.request('GET', '/core/do-not-call/+14155550143', { token: a.session })).status).toBe(404);
    expect((await ctx.request('DELETE', '/core/do-not-call/+14155550143', { token: a.session })).status).toBe(404);
    // A lists the same number for itself: no conflict with B's.
    expect((await list(a, '+14155550143')).status).toBe(200);
    expect((await ctx.request('GET', '/core/do-not-call', { token: b.session })).body.data).toHaveLength(1);
  });

  it('a read-only key reads the list but gets 403 on every change', async () => {
    const t = await tenantWithAgent(ctx);
    await list(t, '+14155550144');
    const readOnly = { session: await createOrgKey(ctx, t.session, { scopes: ['api:read'] }) };
    expect((await ctx.request('GET', '/core/do-not-call', { token: readOnly.session })).status).toBe(200);
    expect((await list(readOnly, '+14155550145')).status).toBe(403);
    expect((await ctx.request('DELETE', '/core/do-not-call/+14155550144', { token: readOnly.session })).status).toBe(403);
    expect((await ctx.request('GET', '/core/do-not-call', { token: t.session })).body.data).toHaveLength(1);
  });
});

describe('the dispatcher', () => {
  it('never dials a listed number: the attempt fails with do_not_call, once, and the others are called', async () => {
    const t: CampaignTenant = await tenantWithAgent(ctx);
    const listed = contact();
    const free = contact();
    await list(t, listed.phone_numbers[0]!);
    const { id } = await createCampaign(ctx, t, { max_attempts: 3, retry_backoff_seconds: 1, contacts: [listed, free] });
    expect((await move(ctx, t, id, 'resume')).status).toBe(200);
    // The free number is tried three times (no answer each time); the listed one never.
    const rows = await waitFor(
      async () => {
        const rows = await contactsOf(t.orgId, id);
        return rows.every((r) => r.status === 'failed') && rows;
      },
      45_000,
      'both contacts final',
    );
    const byNumber = new Map(rows.map((r) => [r.phone_numbers[0], r]));
    expect(byNumber.get(listed.phone_numbers[0])).toMatchObject({ status: 'failed', attempts: 1, last_outcome: 'do_not_call' });
    expect(byNumber.get(free.phone_numbers[0])).toMatchObject({ status: 'failed', attempts: 3, last_outcome: 'no_answer' });
    const dialed = await ctx.deps.sql<{ phone_number: string }[]>`
      SELECT phone_number FROM dialer_simulated_calls WHERE org_id = ${t.orgId}`;
    expect(dialed.map((d) => d.phone_number)).not.toContain(listed.phone_numbers[0]);
    expect(dialed).toHaveLength(3);
    const [conversation] = await ctx.deps.sql<{ status: string; outcome: Record<string, unknown> }[]>`
      SELECT status, outcome FROM conversations WHERE org_id = ${t.orgId} AND phone_number = ${listed.phone_numbers[0]!}`;
    expect(conversation).toMatchObject({ status: 'failed', outcome: { reason: 'do_not_call' } });
    const read = await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session });
    expect(read.body.progress).toMatchObject({ failed: 2, pending: 0, calling: 0 });
  });

  it('listing a number cancels the pending contacts that carry it, in any of their numbers', async () => {
    const t = await tenantWithAgent(ctx);
    const number = contact().phone_numbers[0]!;
    const other = contact().phone_numbers[0]!;
    const { id } = await createCampaign(ctx, t, {
      contacts: [contact({ phone_numbers: [other, number] }), contact({ phone_numbers: [number] }), contact()],
    });
    const added = await list(t, number);
    expect(added.body.canceled_contacts).toBe(2);
    const rows = await contactsOf(t.orgId, id);
    expect(rows.filter((r) => r.status === 'canceled').map((r) => r.last_outcome)).toEqual(['do_not_call', 'do_not_call']);
    expect(rows.filter((r) => r.status === 'pending')).toHaveLength(1);
  });
});
