import { allHandlersFinished, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ConversationActivities } from '../activities/conversations';
import { type ConversationEnded, type ConversationInput, conversationEndedSignal, runToolUpdate } from './conversation-messages';

const { runConversationTool } = proxyActivities<ConversationActivities>({
  // A tool's own timeout is at most 60 s; a transfer asks the provider once.
  startToCloseTimeout: '75 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 2 },
});
const { finishConversation, sweepExpiredRecordings } = proxyActivities<ConversationActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** How long past its longest allowed duration a conversation may go unheard of before it is called lost. */
const LOST_AFTER_SECONDS = 120;

/**
 * One voice conversation (`conversation:<id>`): its tool calls (each an update whose id is the call's,
 * so a retried call never repeats its side effect), then its end — told by the engine, or, when the
 * engine is gone, the limit past its longest allowed duration — and the summary, outcome and CRM
 * activity written after it.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationEnded> {
  let ended: ConversationEnded | undefined;
  setHandler(conversationEndedSignal, (e) => {
    ended ??= e;
  });
  setHandler(runToolUpdate, (call) => runConversationTool({ ...call, orgId: input.orgId, conversationId: input.conversationId }), {
    validator: (_call) => {
      if (ended) throw new Error('the conversation has ended');
    },
  });
  const told = await condition(() => ended !== undefined, `${input.maxDurationSeconds + LOST_AFTER_SECONDS} seconds`);
  const end: ConversationEnded = told && ended ? ended : { reason: 'engine_lost', status: 'failed' };
  await condition(allHandlersFinished);
  await finishConversation({ orgId: input.orgId, conversationId: input.conversationId, ended: end });
  return end;
}

/** Deletes recordings past their retention, page by page; started by its schedule. */
export async function recordingRetentionWorkflow(): Promise<{ deleted: number }> {
  let deleted = 0;
  for (let page = 0; page < 50; page++) {
    const n = await sweepExpiredRecordings();
    deleted += n;
    if (n === 0) break;
  }
  return { deleted };
}
