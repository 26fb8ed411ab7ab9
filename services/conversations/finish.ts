import * as conversations from '../../db/conversations';
import { insertContactActivity } from '../../db/crm-activities';
import type { CallEvent } from '../../domain/campaigns';
import { callStatusOfConversation, conversationOutcome, conversationSummary } from '../../domain/voice-summary';
import { signalDispatcher } from '../campaigns/dispatch';
import type { ServiceDeps } from '../deps';
import type { FinishInput } from '../../workflows/conversation-messages';

// After a conversation: its row ended (the engine's end, or `engine_lost` when it never came), the
// summary and outcome from its turns, and the CRM `call` activity on the contact it reached. Each step
// can run again: the end keeps the first, the activity is written once (keyed by the conversation). A
// campaign attempt's end goes to its dispatcher as the call's outcome (the contact completed or retried).

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>;

export async function finishConversation(deps: Deps, input: FinishInput): Promise<void> {
  const { orgId, conversationId, ended } = input;
  const row = await conversations.endConversation(deps.sql, orgId, conversationId, {
    status: ended.status,
    end_reason: ended.reason,
    recording_key: null,
    recording_channels: null,
    recording_retention_days: null,
  });
  if (!row) return;
  const turns = await conversations.listTurns(deps.sql, orgId, conversationId);
  const reason = row.end_reason ?? ended.reason;
  // A campaign attempt's row keeps its call status until the dispatcher applies the end.
  const status = row.campaign_id ? ended.status : row.status;
  const summary = conversationSummary(turns, reason);
  const outcome = conversationOutcome(turns, status, reason, ended.transferredTo ?? null);
  const transcript = turns
    .filter((t) => t.role === 'agent' || t.role === 'caller')
    .map((t) => `${t.role === 'agent' ? 'Agent' : 'Caller'}: ${t.heard_text ?? t.text}`)
    .join('\n');
  await deps.sql.begin(async (tx) => {
    await conversations.recordSummary(tx, orgId, conversationId, summary, outcome);
    // Campaign attempts get their activity from the campaign's own record of the call.
    if (!row.contact_id || row.campaign_id) return;
    const [written] = await tx`
      SELECT 1 FROM activities WHERE org_id = ${orgId} AND type = 'call' AND metadata->>'conversation_id' = ${conversationId} LIMIT 1`;
    if (written) return;
    await insertContactActivity(
      tx,
      orgId,
      row.contact_id,
      {
        type: 'call',
        subject: `Call with the agent (${row.direction ?? 'inbound'})`,
        body: summary,
        contact_id: row.contact_id,
        due_at: null,
        duration_minutes: row.duration_seconds === null ? null : Math.max(1, Math.round(row.duration_seconds / 60)),
        metadata: {
          provider: row.channel,
          transcript,
          summary,
          outcome: String(outcome.disposition),
          conversation_id: conversationId,
          agent_id: row.agent_id,
          duration_seconds: row.duration_seconds,
          recording_url: null,
        } as never,
        created_by: `agent:${row.agent_id}`,
      },
      row.direction,
    );
  });
  // The campaign's call activity is written from the call's outcome: it carries the summary and transcript.
  if (row.campaign_id && row.idempotency_key)
    await signalDispatcher(deps, orgId, [campaignCallEnd(row, status, reason, { ...outcome, summary, transcript })]);
}

function campaignCallEnd(row: conversations.ConversationRow, status: string, reason: string, outcome: Record<string, unknown>): CallEvent {
  return {
    idempotency_key: row.idempotency_key!,
    status: callStatusOfConversation(status, reason),
    ...(row.call_id ? { provider_call_id: row.call_id } : {}),
    ...(row.started_at ? { started_at: row.started_at.toISOString() } : {}),
    ...(row.ended_at ? { ended_at: row.ended_at.toISOString() } : {}),
    ...(row.duration_seconds !== null ? { duration_seconds: row.duration_seconds } : {}),
    outcome: { ...outcome, source: 'conversation', conversation_status: status },
  };
}
