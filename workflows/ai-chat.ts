import { CancellationScope, ActivityCancellationType, condition, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { AiChatActivities } from '../activities/ai-chat';
import type { TranscriptMessage } from '../domain/ai-chat';
import { type AiChatTurnInput, type TurnState, approvalAnsweredSignal, stopTurnSignal, turnStateQuery } from './ai-chat-messages';

// The model call streams its tokens to Postgres itself (they stay out of this history); what it
// returns (the step's text and tool calls) is the history. A kill of the worker mid-call retries the
// call; the frames its cut-off attempt sent are closed and left out of the stored message.
const model = proxyActivities<AiChatActivities>({
  // Above LLM_CALL_TIMEOUT_MS's largest value: the call's own deadline ends it first.
  startToCloseTimeout: '11 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2, nonRetryableErrorTypes: ['ModelRefused'] },
});
const steps = proxyActivities<AiChatActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * One turn of an AI chat (`ai-chat:<chat_id>`): model steps, each followed by its tool calls. Reads
 * run at once; a proposed change pauses the turn until its approval is answered (a signal wakes it;
 * the answer itself is in Postgres), expires, or the turn is stopped. Approved, the change commits and
 * the model follows up; denied, expired or stopped, the turn ends.
 */
export async function aiChatTurnWorkflow(input: AiChatTurnInput): Promise<{ outcome: string; steps: number }> {
  const state: TurnState = { step: 0, phase: 'model', pendingApprovalId: null, stopRequested: false };
  const answered = new Set<string>();
  let modelScope: CancellationScope | null = null;
  setHandler(stopTurnSignal, () => {
    state.stopRequested = true;
    modelScope?.cancel();
  });
  setHandler(approvalAnsweredSignal, (approvalId) => {
    answered.add(approvalId);
  });
  setHandler(turnStateQuery, () => state);

  const base = { orgId: input.orgId, chatId: input.chatId, turnId: input.turnId };
  const transcript: TranscriptMessage[] = [];
  let outcome: 'completed' | 'stopped' | 'failed' | 'denied' | 'expired' = 'completed';
  let error: string | null = null;
  try {
    for (;;) {
      if (state.stopRequested) {
        outcome = 'stopped';
        break;
      }
      if (state.step >= input.maxSteps) {
        error = `The turn reached its limit of ${input.maxSteps} steps.`;
        break;
      }
      state.phase = 'model';
      const scope = new CancellationScope();
      modelScope = scope;
      const answer = await scope
        .run(() => model.aiChatModelStep({ ...base, step: state.step, transcript, final: state.step === input.maxSteps - 1 }))
        .finally(() => {
          modelScope = null;
        });
      transcript.push({ role: 'assistant', content: answer.text, ...(answer.toolCalls.length ? { toolCalls: answer.toolCalls } : {}) });
      if (state.stopRequested || answer.finishReason === 'stopped') {
        outcome = 'stopped';
        break;
      }
      if (answer.toolCalls.length === 0) break;

      state.phase = 'tools';
      const tools = await steps.aiChatRunTools({ ...base, step: state.step, calls: answer.toolCalls });
      transcript.push(...tools.messages);
      if (tools.approval) {
        const approvalId = tools.approval.approvalId;
        state.pendingApprovalId = approvalId;
        state.phase = 'awaiting_approval';
        let decision: Awaited<ReturnType<AiChatActivities['aiChatApplyDecision']>>;
        for (;;) {
          const woke = await condition(() => state.stopRequested || answered.has(approvalId), input.approvalTtlMs);
          const cause = state.stopRequested ? 'stopped' : woke ? 'answered' : 'expired';
          answered.delete(approvalId);
          state.phase = 'applying';
          decision = await steps.aiChatApplyDecision({ ...base, step: state.step, approvalId, cause });
          if (!decision.pending) break;
          state.phase = 'awaiting_approval';
        }
        state.pendingApprovalId = null;
        transcript.push(decision.message);
        if (decision.outcome !== 'approved') {
          outcome = decision.outcome;
          break;
        }
      }
      state.step++;
    }
  } catch (err) {
    if (isCancellation(err)) outcome = 'stopped';
    else {
      outcome = 'failed';
      error = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
  }
  state.phase = 'ending';
  await CancellationScope.nonCancellable(() => steps.aiChatEndTurn({ ...base, outcome, error, transcript, steps: state.step + 1 }));
  return { outcome, steps: state.step + 1 };
}
