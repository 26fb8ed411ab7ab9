import * as agents from '../../db/agents';
import * as versions from '../../db/agent-versions';
import * as contacts from '../../db/contacts';
import * as conversations from '../../db/conversations';
import * as replays from '../../db/conversation-replays';
import { AgentConfig } from '../../domain/agent-config';
import { notFound } from '../../domain/errors';
import { fillVariables } from '../../domain/voice-prompt';
import type { RecordedTurn, ReplayedTurn } from '../../domain/voice-replay';
import { voiceTools } from '../../domain/voice-tools';
import { WebFetchError } from '../../platform/adapters/web/guarded-http';
import type { ServiceDeps } from '../deps';
import type { ReplayRef, ReplayToolRequest, ReplayToolResult } from '../../workflows/replay-messages';
import { runWebhook, searchKnowledge } from './tools';

// What a replay's run reads and writes: the recorded conversation (turns, recording) and the version it
// is replayed through, the result when it ends, and its tool calls when they run for real.

/** The contact's fields a prompt may name, as a live conversation fills them (./runtime.ts). */
const CONTACT_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'title', 'company', 'department'] as const;

/** Queued → running (the workflow's first activity). The row is written in the transaction that started the workflow: until it commits, this throws and is retried. */
export async function beginReplay(deps: Pick<ServiceDeps, 'sql'>, ref: ReplayRef): Promise<boolean> {
  const row = await replays.markRunning(deps.sql, ref.orgId, ref.replayId);
  if (row) return true;
  if (await replays.getReplay(deps.sql, ref.orgId, ref.replayId)) return false; // already ended
  throw new Error('the replay is not written yet');
}

export async function failReplay(deps: Pick<ServiceDeps, 'sql'>, input: ReplayRef & { error: string }): Promise<void> {
  await replays.failReplay(deps.sql, input.orgId, input.replayId, input.error);
}

export interface ReplaySource {
  replay: replays.ReplayRow;
  /** The version the conversation is replayed through. */
  config: AgentConfig;
  instructions: string;
  firstMessage: string | null;
  contact: Record<string, string> | null;
  direction: 'inbound' | 'outbound';
  recordedVersion: number | null;
  turns: RecordedTurn[];
  /** The recording (WAV) when kept, and how many channels it has. */
  recording: { wav: Buffer; channels: 'mono' | 'dual' } | null;
}

async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

export async function replaySource(deps: Pick<ServiceDeps, 'sql' | 'storage'>, ref: ReplayRef): Promise<ReplaySource> {
  const replay = await replays.getReplay(deps.sql, ref.orgId, ref.replayId);
  if (!replay) throw notFound('Replay not found');
  const agent = await agents.getAgent(deps.sql, ref.orgId, replay.agent_id);
  const version = agent && (await versions.getVersion(deps.sql, ref.orgId, agent.id, replay.version));
  const conversation = await conversations.getConversation(deps.sql, ref.orgId, replay.conversation_id);
  if (!agent || !version || !conversation) throw notFound('The agent, its version or the conversation is gone');
  const config = AgentConfig.parse(version.config);
  const contact = conversation.contact_id ? await contacts.getContact(deps.sql, ref.orgId, conversation.contact_id) : undefined;
  const contactFields = contact ? Object.fromEntries(CONTACT_FIELDS.flatMap((f) => (contact[f] ? [[f, String(contact[f])]] : []))) : null;
  const values = { ...config.variables, ...(contactFields ?? {}), agent_name: agent.name };
  const stored = conversation.recording_key ? await deps.storage.get(conversation.recording_key) : undefined;
  return {
    replay,
    config,
    instructions: fillVariables(config.instructions, values),
    firstMessage: config.first_message === null ? null : fillVariables(config.first_message, values),
    contact: contactFields,
    direction: conversation.direction ?? 'inbound',
    recordedVersion: conversation.agent_version,
    turns: await conversations.listTurns(deps.sql, ref.orgId, replay.conversation_id),
    recording: stored ? { wav: await readAll(stored.body), channels: conversation.recording_channels ?? 'mono' } : null,
  };
}

export async function saveReplayResult(
  deps: Pick<ServiceDeps, 'sql'>,
  ref: ReplayRef,
  result: { turns: ReplayedTurn[]; turn_count: number; changed_count: number; timings: Record<string, unknown> },
): Promise<void> {
  await replays.completeReplay(deps.sql, ref.orgId, ref.replayId, result);
}

/**
 * A replayed tool call run for real (`call_tools: true`), with the replayed version's tool: webhooks and
 * knowledge searches run; a transfer is never made (the call is over) and says so.
 */
export async function runReplayTool(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  input: ReplayRef & ReplayToolRequest,
): Promise<ReplayToolResult> {
  const started = Date.now();
  const done = (r: { ok: boolean; content: string }): ReplayToolResult => ({ ...r, ms: Date.now() - started });
  const replay = await replays.getReplay(deps.sql, input.orgId, input.replayId);
  const version = replay && (await versions.getVersion(deps.sql, input.orgId, replay.agent_id, replay.version));
  if (!replay || !version) throw notFound('Replay not found');
  const tool = voiceTools(AgentConfig.parse(version.config)).find((t) => t.name === input.name);
  if (!tool) return done({ ok: false, content: `There is no tool named ${input.name}.` });
  try {
    switch (tool.kind) {
      case 'webhook':
        return done(await runWebhook(deps, tool.tool, input.arguments, input.key));
      case 'knowledge_base':
        return done(
          await searchKnowledge(
            deps,
            input.orgId,
            replay.agent_id,
            replay.version,
            tool.datasetIds,
            tool.resultsCount,
            String(input.arguments.query ?? ''),
          ),
        );
      case 'transfer':
        return done({ ok: false, content: 'A replay makes no transfer: the recorded call is over.' });
      case 'end_call':
        return done({ ok: true, content: 'The call ends now.' });
    }
  } catch (error) {
    if (error instanceof WebFetchError) return done({ ok: false, content: error.message });
    throw error;
  }
}
