import { callAgentConfig } from '../../db/call-agent-configs';
import { callByKey } from '../../db/dialer-provider-calls';
import { AgentConfig } from '../../domain/agent-config';
import { isFinalCallStatus } from '../../domain/campaigns';
import { conflict, forbiddenAction, notFound } from '../../domain/errors';
import { voiceTools, type VoiceTool } from '../../domain/voice-tools';
import { WebFetchError } from '../../platform/adapters/web/guarded-http';
import { vapiToolCallsOf, type VapiToolCall, type VapiToolCallResult } from '../../platform/adapters/dialers/vapi-tool-calls';
import type { ServiceDeps } from '../deps';
import { verifyVapiSecretOf } from '../campaigns/telephony-callbacks';
import { runWebhook, searchKnowledge } from './tools';
import { DeadlineExceeded, within } from '../../platform/core/within';

// Vapi's `tool-calls` for a campaign call it runs (docs/decisions/telephony.md): the function tools the
// rendered assistant carries point back here. Signed with the secret of the account that placed the
// call; the call must be one of that account's organization (another's is 404). Each call runs as the
// voice engine runs it (services/conversations/tools.ts), all at once and each bounded in time; a
// failure is an answer the model reads, never an error of the request.

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

/** Tool calls answered per message; Vapi's model asks for a few at a time. */
const MAX_CALLS = 16;
/** A knowledge-base search's bound (embedding the question and ranking). */
const KNOWLEDGE_MS = 15_000;
/** Beyond a webhook's own timeout, for the guarded client's connect and read. */
const WEBHOOK_MARGIN_MS = 2_000;

export interface VapiToolCallsMessage {
  type: 'tool-calls';
  timestamp?: number | string;
  call?: { id: string; metadata?: Record<string, unknown> | null };
  toolCallList?: unknown[];
  toolWithToolCallList?: unknown[];
}

/** The secret of the account the URL names (before the body is read); the organization of a connected account. */
export const verifyVapiToolCaller = (deps: Pick<ServiceDeps, 'sql' | 'config'>, secret: string | undefined, account: string | undefined) =>
  verifyVapiSecretOf(deps, secret, account);

interface CallContext {
  orgId: string;
  agentId: string | null;
  version: number | null;
  tools: VoiceTool[];
}

async function runOne(deps: Deps, c: CallContext, call: VapiToolCall): Promise<VapiToolCallResult> {
  const answer = (r: { ok: boolean; content: string }): VapiToolCallResult =>
    r.ok ? { name: call.name, toolCallId: call.id, result: r.content } : { name: call.name, toolCallId: call.id, error: r.content };
  const tool = c.tools.find((t) => t.name === call.name);
  try {
    if (tool?.kind === 'webhook')
      return answer(await within(tool.tool.timeout_seconds * 1000 + WEBHOOK_MARGIN_MS, runWebhook(deps, tool.tool, call.arguments)));
    if (tool?.kind === 'knowledge_base') {
      if (!c.agentId || c.version === null) return answer({ ok: false, content: 'The knowledge base is not available on this call.' });
      const query = String(call.arguments.query ?? '');
      return answer(
        await within(KNOWLEDGE_MS, searchKnowledge(deps, c.orgId, c.agentId, c.version, tool.datasetIds, tool.resultsCount, query)),
      );
    }
    return answer({ ok: false, content: `There is no tool named ${call.name} on the service.` });
  } catch (error) {
    if (error instanceof WebFetchError) return answer({ ok: false, content: error.message });
    if (error instanceof DeadlineExceeded) return answer({ ok: false, content: 'The tool did not answer in time.' });
    deps.logger.warn({ err: error, tool: call.name }, 'Vapi tool call failed');
    return answer({ ok: false, content: 'The tool failed.' });
  }
}

/** Answers a verified `tool-calls` message (`orgId`: the signing account's organization; null for the deployment's). */
export async function answerVapiToolCalls(
  deps: Deps,
  message: VapiToolCallsMessage,
  orgId: string | null,
): Promise<{ results: VapiToolCallResult[] }> {
  const sentAt = typeof message.timestamp === 'number' ? message.timestamp : message.timestamp ? Date.parse(message.timestamp) : Number.NaN;
  if (!Number.isNaN(sentAt) && Date.now() - sentAt > deps.config.TELEPHONY_CALLBACK_MAX_AGE_SECONDS * 1000)
    throw forbiddenAction('Callback too old: its timestamp is outside the accepted window');
  const key = message.call?.metadata?.idempotency_key;
  if (typeof key !== 'string') throw notFound('Call not found');
  const owner = orgId ?? (await callByKey(deps.sql, key))?.org_id;
  const call = owner ? await callAgentConfig(deps.sql, owner, key) : undefined;
  if (!owner || !call) throw notFound('Call not found');
  if (isFinalCallStatus(call.status)) throw conflict('The call has ended');
  const parsed = AgentConfig.safeParse(call.config);
  const context: CallContext = {
    orgId: owner,
    agentId: call.agent_id,
    version: call.agent_version,
    tools: parsed.success ? voiceTools(parsed.data) : [],
  };
  const calls = vapiToolCallsOf(message);
  const results = await Promise.all(calls.slice(0, MAX_CALLS).map((c) => runOne(deps, context, c)));
  for (const c of calls.slice(MAX_CALLS)) results.push({ name: c.name, toolCallId: c.id, error: 'Too many tool calls at once.' });
  return { results };
}
