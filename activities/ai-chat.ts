import { Context } from '@temporalio/activity';
import type { ChatModel } from '../platform/adapters/llm/chat-model';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { applyDecision } from '../services/ai-chat/approvals';
import { runModelStep, type StepInput } from '../services/ai-chat/model-step';
import { runTools } from '../services/ai-chat/tools';
import { endTurn } from '../services/ai-chat/turns';
import type { ActivityDeps } from './deps';
import { classify, MODEL_MISSING } from './failures';

export function createAiChatActivities(deps: ActivityDeps) {
  // The OpenAI-compatible server with LLM_BASE_URL, else the local model (platform/adapters/llm/chat-model-factory.ts).
  let model: ChatModel | undefined;
  return {
    /** One model call, its tokens streamed to Postgres (not to the workflow's history). */
    async aiChatModelStep(input: StepInput) {
      model ??= createChatModel(deps.config, deps.logger);
      const ctx = Context.current();
      try {
        return await runModelStep(deps, model, input, {
          attempt: ctx.info.attempt,
          heartbeat: () => ctx.heartbeat(),
          signal: ctx.cancellationSignal,
        });
      } catch (error) {
        // Canceled by a stop: report the cancellation itself, so the workflow sees a canceled activity.
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        throw classify(error, [MODEL_MISSING]);
      }
    },
    aiChatRunTools: (input: Parameters<typeof runTools>[1]) => runTools(deps, input),
    aiChatApplyDecision: (input: Parameters<typeof applyDecision>[1]) => applyDecision(deps, input),
    aiChatEndTurn: (input: Parameters<typeof endTurn>[1]) => endTurn(deps, input),
  };
}

/** What the ai-chat workflows may call: their `proxyActivities<AiChatActivities>` type. */
export type AiChatActivities = ReturnType<typeof createAiChatActivities>;
