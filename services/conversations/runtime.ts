import * as agents from '../../db/agents';
import * as versions from '../../db/agent-versions';
import * as contacts from '../../db/contacts';
import * as conversations from '../../db/conversations';
import { AgentConfig } from '../../domain/agent-config';
import { originAllowed } from '../../domain/agent-widgets';
import { conflict, forbiddenAction, gone, notFound } from '../../domain/errors';
import { findPublicWidget } from '../../db/agent-widgets';
import { takeOverConversation } from '../../db/voice-engines';
import { ownOrigin } from '../agent-widgets';
import { fillVariables } from '../../domain/voice-prompt';
import type { ServiceDeps } from '../deps';
import { signalWorkflow, startWorkflow } from '../workflow-client';
import {
  conversationEndedSignal,
  conversationWorkflowId,
  conversationWorkflowRef,
  type ConversationEnded,
} from '../../workflows/conversation-messages';
import type { VoiceSessionClaims } from './session-tokens';
import { ENGINE_STALE_MS } from './watchdog';

// What the conversation engine asks of the CRM: open a conversation for a session (the agent's version,
// its variables filled, the contact's fields), record each turn as it is spoken, close it. Each
// conversation's lifecycle is its workflow (`conversation:<id>`): started here, told of the end here.

type Deps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>;

export type NewTurn = conversations.NewTurn;

export interface OpenedConversation {
  id: string;
  orgId: string;
  agentId: string;
  agentName: string;
  version: number;
  config: AgentConfig;
  direction: 'inbound' | 'outbound';
  /** The instructions with {{variables}} filled: the version's own, then the contact's fields. */
  instructions: string;
  firstMessage: string | null;
  contact: Record<string, string> | null;
  startedAt: Date;
  /** A provider's answering-machine verdict already known when the stream started (outbound calls). */
  answeredBy: string | null;
  /** Taken over from an engine that was lost or drained: it goes on from `history`, the turns recorded so far. */
  resumed: boolean;
  history: conversations.TurnRow[];
}

const CONTACT_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'title', 'company', 'department'] as const;

async function contactOf(deps: Deps, orgId: string, claims: VoiceSessionClaims, made: conversations.ConversationRow | undefined) {
  if (claims.contact) return contacts.getContact(deps.sql, orgId, claims.contact);
  if (made?.contact_id) return contacts.getContact(deps.sql, orgId, made.contact_id);
  // A row made before the call (campaign attempt, inbound number) knows the other party's number.
  const number = (claims.direction === 'outbound' ? claims.to : claims.from) ?? made?.phone_number;
  if (!number) return undefined;
  const [row]: [contacts.ContactRow?] = await deps.sql`
    SELECT * FROM contacts WHERE org_id = ${orgId} AND phone = ${number} ORDER BY created_at, id LIMIT 1`;
  return row;
}

/** Opens the session's conversation (or takes the one the API made for a campaign call) and starts its workflow. */
export async function openConversation(deps: Deps, claims: VoiceSessionClaims, engineId: string): Promise<OpenedConversation> {
  const orgId = claims.org;
  const agent = await agents.getAgent(deps.sql, orgId, claims.agent);
  if (!agent) throw notFound('Agent not found');
  const number = claims.version ?? agent.published_version;
  if (number === null) throw conflict('The agent has no published version');
  const version = await versions.getVersion(deps.sql, orgId, agent.id, number);
  if (!version) throw notFound('Version not found');
  const config = AgentConfig.parse(version.config);
  const made = claims.conversation ? await conversations.getConversation(deps.sql, orgId, claims.conversation) : undefined;
  const contact = await contactOf(deps, orgId, claims, made);
  // A widget's page back with its resume token: the conversation is taken over, or the page is refused.
  const widgetResume = claims.channel === 'widget' && claims.conversation ? await resumeWidget(deps, claims, engineId) : undefined;
  // Another engine held it and it has not ended: that engine was lost (or drained) mid-call.
  const resumed = !!widgetResume || (!!made && made.engine_id !== null && made.ended_at === null && !made.end_reason);
  const claim = {
    agent_version: number,
    channel: claims.channel,
    call_id: claims.call_id ?? null,
    contact_id: contact?.id ?? null,
    engine_id: engineId,
  };
  const row =
    widgetResume ||
    (claims.conversation && (await conversations.claimConversation(deps.sql, orgId, claims.conversation, claim))) ||
    (await conversations.insertConversation(deps.sql, {
      ...claim,
      org_id: orgId,
      agent_id: agent.id,
      direction: claims.direction,
      phone_number: (claims.direction === 'outbound' ? claims.to : claims.from) ?? null,
    }));
  const contactFields = contact ? Object.fromEntries(CONTACT_FIELDS.flatMap((f) => (contact[f] ? [[f, String(contact[f])]] : []))) : null;
  const values = { ...config.variables, ...(contactFields ?? {}), agent_name: agent.name };
  await startWorkflow(deps, conversationWorkflowRef, orgId, {
    workflowId: conversationWorkflowId(row.id),
    args: [{ orgId, conversationId: row.id, maxDurationSeconds: config.limits.max_duration_seconds }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  return {
    id: row.id,
    orgId,
    agentId: agent.id,
    agentName: agent.name,
    version: number,
    config,
    direction: claims.direction,
    instructions: fillVariables(config.instructions, values),
    firstMessage: config.first_message === null ? null : fillVariables(config.first_message, values),
    contact: contactFields,
    startedAt: row.started_at ?? new Date(),
    answeredBy: typeof row.outcome?.answered_by === 'string' ? row.outcome.answered_by : null,
    resumed,
    history: resumed ? await conversations.listTurns(deps.sql, orgId, row.id) : [],
  };
}

/**
 * The checks of a widget's resume, then the takeover: the widget must still exist for this agent and still
 * allow the page's origin (403), and the conversation must not have ended (410) nor be held by a live engine
 * that did not let it go (409).
 */
async function resumeWidget(deps: Deps, claims: VoiceSessionClaims, engineId: string): Promise<conversations.ConversationRow> {
  const widget = claims.widget ? await findPublicWidget(deps.sql, claims.widget) : undefined;
  if (
    !widget ||
    widget.org_id !== claims.org ||
    widget.agent_id !== claims.agent ||
    !originAllowed(claims.origin, widget.allowed_origins, ownOrigin(deps.config, claims.origin ?? ''))
  )
    throw forbiddenAction('Origin not allowed for this widget');
  const result = await takeOverConversation(deps.sql, claims.org, claims.conversation!, engineId, ENGINE_STALE_MS, {
    channel: 'widget',
    agent_id: claims.agent,
  });
  if ('taken' in result) return result.taken;
  if (result.refused === 'ended') throw gone('The conversation has ended');
  if (result.refused === 'held') throw conflict('A live engine holds the conversation');
  throw notFound('Conversation not found');
}

/** Writes one turn as soon as it is spoken; a repeated write keeps the first. */
export async function recordTurn(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  conversationId: string,
  turn: conversations.NewTurn,
): Promise<void> {
  await conversations.insertTurn(deps.sql, orgId, conversationId, turn);
}

/** False once another engine took the conversation over (this one was frozen, or drained): its end is not this one's to write. */
export function stillHolds(deps: Pick<ServiceDeps, 'sql'>, orgId: string, conversationId: string, engineId: string): Promise<boolean> {
  return conversations.heldBy(deps.sql, orgId, conversationId, engineId);
}

/** The engine is about to end the conversation: Twilio's question about its ended stream then hangs up. */
export async function markEnding(deps: Pick<ServiceDeps, 'sql'>, orgId: string, conversationId: string, reason: string): Promise<void> {
  await conversations.markEnding(deps.sql, orgId, conversationId, reason);
}

/** Ends the conversation's row and tells its workflow, which writes the summary, outcome and CRM activity. */
export async function closeConversation(
  deps: Deps,
  orgId: string,
  conversationId: string,
  ended: ConversationEnded & { recordingKey: string | null; recordingChannels: 'mono' | 'dual' | null; retentionDays: number | null },
): Promise<void> {
  await conversations.endConversation(deps.sql, orgId, conversationId, {
    status: ended.status,
    end_reason: ended.reason,
    recording_key: ended.recordingKey,
    recording_channels: ended.recordingChannels,
    recording_retention_days: ended.retentionDays,
  });
  await signalWorkflow(deps, conversationWorkflowId(conversationId), conversationEndedSignal, {
    reason: ended.reason,
    status: ended.status,
    transferredTo: ended.transferredTo ?? null,
  });
}
