import { within } from '../platform/core/within';
import type { ServiceDeps } from '../services/deps';
import { hangUpCall } from '../services/conversations/calls';
import { storeRecording } from '../services/conversations/recordings';
import { closeConversation, markEnding, recordTurn, stillHolds, type OpenedConversation } from '../services/conversations/runtime';
import { conversationWorkflowId, runToolUpdate } from '../workflows/conversation-messages';
import type { ConversationPorts } from './pipeline/conversation';

/** How long a tool call may take end to end: the workflow's activity bound (75 s) and a margin. */
const TOOL_ANSWER_MS = 80_000;

/** The conversation's ways into the CRM: turns to Postgres, tool calls through its workflow (once each), the end. */
export function conversationPorts(
  deps: ServiceDeps,
  engineId: string,
  opened: OpenedConversation,
  callId: string | null,
): ConversationPorts {
  const { orgId, id } = opened;
  return {
    recordTurn: (turn) => recordTurn(deps, orgId, id, turn),
    async runTool(request) {
      const handle = deps.temporal.workflow.getHandle(conversationWorkflowId(id));
      // The update's id is the call's key: a retried request, or the same call asked again by the engine that took
      // the conversation over, gets the first run's answer, never a second run.
      // Bounded as the workflow bounds the tool's activity: a call never waits on a missing worker for good.
      return within(TOOL_ANSWER_MS, handle.executeUpdate(runToolUpdate, { args: [request], updateId: request.key }));
    },
    async close(ended, recording) {
      if (!(await stillHolds(deps, orgId, id, engineId))) return;
      const retention = opened.config.recording.retention_days;
      const key = recording ? await storeRecording(deps, orgId, id, recording.wav) : null;
      await closeConversation(deps, orgId, id, {
        ...ended,
        recordingKey: key,
        recordingChannels: recording?.channels ?? null,
        retentionDays: key ? retention : null,
      });
    },
    hangUpCall: () => hangUpCall(deps, orgId, callId),
    ending: async (reason) => {
      if (await stillHolds(deps, orgId, id, engineId)) await markEnding(deps, orgId, id, reason);
    },
  };
}
