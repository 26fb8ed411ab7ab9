import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { keysetPage } from './kit/keyset';

// The voice runtime's records: conversations (the table campaigns also write, one row per call
// attempt) and their turns, written one by one as they are spoken.

export interface ConversationRow {
  id: string;
  org_id: string;
  agent_id: string | null;
  agent_version: number | null;
  campaign_id: string | null;
  /** A campaign attempt's key (`<campaign>:<contact>:<attempt>`); null for other conversations. */
  idempotency_key: string | null;
  engine_id: string | null;
  contact_ref: string | null;
  contact_id: string | null;
  phone_number: string | null;
  direction: 'inbound' | 'outbound' | null;
  channel: 'twilio' | 'widget' | 'sip' | 'vapi' | 'simulated' | null;
  call_id: string | null;
  status: string;
  started_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  end_reason: string | null;
  summary: string | null;
  outcome: Record<string, unknown>;
  recording_key: string | null;
  recording_channels: 'mono' | 'dual' | null;
  recording_expires_at: Date | null;
  created_at: Date;
}

export interface TurnRow {
  seq: number;
  role: 'agent' | 'caller' | 'tool' | 'system';
  text: string;
  heard_text: string | null;
  interrupted: boolean;
  started_ms: number | null;
  ended_ms: number | null;
  audit: Record<string, unknown>;
  created_at: Date;
}

export interface NewConversation {
  org_id: string;
  agent_id: string;
  agent_version: number;
  channel: string;
  direction: 'inbound' | 'outbound';
  call_id: string | null;
  phone_number: string | null;
  contact_id: string | null;
  engine_id: string;
}

/** A conversation the runtime starts (inbound calls, widgets, SIP): in progress from now. */
export async function insertConversation(db: Db, c: NewConversation): Promise<ConversationRow> {
  const [row] = await db<ConversationRow[]>`
    INSERT INTO conversations (id, org_id, agent_id, agent_version, channel, direction, call_id, phone_number, contact_id,
                               engine_id, status, started_at)
    VALUES (${newId()}, ${c.org_id}, ${c.agent_id}, ${c.agent_version}, ${c.channel}, ${c.direction}, ${c.call_id},
            ${c.phone_number}, ${c.contact_id}, ${c.engine_id}, 'in_progress', now())
    RETURNING *`;
  return row!;
}

/**
 * A call Twilio is about to stream to the engine (an inbound number, a SIP domain): the row exists before
 * the engine takes it, so the stream's token names it and stays short; one per provider call.
 */
export async function insertRingingConversation(
  db: Db,
  c: Omit<NewConversation, 'engine_id' | 'contact_id'> & { call_id: string },
): Promise<ConversationRow> {
  const [row] = await db<ConversationRow[]>`
    INSERT INTO conversations (id, org_id, agent_id, agent_version, channel, direction, call_id, phone_number, status)
    VALUES (${newId()}, ${c.org_id}, ${c.agent_id}, ${c.agent_version}, ${c.channel}, ${c.direction}, ${c.call_id},
            ${c.phone_number}, 'ringing')
    ON CONFLICT (org_id, channel, call_id) WHERE campaign_id IS NULL AND call_id IS NOT NULL DO NOTHING
    RETURNING *`;
  if (row) return row;
  const [existing] = await db<ConversationRow[]>`
    SELECT * FROM conversations WHERE org_id = ${c.org_id} AND channel = ${c.channel} AND call_id = ${c.call_id}
    ORDER BY created_at LIMIT 1`;
  return existing!;
}

/** A conversation the API made before the call (a campaign attempt) taken by the runtime. */
export async function claimConversation(
  db: Db,
  orgId: string,
  id: string,
  claim: { agent_version: number; channel: string; call_id: string | null; contact_id: string | null; engine_id: string },
): Promise<ConversationRow | undefined> {
  const [row] = await db<ConversationRow[]>`
    UPDATE conversations SET agent_version = coalesce(agent_version, ${claim.agent_version}), channel = ${claim.channel},
           call_id = coalesce(${claim.call_id}, call_id), contact_id = coalesce(${claim.contact_id}, contact_id),
           engine_id = ${claim.engine_id}, status = 'in_progress', started_at = coalesce(started_at, now()), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}
    RETURNING *`;
  return row;
}

/** The conversation of a campaign attempt, by its attempt key. */
export async function conversationByKey(db: Db, orgId: string, key: string): Promise<ConversationRow | undefined> {
  const [row] = await db<ConversationRow[]>`SELECT * FROM conversations WHERE org_id = ${orgId} AND idempotency_key = ${key}`;
  return row;
}

/**
 * A provider's answering-machine verdict of a campaign attempt, kept in its outcome; answers the
 * conversation's id (undefined: no such attempt in the organization).
 */
export async function recordAnsweredBy(db: Db, orgId: string, key: string, answeredBy: string, detectionMs: number | null) {
  const verdict = { answered_by: answeredBy, ...(detectionMs === null ? {} : { machine_detection_ms: detectionMs }) };
  const [row]: [{ id: string }?] = await db`
    UPDATE conversations SET outcome = outcome || ${db.json(verdict)}, updated_at = now()
    WHERE org_id = ${orgId} AND idempotency_key = ${key}
    RETURNING id`;
  return row?.id;
}

/** Where the API tells the voice engines of something about a live conversation (Postgres LISTEN/NOTIFY). */
export const VOICE_EVENTS_CHANNEL = 'voice_conversation_events';

export interface VoiceEngineEvent {
  conversation: string;
  answered_by: string;
}

export async function notifyVoiceEngines(db: Db, event: VoiceEngineEvent): Promise<void> {
  await db`SELECT pg_notify(${VOICE_EVENTS_CHANNEL}, ${JSON.stringify(event)})`;
}

/** A conversation by id alone, for a provider's callback that names it (the caller checks whose it is). */
export async function findConversation(db: Db, id: string): Promise<ConversationRow | undefined> {
  const [row] = await db<ConversationRow[]>`SELECT * FROM conversations WHERE id = ${id}`;
  return row;
}

/** True while `engineId` holds the conversation (another engine may have taken it over since). */
export async function heldBy(db: Db, orgId: string, id: string, engineId: string): Promise<boolean> {
  const [row]: [{ engine_id: string | null }?] = await db`SELECT engine_id FROM conversations WHERE org_id = ${orgId} AND id = ${id}`;
  return row?.engine_id === engineId;
}

/**
 * The engine is about to end the conversation (and close its stream): marked before the stream closes,
 * so Twilio's question about the ended stream hangs up rather than streaming the call again.
 */
export async function markEnding(db: Db, orgId: string, id: string, reason: string): Promise<void> {
  await db`UPDATE conversations SET end_reason = coalesce(end_reason, ${reason}), updated_at = now() WHERE org_id = ${orgId} AND id = ${id}`;
}

export async function getConversation(db: Db, orgId: string, id: string): Promise<ConversationRow | undefined> {
  const [row] = await db<ConversationRow[]>`SELECT * FROM conversations WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

export interface NewTurn {
  seq: number;
  role: TurnRow['role'];
  text: string;
  heard_text: string | null;
  interrupted: boolean;
  started_ms: number | null;
  ended_ms: number | null;
  audit: Record<string, unknown>;
}

/** Records a turn once: a repeated write of the same sequence number keeps the first. */
export async function insertTurn(db: Db, orgId: string, conversationId: string, t: NewTurn): Promise<void> {
  await db`
    INSERT INTO conversation_turns (conversation_id, seq, org_id, role, text, heard_text, interrupted, started_ms, ended_ms, audit)
    VALUES (${conversationId}, ${t.seq}, ${orgId}, ${t.role}, ${t.text}, ${t.heard_text}, ${t.interrupted}, ${t.started_ms},
            ${t.ended_ms}, ${db.json(t.audit as never)})
    ON CONFLICT (conversation_id, seq) DO NOTHING`;
}

export async function listTurns(db: Db, orgId: string, conversationId: string): Promise<TurnRow[]> {
  return db<TurnRow[]>`
    SELECT seq, role, text, heard_text, interrupted, started_ms, ended_ms, audit, created_at FROM conversation_turns
    WHERE org_id = ${orgId} AND conversation_id = ${conversationId} ORDER BY seq`;
}

export interface ConversationEnd {
  status: string;
  end_reason: string;
  recording_key: string | null;
  recording_channels: 'mono' | 'dual' | null;
  recording_retention_days: number | null;
}

/** Ends a conversation once (a second end keeps the first); answers the row as it stands. */
export async function endConversation(db: Db, orgId: string, id: string, end: ConversationEnd): Promise<ConversationRow | undefined> {
  const [row] = await db<ConversationRow[]>`
    -- A campaign attempt's status is the dispatcher's to set, from the call event its end makes.
    UPDATE conversations SET status = CASE WHEN campaign_id IS NULL THEN ${end.status} ELSE status END,
           end_reason = ${end.end_reason}, ended_at = now(),
           duration_seconds = greatest(0, round(extract(epoch FROM now() - coalesce(started_at, created_at))))::int,
           recording_key = ${end.recording_key}, recording_channels = ${end.recording_channels},
           recording_expires_at = CASE WHEN ${end.recording_key}::text IS NULL THEN NULL
                                       ELSE now() + make_interval(days => ${end.recording_retention_days ?? 0}) END,
           updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND ended_at IS NULL
    RETURNING *`;
  return row ?? getConversation(db, orgId, id);
}

/** The summary and outcome written after the call. */
export async function recordSummary(db: Db, orgId: string, id: string, summary: string, outcome: Record<string, unknown>): Promise<void> {
  await db`
    UPDATE conversations SET summary = ${summary}, outcome = outcome || ${db.json(outcome as never)}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Recordings past their retention, oldest first (any organization: the sweep runs for all). */
export async function expiredRecordings(db: Db, limit: number): Promise<{ org_id: string; id: string; recording_key: string }[]> {
  return db`
    SELECT org_id, id, recording_key FROM conversations
    WHERE recording_key IS NOT NULL AND recording_expires_at <= now()
    ORDER BY recording_expires_at LIMIT ${limit}`;
}

export async function forgetRecording(db: Db, orgId: string, id: string): Promise<void> {
  await db`UPDATE conversations SET recording_key = NULL, recording_expires_at = NULL, updated_at = now()
           WHERE org_id = ${orgId} AND id = ${id}`;
}

/** An agent's conversations, newest first (keyset on created_at, id). */
export async function listConversations(
  db: Db,
  orgId: string,
  agentId: string,
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (ConversationRow & { cursor_t: string })[]; total: number }> {
  return keysetPage<ConversationRow>(db, {
    select: db`*`,
    from: db`conversations`,
    where: db`org_id = ${orgId} AND agent_id = ${agentId}`,
    ...page,
  });
}
