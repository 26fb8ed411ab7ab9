import crypto from 'node:crypto';
import { accountExists } from '../../db/accounts';
import * as db from '../../db/ai-chat';
import type { Db, Sql } from '../../db/client';
import { getContact as getContactRow } from '../../db/contacts';
import { getDeal } from '../../db/deals';
import { appendFrames } from '../../db/ui-streams';
import {
  type ToolInput,
  type TranscriptMessage,
  type WriteTool,
  isWriteTool,
  parseToolInput,
  untrustedToolOutput,
} from '../../domain/ai-chat';
import { isClosedStage } from '../../domain/deals';
import { invalid, isDomainError } from '../../domain/errors';
import { PlanError, compilePlan } from '../../domain/semantic-layer/compile';
import { Plan, type PlanInput } from '../../domain/semantic-layer/plan';
import type { UiFrame } from '../../domain/ui-message-stream';
import { newId } from '../../platform/core/ids';
import * as accounts from '../accounts';
import * as crmActivities from '../crm-activities';
import * as contacts from '../contacts';
import * as deals from '../deals';
import { attemptQuery } from '../assistants/query-runner';
import { orgIndex } from '../assistants/understanding';
import type { ServiceDeps } from '../deps';
import { proposalPreview } from './proposal-preview';
import { contactSearchPlan, dealSearchPlan } from './search-plans';

type Deps = Pick<ServiceDeps, 'sql' | 'logger' | 'config'>;

/** The reads the assistant runs at once, through the same services as the REST API (plans through the analytics reader). */
export async function runRead(deps: Deps, orgId: string, name: string, input: unknown): Promise<unknown> {
  const { sql } = deps;
  switch (name) {
    case 'search_accounts': {
      const { query } = input as ToolInput<'search_accounts'>;
      return { accounts: await accounts.listAccounts({ sql }, orgId, { limit: 10, offset: 0, search: query }) };
    }
    case 'get_account': {
      const { account_id } = input as ToolInput<'get_account'>;
      const account = await accounts.getAccount({ sql }, orgId, account_id);
      const [people, all, recent] = await Promise.all([
        contacts.listContacts({ sql }, orgId, { account_id }, { limit: 25, offset: 0 }),
        deals.listDeals({ sql }, orgId, { account_id, limit: 50, offset: 0 }),
        crmActivities.accountFeed({ sql }, orgId, account_id, { excludeFuture: false, limit: 10, offset: 0 }),
      ]);
      return {
        account,
        contacts: people.contacts.map((c) => ({
          id: c.id,
          first_name: c.first_name,
          last_name: c.last_name,
          email: c.email,
          title: c.title,
        })),
        open_deals: all.filter((d) => !isClosedStage(d.stage)),
        deals: all.map((d) => ({ id: d.id, name: d.name, stage: d.stage, value: d.value, currency: d.currency, close_date: d.close_date })),
        recent_activities: recent.map((a) => ({
          id: a.id,
          type: a.type,
          summary: a.summary,
          due_at: a.due_at,
          effective_time: a.effective_time,
        })),
      };
    }
    case 'get_contact': {
      const { contact_id } = input as ToolInput<'get_contact'>;
      return { contact: await contacts.getContact({ sql }, orgId, contact_id) };
    }
    case 'get_deal': {
      const { deal_id } = input as ToolInput<'get_deal'>;
      const deal = await deals.getDeal({ sql }, orgId, deal_id);
      const recent = await crmActivities.dealFeed({ sql }, orgId, deal_id, { excludeFuture: false, limit: 10, offset: 0 });
      return {
        deal,
        recent_activities: recent.map((a) => ({ id: a.id, type: a.type, summary: a.summary, effective_time: a.effective_time })),
      };
    }
    case 'list_deals': {
      const q = input as ToolInput<'list_deals'>;
      return { deals: await deals.listDeals({ sql }, orgId, { ...q, limit: 25, offset: 0 }) };
    }
    case 'search_contacts':
      return runPlan(deps, orgId, contactSearchPlan(input as ToolInput<'search_contacts'>));
    case 'search_deals':
      return runPlan(deps, orgId, dealSearchPlan(input as ToolInput<'search_deals'>));
    case 'query_crm':
      return runPlan(deps, orgId, (input as ToolInput<'query_crm'>).plan);
    default:
      throw new Error(`not a read tool: ${name}`);
  }
}

/** A plan compiled by the semantic layer and run as the analytics reader: columns and rows, or the reason it cannot run. */
async function runPlan(deps: Deps, orgId: string, input: PlanInput) {
  const { catalog } = await orgIndex(deps, orgId);
  let compiled: ReturnType<typeof compilePlan>;
  try {
    compiled = compilePlan(Plan.parse(input), catalog);
  } catch (error) {
    if (error instanceof PlanError) throw invalid(error.message);
    throw error;
  }
  const outcome = await attemptQuery(deps, orgId, compiled.sql);
  if (!outcome.ok) throw outcome.error;
  return {
    columns: outcome.result.columns.map((c) => c.name),
    rows: outcome.result.rows,
    row_count: outcome.result.row_count,
    truncated: outcome.result.truncated,
  };
}

/** A proposed change must name records of the organization: said to the model now, not after an approval. */
async function checkProposal(sql: Sql, orgId: string, name: WriteTool, input: unknown): Promise<string | null> {
  if (name === 'move_deal_stage' || name === 'update_deal')
    return (await getDeal(sql, orgId, (input as { deal_id: string }).deal_id)) ? null : 'Deal not found';
  if (name === 'update_contact')
    return (await getContactRow(sql, orgId, (input as { contact_id: string }).contact_id)) ? null : 'Contact not found';
  return (await accountExists(sql, orgId, (input as { account_id: string }).account_id)) ? null : 'Account not found';
}

export const inputHash = (tool: string, input: unknown) =>
  crypto.createHash('sha256').update(JSON.stringify({ tool, input })).digest('hex');

const errorText = (error: unknown) => (isDomainError(error) ? error.message : 'The tool failed');

export interface ToolsResult {
  messages: TranscriptMessage[];
  approval: { approvalId: string; toolCallId: string; toolName: string } | null;
}

/**
 * The step's tool calls: reads run now; the first proposed change is stored (approval id, input and
 * its hash, expiry) and its `tool-approval-request` frame written in the same transaction, so the
 * proposal exists before anyone sees it. A second proposal in the same step is refused (one change
 * waits at a time). Then `finish-step`; with a proposal the segment ends and the turn waits.
 */
export async function runTools(
  deps: Deps,
  input: { orgId: string; chatId: string; turnId: string; step: number; calls: { id: string; name: string; input: unknown }[] },
): Promise<ToolsResult> {
  const { orgId, chatId, turnId, step } = input;
  const done = await db.getStepResult<ToolsResult>(deps.sql, orgId, turnId, step, 'tools');
  if (done) return done;
  const frames: UiFrame[] = [];
  const messages: TranscriptMessage[] = [];
  let proposal: { call: (typeof input.calls)[number]; input: unknown } | null = null;
  for (const call of input.calls) {
    const fail = (text: string) => {
      frames.push({ type: 'tool-output-error', toolCallId: call.id, errorText: text });
      messages.push({ role: 'tool', toolCallId: call.id, content: untrustedToolOutput(call.name, { error: text }) });
    };
    const parsed = parseToolInput(call.name, call.input);
    if (!parsed.ok) {
      fail(parsed.error);
      continue;
    }
    if (isWriteTool(call.name)) {
      if (proposal) fail('Only one change can wait for approval at a time: propose this one again once the first is answered.');
      else {
        const problem = await checkProposal(deps.sql, orgId, call.name, parsed.input);
        if (problem) fail(problem);
        else proposal = { call, input: parsed.input };
      }
      continue;
    }
    try {
      const output = await runRead(deps, orgId, call.name, parsed.input);
      frames.push({ type: 'tool-output-available', toolCallId: call.id, output });
      messages.push({ role: 'tool', toolCallId: call.id, content: untrustedToolOutput(call.name, output) });
    } catch (error) {
      if (!isDomainError(error)) deps.logger.warn({ err: error, tool: call.name }, 'AI chat read tool failed');
      fail(errorText(error));
    }
  }
  const approvalId = proposal ? newId() : null;
  if (proposal) {
    // The card's before → after for each field the proposal names, then the request itself.
    const preview = await proposalPreview(deps.sql, orgId, proposal.call.id, proposal.call.name as WriteTool, proposal.input);
    if (preview) frames.push({ type: 'data-proposal', id: approvalId!, data: preview });
    frames.push({ type: 'tool-approval-request', approvalId: approvalId!, toolCallId: proposal.call.id });
  }
  const result: ToolsResult = {
    messages,
    approval: proposal ? { approvalId: approvalId!, toolCallId: proposal.call.id, toolName: proposal.call.name } : null,
  };
  await deps.sql.begin(async (tx) => {
    if (proposal) {
      await db.insertApproval(tx, orgId, {
        id: approvalId!,
        chat_id: chatId,
        turn_id: turnId,
        step,
        tool_call_id: proposal.call.id,
        tool_name: proposal.call.name,
        input: proposal.input,
        input_hash: inputHash(proposal.call.name, proposal.input),
        expires_at: new Date(Date.now() + deps.config.AI_CHAT_APPROVAL_TTL_SECONDS * 1000),
      });
      await db.setTurnStatus(tx, orgId, turnId, 'awaiting_approval');
    }
    const end: (UiFrame | null)[] = proposal
      ? [{ type: 'finish-step' }, { type: 'finish', finishReason: 'tool-calls' }, null]
      : [{ type: 'finish-step' }];
    await appendFrames(tx, orgId, chatId, `${turnId}:${step}:tools`, [...frames, ...end]);
    await db.insertStepResult(tx, orgId, turnId, step, 'tools', result);
  });
  return result;
}

/**
 * An approved change, through the same services (and so the same rules and notifications) as the
 * REST API, inside the caller's transaction; attributed to the person who approved it.
 */
export async function commitChange(
  tx: Db,
  orgId: string,
  approver: { userId: string | null; actor: string },
  tool: WriteTool,
  input: unknown,
): Promise<unknown> {
  const sql = db.inTransaction(tx);
  switch (tool) {
    case 'update_account': {
      const { account_id, changes } = input as ToolInput<'update_account'>;
      return { account: await accounts.updateAccount({ sql }, orgId, account_id, changes) };
    }
    case 'create_activity': {
      const a = input as ToolInput<'create_activity'>;
      return {
        activity: await crmActivities.createAccountActivity({ sql }, orgId, approver.actor, a.account_id, {
          type: a.type,
          summary: a.subject,
          body: a.body ?? null,
          due_at: a.due_at ?? null,
        }),
      };
    }
    case 'move_deal_stage': {
      const { deal_id, stage } = input as ToolInput<'move_deal_stage'>;
      return { deal: await deals.updateDeal({ sql }, orgId, deal_id, { stage }, approver.userId) };
    }
    case 'create_contact': {
      const { account_id, ...fields } = input as ToolInput<'create_contact'>;
      return { contact: await contacts.createContact({ sql }, orgId, { account_id, ...fields }, approver.userId) };
    }
    case 'update_contact': {
      const { contact_id, changes } = input as ToolInput<'update_contact'>;
      return { contact: await contacts.updateContact({ sql }, orgId, contact_id, changes, approver.userId) };
    }
    case 'update_deal': {
      const { deal_id, changes } = input as ToolInput<'update_deal'>;
      return { deal: await deals.updateDeal({ sql }, orgId, deal_id, changes, approver.userId) };
    }
  }
}
