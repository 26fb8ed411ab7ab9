import * as agents from '../../db/agents';
import * as conversations from '../../db/conversations';
import { notFound } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// An agent's conversations as the API shows them: the list, one with its turns, its recording.

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function conversationView(row: conversations.ConversationRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    campaign_id: row.campaign_id,
    contact_id: row.contact_id,
    channel: row.channel,
    direction: row.direction,
    phone_number: row.phone_number,
    status: row.status,
    end_reason: row.end_reason,
    started_at: iso(row.started_at),
    ended_at: iso(row.ended_at),
    duration_seconds: row.duration_seconds,
    summary: row.summary,
    outcome: row.outcome,
    has_recording: row.recording_key !== null,
    recording_channels: row.recording_channels,
    recording_expires_at: iso(row.recording_expires_at),
    created_at: row.created_at.toISOString(),
  };
}

async function agentOf(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string) {
  if (!(await agents.getAgent(deps.sql, orgId, agentId))) throw notFound('Agent not found');
}

export async function listAgentConversations(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  agentId: string,
  query: { limit: number; cursor?: string },
) {
  await agentOf(deps, orgId, agentId);
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await conversations.listConversations(deps.sql, orgId, agentId, { limit: query.limit, after });
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(conversationView), pagination: page.pagination };
}

async function conversationOf(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, id: string) {
  const row = await conversations.getConversation(deps.sql, orgId, id);
  if (!row || row.agent_id !== agentId) throw notFound('Conversation not found');
  return row;
}

export async function getAgentConversation(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, id: string) {
  const row = await conversationOf(deps, orgId, agentId, id);
  const turns = await conversations.listTurns(deps.sql, orgId, id);
  return {
    ...conversationView(row),
    turns: turns.map((t) => ({
      seq: t.seq,
      role: t.role,
      text: t.text,
      heard_text: t.heard_text,
      interrupted: t.interrupted,
      started_ms: t.started_ms,
      ended_ms: t.ended_ms,
      audit: t.audit,
      created_at: t.created_at.toISOString(),
    })),
  };
}

/** A short-lived URL of the recording (a WAV file). */
export async function conversationRecordingUrl(
  deps: Pick<ServiceDeps, 'sql' | 'storage'>,
  orgId: string,
  agentId: string,
  id: string,
): Promise<string> {
  const row = await conversationOf(deps, orgId, agentId, id);
  if (!row.recording_key) throw notFound('This conversation has no recording');
  return deps.storage.presignGet(row.recording_key, { expiresInSeconds: 300, filename: `conversation-${id}.wav` });
}
