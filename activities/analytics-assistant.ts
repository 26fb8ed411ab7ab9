import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatModel } from '../platform/adapters/llm/chat-model';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { LocalModelError } from '../platform/adapters/llm/llm-local';
import { endTurn, modelStep, runSqlCall } from '../services/analytics-assistant/turn-steps';
import type { ActivityDeps } from './deps';

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
        if (error instanceof LocalModelError && error.code === 'missing')
          throw ApplicationFailure.nonRetryable(error.message, 'ModelRefused');
        throw error;
      }
    },
    analyticsRunSql: (input: Parameters<typeof runSqlCall>[1]) => runSqlCall(deps, input),
    analyticsEndTurn: (input: Parameters<typeof endTurn>[1]) => endTurn(deps, input),
  };
}
