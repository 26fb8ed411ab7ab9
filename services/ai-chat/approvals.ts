import type { Readable } from 'node:stream';
import type { TransactionSql } from 'postgres';
import { WorkflowNotFoundError } from '@temporalio/client';
import * as db from '../../db/ai-chat';
import { appendFrames, getStream } from '../../db/ui-streams';
import { type TranscriptMessage, deniedOutput, isWriteTool, untrustedToolOutput } from '../../domain/ai-chat';
import { conflict, isDomainError, notFound } from '../../domain/errors';
import type { UiFrame } from '../../domain/ui-message-stream';
import { aiChatWorkflowId, approvalAnsweredSignal } from '../../workflows/ai-chat-messages';
import type { ServiceDeps } from '../deps';
import { signalWorkflow } from '../workflow-client';
import { ownChat } from './chats';
import { chatStream } from './stream';
import { commitChange } from './tools';

/**
 * POST /ai/chats/{chat_id}/approvals/{approval_id}: records the answer (single use: a second one, or
 * one past the expiry, is a 409) and wakes the turn, in one transaction (Temporal unreachable: 503,
 * nothing recorded), then answers the turn's stream from this point: the change's outcome and the
 * model's follow-up. The answer in Postgres is what the turn acts on; the signal only wakes it.
 */
export async function answerApproval(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  userId: string,
  chatId: string,
  approvalId: string,
  answer: { approved: boolean; reason?: string },
): Promise<Readable> {
  const afterId = await deps.sql.begin(async (tx) => {
    await ownChat({ sql: tx as never }, orgId, userId, chatId);
    const approval = await db.lockApproval(tx, orgId, approvalId, chatId);
    if (!approval) throw notFound('Approval not found');
    if (approval.status !== 'pending') throw conflict(`Approval already answered (${approval.status})`);
    if (approval.expires_at.getTime() <= Date.now()) throw conflict('Approval expired');
    await db.decideApproval(tx, orgId, approvalId, {
      status: answer.approved ? 'approved' : 'denied',
      reason: answer.reason ?? null,
      userId,
    });
    const stream = await getStream(tx, orgId, chatId);
    try {
      await signalWorkflow(deps, aiChatWorkflowId(chatId), approvalAnsweredSignal, approvalId);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw conflict('The turn of this approval has ended');
      throw error;
    }
    return Number(stream!.last_frame_id);
  });
  return chatStream(deps, orgId, chatId, afterId);
}

export interface DecisionResult {
  /** Woken, but no answer recorded (the answering request rolled back): keep waiting. */
  pending: boolean;
  outcome: 'approved' | 'denied' | 'expired' | 'stopped';
  message: TranscriptMessage;
}

/**
 * Acts on an approval's answer in one transaction: approved, the change commits (once: the approval
 * row is locked and a repeat returns the stored result) and `tool-output-available` (or
 * `tool-output-error` when a rule refused it) opens the resumed segment; denied, expired, or the turn
 * stopped while waiting: `tool-output-denied`.
 */
export async function applyDecision(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  input: { orgId: string; chatId: string; turnId: string; step: number; approvalId: string; cause: 'answered' | 'expired' | 'stopped' },
): Promise<DecisionResult> {
  const { orgId, chatId, turnId, approvalId } = input;
  const done = await db.getStepResult<DecisionResult>(deps.sql, orgId, turnId, input.step, 'decision');
  if (done) return done;
  return deps.sql.begin(async (tx): Promise<DecisionResult> => {
    const approval = await db.lockApproval(tx, orgId, approvalId);
    const turn = await db.getTurn(tx, orgId, turnId);
    if (!approval || !turn)
      return {
        pending: false,
        outcome: 'stopped',
        message: { role: 'tool', toolCallId: approval?.tool_call_id ?? 'gone', content: untrustedToolOutput('chat', { status: 'gone' }) },
      };
    if (approval.status === 'pending') {
      if (input.cause === 'answered')
        return { pending: true, outcome: 'stopped', message: { role: 'tool', toolCallId: approval.tool_call_id, content: '' } };
      await db.decideApproval(tx, orgId, approvalId, {
        status: input.cause === 'expired' ? 'expired' : 'canceled',
        reason: null,
        userId: null,
      });
      approval.status = input.cause === 'expired' ? 'expired' : 'canceled';
    }
    const call = approval.tool_call_id;
    const frames: UiFrame[] = [];
    let result: DecisionResult;
    if (approval.status === 'approved' && isWriteTool(approval.tool_name)) {
      let output: unknown;
      try {
        const actor = `user:${(approval.decided_by_user_id && (await db.userExternalId(tx, approval.decided_by_user_id))) ?? 'unknown'}`;
        const tool = approval.tool_name;
        // In a savepoint: a refused change rolls back alone, and the refusal is recorded below.
        output = await (tx as TransactionSql).savepoint((sp) =>
          commitChange(sp, orgId, { userId: approval.decided_by_user_id, actor }, tool, approval.input),
        );
        await db.markCommitted(tx, orgId, approvalId, { ...(output as object), chat_id: chatId, approval_id: approvalId });
        frames.push({ type: 'start-step' }, { type: 'tool-output-available', toolCallId: call, output });
      } catch (error) {
        // A rule refused the change (the account was deleted meanwhile, a duplicate email): the model is told.
        if (!isDomainError(error)) throw error;
        output = { error: error.message };
        frames.push({ type: 'start-step' }, { type: 'tool-output-error', toolCallId: call, errorText: error.message });
      }
      frames.push({ type: 'finish-step' });
      result = {
        pending: false,
        outcome: 'approved',
        message: { role: 'tool', toolCallId: call, content: untrustedToolOutput(approval.tool_name, output) },
      };
    } else {
      frames.push({ type: 'tool-output-denied', toolCallId: call });
      const expired = approval.status === 'expired';
      result = {
        pending: false,
        outcome: expired ? 'expired' : approval.status === 'canceled' ? 'stopped' : 'denied',
        message: {
          role: 'tool',
          toolCallId: call,
          content: untrustedToolOutput(approval.tool_name, deniedOutput(approval.reason, expired)),
        },
      };
    }
    await appendFrames(tx, orgId, chatId, `${turnId}:${input.step}:decision`, [
      { type: 'start', messageId: turn.assistant_message_id },
      ...frames,
    ]);
    await db.setTurnStatus(tx, orgId, turnId, 'streaming');
    await db.insertStepResult(tx, orgId, turnId, input.step, 'decision', result);
    return result;
  });
}
