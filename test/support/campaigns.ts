import { expect } from 'vitest';
import { describeWorkflow } from '../../services/workflow-client';
import type { TestContext } from './context';
import { newTenant, type Tenant } from './identity';

export const ALWAYS = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
export const FAR_FUTURE = '2099-01-01T00:00:00Z';

export interface CampaignTenant extends Tenant {
  orgId: string;
  agentId: string;
}

/** A tenant with one agent (through the Agents API) and its organization's uuid. */
export async function tenantWithAgent(ctx: TestContext, scopes?: string[]): Promise<CampaignTenant> {
  const tenant = await newTenant(ctx, scopes);
  const agent = await ctx.request('POST', '/core/agents', { token: tenant.session, body: { name: 'Caller' } });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const me = await ctx.request('GET', '/me', { token: tenant.session });
  return { ...tenant, orgId: me.body.organization.id, agentId: agent.body.id };
}

let phone = 0;
/** A contact with a fresh number; `overrides` win. */
export const contact = (overrides: Record<string, unknown> = {}) => ({
  phone_numbers: [`+1415555${String(1000 + (phone++ % 9000)).padStart(4, '0')}`],
  ...overrides,
});

export async function createCampaign(ctx: TestContext, t: CampaignTenant, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/campaign/campaigns', {
    token: t.session,
    body: { name: 'Spring outreach', agent_id: t.agentId, calling_window: ALWAYS, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; status: string; [k: string]: unknown };
}

export async function move(ctx: TestContext, t: Tenant, id: string, action: 'resume' | 'pause' | 'cancel') {
  return ctx.request('POST', `/campaign/campaigns/${id}/${action}`, { token: t.session });
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The campaign's workflow once it exists: a create starts it right after answering. */
export async function startedWorkflow(ctx: TestContext, id: string) {
  const handle = ctx.deps.temporal.workflow.getHandle(`campaign:${id}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const description = await describeWorkflow(ctx.deps, handle.workflowId);
    if (description) return { handle, description };
    if (Date.now() > deadline) throw new Error(`the workflow of campaign ${id} was not started within 30 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function campaignStatus(ctx: TestContext, t: Tenant, id: string): Promise<string> {
  const res = await ctx.request('GET', `/campaign/campaigns/${id}`, { token: t.session });
  return res.body.status;
}

export const waitForStatus = (ctx: TestContext, t: Tenant, id: string, status: string, timeoutMs = 30_000) =>
  waitFor(async () => (await campaignStatus(ctx, t, id)) === status, timeoutMs, `campaign ${id} ${status}`);

export interface ConversationRow {
  id: string;
  idempotency_key: string;
  status: string;
  contact_ref: string;
  phone_number: string;
  agent_id: string | null;
  direction: string;
  started_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  outcome: Record<string, unknown>;
  created_at: Date;
}

export async function conversationsOf(ctx: TestContext, campaignId: string): Promise<ConversationRow[]> {
  return ctx.deps.sql<ConversationRow[]>`
    SELECT id, idempotency_key, status, contact_ref, phone_number, agent_id, direction, started_at, ended_at, duration_seconds, outcome, created_at
    FROM conversations WHERE campaign_id = ${campaignId} ORDER BY created_at, idempotency_key`;
}
