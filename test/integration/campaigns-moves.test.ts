import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as campaigns from '../../db/campaigns';
import { CAMPAIGN_MOVES, isAllowedTransition, type CampaignMove, type CampaignStatus } from '../../domain/campaigns';
import { MOVE_UPDATES, campaignStatusQuery } from '../../workflows/campaign-messages';
import {
  FAR_FUTURE,
  contact,
  createCampaign,
  move,
  startedWorkflow,
  tenantWithAgent,
  waitFor,
  type CampaignTenant,
} from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';

// Moves that arrive together must run one at a time: the workflow and the row end in the same
// status, and the moves that succeeded form a sequence the state table allows.

let ctx: TestContext;
let t: CampaignTenant;

beforeAll(async () => {
  ctx = await createTestContext({ worker: true, env: { DIALER_SIMULATED_LATENCY_MS: '200', DIALER_SIMULATED_OUTCOMES: 'completed:1' } });
  t = await tenantWithAgent(ctx);
});
afterAll(() => ctx?.close());

const idle = () => contact({ scheduled_at: FAR_FUTURE }); // never due during a test
type Outcome = { move: CampaignMove; status: CampaignStatus } | { move: CampaignMove; refused: string };

/** True when some order of the successful moves walks the table from `start`, each answering its own result. */
function followsTable(start: CampaignStatus, done: { move: CampaignMove; status: CampaignStatus }[]): boolean {
  if (done.length === 0) return true;
  return done.some((step, i) => {
    if (!CAMPAIGN_MOVES[step.move].from.includes(start) || step.status !== CAMPAIGN_MOVES[step.move].to) return false;
    return followsTable(step.status, [...done.slice(0, i), ...done.slice(i + 1)]);
  });
}

/** Fires the moves at the workflow at once, bypassing the API's own pre-check. */
async function fireAtWorkflow(id: string, moves: CampaignMove[]): Promise<Outcome[]> {
  const { handle } = await startedWorkflow(ctx, id);
  return Promise.all(
    moves.map(async (m): Promise<Outcome> => {
      try {
        return { move: m, status: await handle.executeUpdate(MOVE_UPDATES[m], { args: [{ actor: 'user:test' }] }) };
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) return { move: m, refused: error.cause?.message ?? '' };
        throw error;
      }
    }),
  );
}

async function rowOf(id: string) {
  const row = await campaigns.findCampaign(ctx.deps.sql, t.orgId, id);
  return row!;
}

async function expectAgreement(id: string, start: CampaignStatus, outcomes: Outcome[]) {
  const done = outcomes.filter((o): o is { move: CampaignMove; status: CampaignStatus } => 'status' in o);
  for (const o of outcomes)
    if ('refused' in o) expect(o.refused).toMatch(new RegExp(`^Cannot ${o.move} a campaign that is (paused|active|canceled)$`));
  expect(followsTable(start, done), JSON.stringify(outcomes)).toBe(true);
  const row = await rowOf(id);
  const handle = ctx.deps.temporal.workflow.getHandle(`campaign:${id}`);
  const description = await handle.describe();
  const workflowStatus = description.status.name === 'RUNNING' ? await handle.query(campaignStatusQuery) : await handle.result();
  expect(workflowStatus).toBe(row.status);
  expect(row.closed_at !== null).toBe(row.status === 'canceled');
  // The last successful move decided the status: it is one of the answers, or the start when none succeeded.
  if (done.length) expect(done.map((d) => d.status)).toContain(row.status);
  else expect(row.status).toBe(start);
}

describe('concurrent moves of one campaign', () => {
  it('resume, pause and cancel fired together while the workflow opens, many times: workflow and row agree and follow the table', async () => {
    for (let round = 0; round < 8; round++) {
      const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
      const moves: CampaignMove[] = round % 2 ? ['resume', 'pause', 'cancel', 'resume', 'pause'] : ['cancel', 'pause', 'resume'];
      const outcomes = await fireAtWorkflow(id, moves);
      await expectAgreement(id, 'paused', outcomes);
    }
  });

  it('resume, pause and cancel fired together on an active campaign, many times', async () => {
    for (let round = 0; round < 8; round++) {
      const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
      expect((await move(ctx, t, id, 'resume')).body.status).toBe('active');
      const outcomes = await fireAtWorkflow(
        id,
        round % 2 ? ['pause', 'cancel', 'resume', 'pause', 'cancel'] : ['pause', 'resume', 'cancel'],
      );
      await expectAgreement(id, 'active', outcomes);
    }
  });

  it('through the API, concurrent moves answer 200 or 409 and leave the row where the workflow is', async () => {
    for (let round = 0; round < 6; round++) {
      const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
      const moves: CampaignMove[] = ['resume', 'pause', 'cancel', 'resume'];
      const answers = await Promise.all(moves.map((m) => move(ctx, t, id, m)));
      for (const a of answers) expect([200, 409]).toContain(a.status);
      // A 200 shows the row as read after the move, which a later move may already have changed.
      const outcomes: Outcome[] = answers.map((a, i) =>
        a.status === 200 ? { move: moves[i]!, status: CAMPAIGN_MOVES[moves[i]!].to } : { move: moves[i]!, refused: a.body.detail },
      );
      for (const a of answers) if (a.status === 200) expect(['active', 'paused', 'canceled']).toContain(a.body.status);
      await expectAgreement(id, 'paused', outcomes);
    }
  });

  it('a canceled campaign ends its workflow, and later moves are refused', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
    await fireAtWorkflow(id, ['cancel', 'cancel', 'resume']);
    await waitFor(async () => (await ctx.deps.temporal.workflow.getHandle(`campaign:${id}`).describe()).status.name === 'COMPLETED');
    const res = await move(ctx, t, id, 'resume');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: 'Cannot resume a campaign that is canceled' });
  });
});

describe('the row takes only moves the table allows', () => {
  it('refuses a write from a status the move does not start from, whoever makes it', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
    await move(ctx, t, id, 'cancel');
    for (const m of Object.keys(CAMPAIGN_MOVES) as CampaignMove[]) {
      const moved = await campaigns.setCampaignStatus(ctx.deps.sql, t.orgId, id, CAMPAIGN_MOVES[m], 'user:test');
      expect(moved).toBeUndefined();
    }
    expect((await rowOf(id)).status).toBe('canceled');
  });

  it('another organization cannot move the row', async () => {
    const { id } = await createCampaign(ctx, t, { contacts: [idle()] });
    const other = await tenantWithAgent(ctx);
    expect(await campaigns.setCampaignStatus(ctx.deps.sql, other.orgId, id, CAMPAIGN_MOVES.resume, 'user:test')).toBeUndefined();
    expect((await rowOf(id)).status).toBe('paused');
  });

  it('the table itself: completion only from active, nothing leaves a final status', () => {
    expect(isAllowedTransition('active', 'completed')).toBe(true);
    expect(isAllowedTransition('paused', 'completed')).toBe(false);
    for (const to of ['paused', 'active', 'completed', 'canceled'] as const) {
      expect(isAllowedTransition('canceled', to)).toBe(false);
      expect(isAllowedTransition('completed', to)).toBe(false);
    }
  });
});
