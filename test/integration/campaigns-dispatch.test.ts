import type { WorkflowExecutionInfo } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInWindow, nextWindowOpening } from '../../domain/campaign-schedule';
import {
  contact,
  conversationsOf,
  createCampaign,
  move,
  tenantWithAgent,
  waitFor,
  waitForStatus,
  type CampaignTenant,
} from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { keepHistory } from '../support/histories';

// The per-organization dispatcher on the real dev server: the limit across campaigns, priority,
// scheduled_at, calling windows, retries with backoff, and continue-as-new (a small history limit
// and page size make every dispatcher here continue as new several times).

const HISTORY_LIMIT = 40;
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      DIALER_SIMULATED_LATENCY_MS: '300',
      DIALER_SIMULATED_OUTCOMES: 'completed:1',
      CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
      CAMPAIGN_DISPATCH_PAGE_SIZE: '2',
      CAMPAIGN_HISTORY_LIMIT: String(HISTORY_LIMIT),
    },
  });
});
afterAll(() => ctx?.close());

async function limit(t: CampaignTenant, n: number) {
  const res = await ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body: { concurrency_limit: n } });
  expect(res.status).toBe(200);
}

interface Dialed {
  idempotency_key: string;
  placed_at: Date;
  due_at: Date;
}

async function dialedOf(orgId: string): Promise<Dialed[]> {
  return ctx.deps.sql<
    Dialed[]
  >`SELECT idempotency_key, placed_at, due_at FROM dialer_simulated_calls WHERE org_id = ${orgId} ORDER BY placed_at`;
}

/** Resolves once the organization's dispatcher has finished a cycle after the last signal it was sent, or has ended. */
async function dispatcherCaughtUp(orgId: string): Promise<void> {
  const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${orgId}`);
  await waitFor(
    async () => {
      const described = await dispatcher.describe();
      if (described.status.name !== 'RUNNING') return true;
      if ((described.raw.pendingActivities ?? []).length > 0) return false;
      const events = (await dispatcher.fetchHistory()).events ?? [];
      const lastSignal = events.findLastIndex((e) => e.workflowExecutionSignaledEventAttributes);
      return events.findLastIndex((e) => e.activityTaskCompletedEventAttributes) > lastSignal;
    },
    30_000,
    'a dispatch cycle after the last signal',
  );
}

/** Most calls ringing at one instant. */
function peak(calls: Dialed[]): number {
  const edges = calls.flatMap((c) => [
    [c.placed_at.getTime(), 1],
    [c.due_at.getTime(), -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d!));
  return most;
}

describe('dispatch', () => {
  it("never has more calls in flight than the organization's limit, across all its campaigns", async () => {
    const t = await tenantWithAgent(ctx);
    await limit(t, 3);
    const a = await createCampaign(ctx, t, { contacts: Array.from({ length: 8 }, () => contact()) });
    const b = await createCampaign(ctx, t, { contacts: Array.from({ length: 8 }, () => contact()) });
    await move(ctx, t, a.id, 'resume');
    await move(ctx, t, b.id, 'resume');
    let sampled = 0;
    const sampling = (async () => {
      while ((await ctx.request('GET', `/campaign/campaigns/${b.id}`, { token: t.session })).body.status !== 'completed') {
        sampled = Math.max(sampled, (await ctx.request('GET', '/campaign/concurrency-settings', { token: t.session })).body.active);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await waitForStatus(ctx, t, a.id, 'completed');
    await waitForStatus(ctx, t, b.id, 'completed');
    await sampling;
    const dialed = await dialedOf(t.orgId);
    expect(dialed).toHaveLength(16);
    expect(peak(dialed)).toBeLessThanOrEqual(3); // never passed (whether all 3 fill at once depends on the machine's speed)
    expect(sampled).toBeLessThanOrEqual(3);
    expect(sampled).toBeGreaterThan(0);
  });

  it('calls the contacts of higher-priority campaigns first', async () => {
    const t = await tenantWithAgent(ctx);
    await limit(t, 0); // hold every call until both campaigns are active
    const low = await createCampaign(ctx, t, { priority: 1, contacts: Array.from({ length: 3 }, () => contact()) });
    const high = await createCampaign(ctx, t, { priority: 500, contacts: Array.from({ length: 3 }, () => contact()) });
    await move(ctx, t, low.id, 'resume');
    await move(ctx, t, high.id, 'resume');
    await dispatcherCaughtUp(t.orgId); // it has seen both campaigns active
    expect(await dialedOf(t.orgId)).toEqual([]); // a limit of 0 stops new calls
    await limit(t, 1);
    await waitForStatus(ctx, t, low.id, 'completed');
    const order = (await dialedOf(t.orgId)).map((d) => d.idempotency_key.split(':')[0]);
    expect(order).toEqual([high.id, high.id, high.id, low.id, low.id, low.id]);
  });

  it('does not call a contact before its scheduled_at', async () => {
    const t = await tenantWithAgent(ctx);
    const scheduledAt = new Date(Date.now() + 2500);
    const { id } = await createCampaign(ctx, t, {
      contacts: [contact({ external_id: 'later', scheduled_at: scheduledAt.toISOString() }), contact({ external_id: 'now' })],
    });
    await move(ctx, t, id, 'resume');
    await waitForStatus(ctx, t, id, 'completed');
    const contacts = (await ctx.request('GET', `/campaign/campaigns/${id}/contacts`, { token: t.session })).body.data as {
      id: string;
      external_id: string;
    }[];
    const calls = await conversationsOf(ctx, id);
    const startOf = (ext: string) =>
      calls.find((c) => c.contact_ref === contacts.find((x) => x.external_id === ext)!.id)!.started_at!.getTime();
    expect(startOf('later')).toBeGreaterThanOrEqual(scheduledAt.getTime());
    expect(startOf('now')).toBeLessThan(scheduledAt.getTime());
  });

  it("calls only inside the calling window of each contact's own time zone", async () => {
    const t = await tenantWithAgent(ctx);
    const window = { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5, 6, 7] };
    // Etc/GMT+12 … Etc/GMT-14 cover every hour of the day: pick one zone inside the window now and one outside.
    const zones = Array.from({ length: 27 }, (_, i) => i - 14).map((h) =>
      h === 0 ? 'Etc/GMT' : `Etc/GMT${h > 0 ? '+' : '-'}${Math.abs(h)}`,
    );
    const now = new Date();
    const inside = zones.find((z) => isInWindow(now, z, window) && isInWindow(new Date(now.getTime() + 60_000), z, window))!;
    const outside = zones.find((z) => !isInWindow(now, z, window) && !isInWindow(new Date(now.getTime() + 60_000), z, window))!;
    const { id } = await createCampaign(ctx, t, {
      calling_window: window,
      contacts: [contact({ external_id: 'in', timezone: inside }), contact({ external_id: 'out', timezone: outside })],
    });
    await move(ctx, t, id, 'resume');
    const list = async () =>
      (await ctx.request('GET', `/campaign/campaigns/${id}/contacts`, { token: t.session })).body.data as Record<string, any>[];
    await waitFor(async () => (await list()).find((c) => c.external_id === 'in')!.status === 'completed');
    await waitFor(async () => Date.parse((await list()).find((c) => c.external_id === 'out')!.next_attempt_at) > now.getTime() + 60_000);
    const out = (await list()).find((c) => c.external_id === 'out')!;
    expect(out).toMatchObject({ status: 'pending', attempts: 0 });
    // Deferred to the next opening of its window, in its zone.
    expect(out.next_attempt_at).toBe(nextWindowOpening(now, outside, window).toISOString());
    expect(await conversationsOf(ctx, id)).toHaveLength(1);
    expect((await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session })).body.status).toBe('active');
    await move(ctx, t, id, 'cancel');
  });

  it('retries unanswered or busy attempts with a doubling backoff, rotating numbers, up to max_attempts', async () => {
    const t = await tenantWithAgent(ctx);
    const { id } = await createCampaign(ctx, t, {
      max_attempts: 3,
      retry_backoff_seconds: 1,
      contacts: [
        contact({
          external_id: 'third-time',
          phone_numbers: ['+14155550111', '+14155550112'],
          data: { simulate: { outcomes: ['no_answer', 'busy', 'completed'] } },
        }),
        contact({ external_id: 'never', data: { simulate: { outcomes: ['no_answer', 'failed', 'no_answer'] } } }),
      ],
    });
    await move(ctx, t, id, 'resume');
    await waitForStatus(ctx, t, id, 'completed', 40_000);
    const contacts = (await ctx.request('GET', `/campaign/campaigns/${id}/contacts`, { token: t.session })).body.data as Record<
      string,
      any
    >[];
    const third = contacts.find((c) => c.external_id === 'third-time')!;
    const never = contacts.find((c) => c.external_id === 'never')!;
    expect(third).toMatchObject({ status: 'completed', attempts: 3, last_outcome: 'completed', next_attempt_at: null });
    expect(never).toMatchObject({ status: 'failed', attempts: 3, last_outcome: 'no_answer', next_attempt_at: null });

    const calls = (await conversationsOf(ctx, id)).filter((c) => c.contact_ref === third.id);
    expect(calls.map((c) => [c.idempotency_key, c.status, c.phone_number])).toEqual([
      [`${id}:${third.id}:1`, 'no_answer', '+14155550111'],
      [`${id}:${third.id}:2`, 'busy', '+14155550112'],
      [`${id}:${third.id}:3`, 'completed', '+14155550111'],
    ]);
    // Backoff 1 s after the first failure, 2 s after the second (measured from the recorded end).
    expect(calls[1]!.created_at.getTime() - calls[0]!.ended_at!.getTime()).toBeGreaterThanOrEqual(1000);
    expect(calls[2]!.created_at.getTime() - calls[1]!.ended_at!.getTime()).toBeGreaterThanOrEqual(2000);
    const progress = (await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session })).body.progress;
    expect(progress).toEqual({ total: 2, pending: 0, calling: 0, completed: 1, failed: 1, canceled: 0 });
    // With nothing left to call, the dispatcher stops.
    const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${t.orgId}`);
    await waitFor(async () => (await dispatcher.describe()).status.name === 'COMPLETED');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, `campaign:${id}`, 'campaign-completed');
  });

  it('pausing stops new calls; resuming picks up where it stopped', async () => {
    const t = await tenantWithAgent(ctx);
    await limit(t, 1);
    const { id } = await createCampaign(ctx, t, { contacts: Array.from({ length: 4 }, () => contact()) });
    await move(ctx, t, id, 'resume');
    await waitFor(async () => (await conversationsOf(ctx, id)).length >= 1);
    expect((await move(ctx, t, id, 'pause')).body.status).toBe('paused');
    const atPause = (await conversationsOf(ctx, id)).length;
    // The call in flight ends and, with nothing due in an active campaign, the dispatcher ends too:
    // once it has, no call can start, so the count is final.
    const dispatcher = ctx.deps.temporal.workflow.getHandle(`campaign-dispatcher:${t.orgId}`);
    await waitFor(async () => (await dispatcher.describe()).status.name === 'COMPLETED', 30_000, 'the dispatcher to end');
    expect((await conversationsOf(ctx, id)).length).toBe(atPause);
    expect((await conversationsOf(ctx, id)).every((c) => c.status === 'completed')).toBe(true);
    await move(ctx, t, id, 'resume');
    await waitForStatus(ctx, t, id, 'completed');
    expect(await conversationsOf(ctx, id)).toHaveLength(4);
  });
});

describe('the call on the CRM contact', () => {
  it('writes the call on the contact data.crm_contact_id names, else on the oldest contact with the number', async () => {
    const t = await tenantWithAgent(ctx);
    const crm = async (first_name: string, phone: string) => {
      const res = await ctx.request('POST', '/contacts', { token: t.session, body: { first_name, phone } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };
    const byPhone = await crm('Oldest', '+14155550301');
    await crm('Newer', '+14155550301');
    const named = await crm('Named', '+14155550302');
    const campaign = await createCampaign(ctx, t, {
      max_attempts: 1,
      contacts: [
        // Named by id (another contact has the dialed number): the named one.
        contact({ phone_numbers: ['+14155550301'], external_id: 'named', data: { crm_contact_id: named } }),
        // An id that is no uuid, or of no contact: the number decides, and nothing fails.
        contact({ phone_numbers: ['+14155550301'], external_id: 'garbled', data: { crm_contact_id: 'not-an-id' } }),
        contact({
          phone_numbers: ['+14155550301'],
          external_id: 'unknown',
          data: { crm_contact_id: '018f0000-0000-7000-8000-0000000000aa' },
        }),
        // A number no contact has: no activity.
        contact({ phone_numbers: ['+14155550399'], external_id: 'nobody' }),
      ],
    });
    await move(ctx, t, campaign.id, 'resume');
    await waitForStatus(ctx, t, campaign.id, 'completed');
    const activities = await ctx.deps.sql<{ contact_id: string; type: string; metadata: { outcome: string } }[]>`
      SELECT contact_id, type, metadata FROM activities WHERE org_id = ${t.orgId} AND type = 'call' ORDER BY contact_id`;
    const on = (id: string) => activities.filter((a) => a.contact_id === id).length;
    expect(activities).toHaveLength(3);
    expect(on(named)).toBe(1);
    expect(on(byPhone)).toBe(2);
    expect(activities.every((a) => a.metadata.outcome === 'completed')).toBe(true);
  });
});

describe('continue-as-new', () => {
  it('keeps each dispatcher run under its history limit; contacts are read in pages, each dialed once', async () => {
    const t = await tenantWithAgent(ctx);
    await limit(t, 2);
    const { id } = await createCampaign(ctx, t, { contacts: Array.from({ length: 14 }, () => contact()) });
    await move(ctx, t, id, 'resume');
    await waitForStatus(ctx, t, id, 'completed', 60_000);
    expect(new Set((await conversationsOf(ctx, id)).map((c) => c.idempotency_key)).size).toBe(14);
    expect(await dialedOf(t.orgId)).toHaveLength(14);

    const runs = await waitFor(async () => {
      const found: WorkflowExecutionInfo[] = [];
      for await (const run of ctx.deps.temporal.workflow.list({ query: `WorkflowId = 'campaign-dispatcher:${t.orgId}'` })) found.push(run);
      return found.length >= 3 && found.every((r) => r.status.name !== 'RUNNING') ? found : undefined;
    });
    expect(runs.filter((r) => r.status.name === 'CONTINUED_AS_NEW').length).toBeGreaterThanOrEqual(2);
    expect(runs.filter((r) => r.status.name === 'COMPLETED')).toHaveLength(1); // idle at the end, it stops
    for (const run of runs) {
      const history = await ctx.deps.temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      // The check runs after each cycle: one cycle's events (a few signals and one activity) may pass the limit.
      expect(history.events!.length).toBeLessThanOrEqual(HISTORY_LIMIT + 25);
    }
  });
});
