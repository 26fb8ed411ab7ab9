import * as conversations from '../../db/conversations';
import * as versions from '../../db/agent-versions';
import { AgentConfig } from '../../domain/agent-config';
import { voiceTools } from '../../domain/voice-tools';
import { notFound } from '../../domain/errors';
import { guardedRequest, WebFetchError } from '../../platform/adapters/web/guarded-http';
import { transferTwiml, updateTwilioCall } from '../../platform/adapters/dialers/twilio-live-call';
import { publicBaseUrl } from '../../platform/core/config';
import { queryAgentKnowledge } from '../agent-knowledge';
import type { ServiceDeps } from '../deps';
import { telephonyOf } from '../integrations/telephony-accounts';
import type { RunToolInput, ToolCallResult } from '../../workflows/conversation-messages';

// A conversation's tool calls, run by its workflow (once each): the customer's webhooks through the
// guarded HTTP client, the knowledge base through the service's retrieval, a transfer through the
// provider of the live call. What a tool answers goes back to the model as data, never as instructions.

type Deps = Pick<ServiceDeps, 'sql' | 'config'>;

const WEBHOOK_MAX_BYTES = 64 * 1024;
/** What the model reads of a webhook's answer. */
const WEBHOOK_ANSWER_CHARS = 4_000;

/** A webhook tool's call through the guarded client, bounded by its timeout; what the model reads back. */
export async function runWebhook(
  deps: Deps,
  tool: Extract<AgentConfig['tools'][number], { type: 'webhook' }>,
  args: Record<string, unknown>,
  /** Sent as `Idempotency-Key`, so the receiver can tell a repeated call from a new one. */
  idempotencyKey?: string,
) {
  const url = new URL(tool.url);
  let body: string | undefined;
  if (tool.method === 'GET' || tool.method === 'DELETE') {
    for (const [k, v] of Object.entries(args)) url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  } else body = JSON.stringify(args);
  const response = await guardedRequest(url.toString(), {
    method: tool.method === 'DELETE' ? 'GET' : tool.method,
    headers: {
      ...tool.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/plain',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body,
    allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE,
    timeoutMs: tool.timeout_seconds * 1000,
    maxBytes: WEBHOOK_MAX_BYTES,
    oversize: 'truncate',
    wording: 'call',
  });
  const text = response.body.toString('utf8').slice(0, WEBHOOK_ANSWER_CHARS);
  const ok = response.status >= 200 && response.status < 300;
  return { ok, content: ok ? text : `The tool answered ${response.status}: ${text.slice(0, 500)}` };
}

/** A knowledge-base tool's search over its datasets, as the agent's version searches them. */
export async function searchKnowledge(
  deps: Deps,
  orgId: string,
  agentId: string,
  version: number,
  datasetIds: string[],
  count: number,
  query: string,
) {
  if (!query.trim()) return { ok: false, content: 'No question was given to search for.' };
  const found = await queryAgentKnowledge(deps, orgId, agentId, { query, results_count: count, version });
  const passages = found.results.filter((r) => datasetIds.includes(r.dataset_id));
  if (!passages.length) return { ok: true, content: 'Nothing in the knowledge base answers this.' };
  return { ok: true, content: passages.map((p, i) => `[${i + 1}] ${p.content}`).join('\n\n') };
}

async function transfer(
  deps: Deps,
  orgId: string,
  conversationId: string,
  callId: string | null,
  destination: { phone_number?: string; sip_uri?: string },
  mode: 'cold' | 'warm',
  message: string | undefined,
) {
  const target = destination.phone_number ?? destination.sip_uri ?? '';
  if (!callId) return { ok: false, content: 'This conversation is not a phone call; it cannot be transferred.' };
  const telephony = await telephonyOf(deps, orgId);
  if (telephony.kind !== 'account' || telephony.account.provider !== 'twilio')
    return { ok: false, content: 'Transfers need a connected Twilio account; none is connected.' };
  const whisperUrl = mode === 'warm' ? `${publicBaseUrl(deps.config)}/telephony/twilio/whisper/${conversationId}` : undefined;
  await updateTwilioCall(
    { baseUrl: deps.config.TWILIO_API_BASE_URL, accountSid: telephony.account.accountSid, authToken: telephony.account.authToken },
    callId,
    { twiml: transferTwiml(destination, { message, whisperUrl }) },
  );
  return { ok: true, content: `The call is being transferred to ${target}.`, transferredTo: target };
}

/** Runs one tool call of a conversation and says what the model reads back; a failure is an answer, not an error. */
export async function runConversationTool(deps: Deps, input: RunToolInput): Promise<ToolCallResult> {
  const started = Date.now();
  const conversation = await conversations.getConversation(deps.sql, input.orgId, input.conversationId);
  if (!conversation?.agent_id || conversation.agent_version === null) throw notFound('Conversation not found');
  const version = await versions.getVersion(deps.sql, input.orgId, conversation.agent_id, conversation.agent_version);
  if (!version) throw notFound('Version not found');
  const config = AgentConfig.parse(version.config);
  const tool = voiceTools(config).find((t) => t.name === input.name);
  const done = (r: { ok: boolean; content: string; transferredTo?: string }): ToolCallResult => ({ ...r, ms: Date.now() - started });
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
            conversation.agent_id,
            conversation.agent_version,
            tool.datasetIds,
            tool.resultsCount,
            String(input.arguments.query ?? ''),
          ),
        );
      case 'transfer': {
        const index = Number(input.arguments.destination ?? 1) - 1;
        const destination = tool.destinations[Number.isInteger(index) && index >= 0 && index < tool.destinations.length ? index : 0]!;
        return done(await transfer(deps, input.orgId, input.conversationId, conversation.call_id, destination, tool.mode, tool.message));
      }
      case 'end_call':
        return done({ ok: true, content: 'The call ends now.' });
    }
  } catch (error) {
    if (error instanceof WebFetchError) return done({ ok: false, content: error.message });
    throw error;
  }
}
