import { finishConversation } from '../services/conversations/finish';
import { sweepExpiredRecordings } from '../services/conversations/recordings';
import { runConversationTool } from '../services/conversations/tools';
import type { FinishInput, RunToolInput } from '../workflows/conversation-messages';
import type { ActivityDeps } from './deps';

export function createConversationActivities(deps: ActivityDeps) {
  return {
    runConversationTool: (input: RunToolInput) => runConversationTool(deps, input),
    finishConversation: (input: FinishInput) => finishConversation(deps, input),
    sweepExpiredRecordings: () => sweepExpiredRecordings(deps),
  };
}

/** What the conversation workflows may call: their `proxyActivities<ConversationActivities>` type. */
export type ConversationActivities = ReturnType<typeof createConversationActivities>;
