import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDialGate } from '../../services/campaigns/pacing';
import { createTestContext, type TestContext } from '../support/context';
import { createOrgKey } from '../support/identity';
import { contact, createCampaign, move, tenantWithAgent, waitFor, type CampaignTenant } from '../support/campaigns';

// Pacing beside the concurrency limit: the settings (bounds, defaults, partial updates) and the dispatcher's
// calls measured where they are placed (the simulated dialer's rows, stamped by Postgres as each call is
// handed over): never more than the pace in any window, and at the pace while there is work.

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      DIALER_SIMULATED_LATENCY_MS: '200',
      DIALER_SIMULATED_OUTCOMES: 'completed:1',
      CAMPAIGN_SWEEP_INTERVAL_SECONDS: '1',
      // This file's own defaults: what an organization that sets nothing gets.
      CAMPAIGN_DEFAULT_CALLS_PER_SECOND: '20',
      CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER: '10',
    },
  });
});
afterAll(() => ctx?.close());

const put = (t: CampaignTenant, body: Record<string, unknown>) =>
  ctx.request('PUT', '/campaign/concurrency-settings', { token: t.session, body });

async function placedTimes(orgId: string, count: number): Promise<number[]> {
  const rows = await waitFor(
    async () => {
      const rows = await ctx.deps.sql<{ at: number }[]>`
        SELECT extract(epoch FROM placed_at) * 1000 AS at FROM dialer_simulated_calls WHERE org_id = ${orgId} ORDER BY placed_at`;
      return rows.length >= count && rows;
    },
    45_000,
    `${count} calls placed`,
  );
  return rows.map((r) => Number(r.at));
}

/** The shortest time any `perWindow + 1` consecutive calls took: at least a second when the pace holds. */
function tightestWindow(times: number[], perSecond: number): number {
  let tightest = Infinity;
  for (let i = 0; i + perSecond < times.length; i++) tightest = Math.min(tightest, times[i + perSecond]! - times[i]!);
  return tightest;
}

/**
 * Milliseconds a measured gap may fall short of the pace. The gate's reserved instants are exact (the two-gate
 * test reads them); a call's stamp comes after the timer and the dialer's own insert, late by a few
 * milliseconds alone and by tens on a loaded machine, and a late first call shortens the gap after it.
 */
const PLACEMENT_JITTER_MS = 100;

describe('pacing settings', () => {
  it('reads the defaults, takes each field on its own, and refuses values out of bounds with 422', async () => {
    const t = await tenantWithAgent(ctx);
    const fresh = await ctx.request('GET', '/campaign/concurrency-settings', { token: t.session });
    expect(fresh.body).toMatchObject({ calls_per_second: 20, calls_per_second_per_number: 10 });

    expect((await put(t, { concurrency_limit: 5, calls_per_second: 7 })).body).toMatchObject({
      concurrency_limit: 5,
      calls_per_second: 7,
      calls_per_second_per_number: 10,
    });
    // Omitted pacing fields stay as they are.
    expect((await put(t, { concurrency_limit: 6, calls_per_second_per_number: 2 })).body).toMatchObject({
      concurrency_limit: 6,
      calls_per_second: 7,
      calls_per_second_per_number: 2,
    });
    for (const [field, value] of [
      ['calls_per_second', 0],
      ['calls_per_second', 101],
      ['calls_per_second_per_number', 11],
      ['calls_per_second', 1.5],
    ] as const) {
      const res = await put(t, { concurrency_limit: 5, [field]: value });
      expect(res.status, `${field}=${value}`).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', field]);
    }
    const after = await ctx.request('GET', '/campaign/concurrency-settings', { token: t.session });
    expect(after.body).toMatchObject({ concurrency_limit: 6, calls_per_second: 7, calls_per_second_per_number: 2 });
  });

  it('a read-only key cannot change them (403)', async () => {
    const t = await tenantWithAgent(ctx);
    const readOnly = { ...t, session: await createOrgKey(ctx, t.session, { scopes: ['api:read'] }) };
    expect((await put(readOnly, { concurrency_limit: 5, calls_per_second: 3 })).status).toBe(403);
    expect((await ctx.request('GET', '/campaign/concurrency-settings', { token: readOnly.session })).status).toBe(200);
  });
});

describe('the dispatcher at the pace', () => {
  it('never starts more calls a second than calls_per_second, and starts them at that pace', async () => {
    const t = await tenantWithAgent(ctx);
    expect((await put(t, { concurrency_limit: 100, calls_per_second: 5, calls_per_second_per_number: 10 })).status).toBe(200);
    // Each contact from its own caller number: only the account's pace applies.
    const contacts = Array.from({ length: 16 }, (_, i) => contact({ agent_number: `+1415666${String(1000 + i)}` }));
    const { id } = await createCampaign(ctx, t, { contacts });
    expect((await move(ctx, t, id, 'resume')).status).toBe(200);
    const times = await placedTimes(t.orgId, 16);
    expect(tightestWindow(times, 5)).toBeGreaterThanOrEqual(1000 - PLACEMENT_JITTER_MS);
    // At the pace: 15 gaps of 200 ms, with room for the cycle that claims them.
    const span = times.at(-1)! - times[0]!;
    expect(span).toBeGreaterThanOrEqual(15 * 200 - PLACEMENT_JITTER_MS);
    expect(span).toBeLessThan(15 * 200 + 1500);
  });

  it('holds one caller number to calls_per_second_per_number while the account allows more', async () => {
    const t = await tenantWithAgent(ctx);
    expect((await put(t, { concurrency_limit: 100, calls_per_second: 100, calls_per_second_per_number: 2 })).status).toBe(200);
    const { id } = await createCampaign(ctx, t, { agent_number: '+14156660100', contacts: Array.from({ length: 7 }, () => contact()) });
    expect((await move(ctx, t, id, 'resume')).status).toBe(200);
    const times = await placedTimes(t.orgId, 7);
    expect(tightestWindow(times, 2)).toBeGreaterThanOrEqual(1000 - PLACEMENT_JITTER_MS);
    expect(times.at(-1)! - times[0]!).toBeLessThan(6 * 500 + 1500);
  });

  it('keeps the spacing between two dialers of one organization (two workers, or a retried activity beside the old one)', async () => {
    const t = await tenantWithAgent(ctx);
    const pacing = { callsPerSecond: 10, callsPerSecondPerNumber: 10 };
    // The instants each gate reserved (the database's clock) and when it let the call through (this process's).
    const slots: number[] = [];
    const admitted: number[] = [];
    const gates = [0, 1].map(() =>
      createDialGate(
        ctx.deps.sql,
        t.orgId,
        pacing,
        () => {},
        (at) => slots.push(at),
      ),
    );
    await Promise.all(
      gates.map(async (gate, g) => {
        for (let i = 0; i < 10; i++) {
          expect(await gate.admit(`+1415777${g}${String(100 + i)}`, null)).toBe('dial');
          admitted.push(Date.now());
        }
      }),
    );
    slots.sort((a, b) => a - b);
    admitted.sort((a, b) => a - b);
    // Reserved 100 ms apart exactly, whichever gate asked; let through no earlier than reserved.
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBeGreaterThanOrEqual(100 - 0.01);
    expect(tightestWindow(admitted, 10)).toBeGreaterThanOrEqual(1000 - PLACEMENT_JITTER_MS);
    expect(slots.at(-1)! - slots[0]!).toBeLessThan(19 * 100 + 50);
  });
});
