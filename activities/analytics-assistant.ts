import { Context } from '@temporalio/activity';
import type { ChatModel } from '../platform/adapters/llm/chat-model';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { endTurn, modelStep, runSqlCall } from '../services/analytics-assistant/turn-steps';
import type { ActivityDeps } from './deps';
import { classify, MODEL_MISSING } from './failures';

export function createAnalyticsAssistantActivities(deps: ActivityDeps) {
  // The OpenAI-compatible server with LLM_BASE_URL, else the local model (platform/adapters/llm/chat-model-factory.ts).
  let model: ChatModel | undefined;
  return {
    async analyticsModelStep(input: Parameters<typeof modelStep>[2]) {
      model ??= createChatModel(deps.config, deps.logger);
      const ctx = Context.current();
      try {
        return await modelStep(deps, model, input, {
          attempt: ctx.info.attempt,
          heartbeat: () => ctx.heartbeat(),
          signal: ctx.cancellationSignal,
        });
      } catch (error) {
        throw classify(error, [MODEL_MISSING]);
      }
    },
    analyticsRunSql: (input: Parameters<typeof runSqlCall>[1]) => runSqlCall(deps, input),
    analyticsEndTurn: (input: Parameters<typeof endTurn>[1]) => endTurn(deps, input),
  };
}

/** What the analytics-assistant workflows may call: their `proxyActivities<AnalyticsAssistantActivities>` type. */
export type AnalyticsAssistantActivities = ReturnType<typeof createAnalyticsAssistantActivities>;
