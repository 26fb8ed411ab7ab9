import type { ServiceDeps } from '../services/deps';
import { hangUpCall } from '../services/conversations/calls';
import { storeRecording } from '../services/conversations/recordings';
import { closeConversation, recordTurn, type OpenedConversation } from '../services/conversations/runtime';
import { conversationWorkflowId, runToolUpdate } from '../workflows/conversation-messages';
import type { ConversationPorts } from './pipeline/conversation';

/** The conversation's ways into the CRM: turns to Postgres, tool calls through its workflow (once each), the end. */
export function conversationPorts(deps: ServiceDeps, opened: OpenedConversation, callId: string | null): ConversationPorts {
  const { orgId, id } = opened;
  return {
    recordTurn: (turn) => recordTurn(deps, orgId, id, turn),
    async runTool(request) {
      const handle = deps.temporal.workflow.getHandle(conversationWorkflowId(id));
      // The update's id is the call's: a retried request gets the first run's answer, never a second run.
      return handle.executeUpdate(runToolUpdate, { args: [request], updateId: `${id}:${request.turn}:${request.callId}` });
    },
    async close(ended, recording) {
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
  };
}
