import * as routing from '../db/inbound-routing';
import * as versions from '../db/agent-versions';
import { sayAndHangUpTwiml } from '../domain/twiml';
import { AgentConfig } from '../domain/agent-config';
import { publicBaseUrl } from '../platform/core/config';
import { vapiInboundUrl } from '../platform/adapters/dialers/inbound-routing';
import { renderVapiAssistant } from '../platform/adapters/dialers/vapi-assistant';
import { verifyTwilioRequest } from './campaigns/telephony-callbacks';
import { answerInboundCall } from './conversations/inbound';
import type { ServiceDeps } from './deps';
import { callbackAccount } from './integrations/telephony-accounts';

// Calls to the numbers agents answer (docs/decisions/telephony.md). Twilio asks the number's VoiceUrl
// (signed as its status callbacks are): the number's agent and published version answer through the voice
// engine (a Media Stream), a number no agent answers is told so and hung up on. Twilio's status callback
// of such a call ends its conversation when the engine never took it (the caller hung up first). Vapi
// asks its server URL for the call's assistant (`assistant-request`): the agent's published version
// rendered as a transient assistant, or an error Vapi speaks to the caller.

type Deps = Pick<ServiceDeps, 'sql' | 'config'>;

/** What a caller hears on a number no agent answers. */
export const NO_AGENT_WORDS = 'Sorry, no one can take this call right now. Please try again later. Goodbye.';

export interface TwilioRequest {
  url: string;
  params: Record<string, string>;
  signature: string;
  account?: string;
}

/** TwiML for Twilio's voice request on a number pointed at the service. */
export async function answerTwilioNumberCall(deps: Deps, request: TwilioRequest): Promise<string> {
  const orgId = await verifyTwilioRequest(deps, request);
  const { params } = request;
  const answerer = params.To ? await routing.numberAnswerer(deps.sql, 'twilio', params.To, orgId) : undefined;
  if (!answerer || !params.CallSid) return sayAndHangUpTwiml(NO_AGENT_WORDS);
  return answerInboundCall(deps, {
    orgId: answerer.org_id,
    agentId: answerer.agent_id,
    version: answerer.version,
    channel: 'twilio',
    callSid: params.CallSid,
    from: params.From || null,
    to: params.To || null,
    // The account the call came through signs Twilio's question when the stream ends.
    account: request.account ?? null,
  });
}

/** Twilio's final statuses, and how a call the engine never took ends. */
const ENDED_BEFORE_TAKEN: Record<string, 'no_answer' | 'failed'> = {
  completed: 'no_answer',
  canceled: 'no_answer',
  'no-answer': 'no_answer',
  busy: 'no_answer',
  failed: 'failed',
};

/**
 * Twilio's status callback of an inbound call (a number's or a SIP domain's): a call that ended while its
 * conversation was still ringing ends that conversation. Anything else is acknowledged and changes nothing.
 */
export async function acceptTwilioInboundStatus(deps: Deps, request: TwilioRequest): Promise<{ status: 'accepted' | 'ignored' }> {
  const orgId = await verifyTwilioRequest(deps, request);
  const status = ENDED_BEFORE_TAKEN[request.params.CallStatus ?? ''];
  if (!status || !request.params.CallSid) return { status: 'ignored' };
  const ended = await routing.endRingingInbound(deps.sql, request.params.CallSid, orgId, {
    status,
    reason: status === 'failed' ? 'call_failed' : 'caller_hung_up_before_answer',
  });
  return { status: ended ? 'accepted' : 'ignored' };
}

export interface VapiInboundMessage {
  type: string;
  call?: { id?: string; phoneNumberId?: string } | null;
  phoneNumber?: { id?: string } | null;
}

/**
 * Vapi's server message for a number or SIP number pointed at the service (`orgId`: the connected account's
 * organization, null for the deployment's): the assistant of an `assistant-request`, `{}` for any other.
 */
export async function answerVapiInbound(
  deps: Deps,
  orgId: string | null,
  account: string | undefined,
  message: VapiInboundMessage,
): Promise<Record<string, unknown>> {
  if (message.type !== 'assistant-request') return {};
  const settings = (await callbackAccount(deps, 'vapi', account)).account;
  const webhookSecret = settings.provider === 'vapi' ? settings.webhookSecret : '';
  const numberId = message.phoneNumber?.id ?? message.call?.phoneNumberId;
  const answerer = numberId ? await routing.providerNumberAnswerer(deps.sql, 'vapi', numberId, orgId) : undefined;
  const version = answerer ? await versions.getVersion(deps.sql, answerer.org_id, answerer.agent_id, answerer.version) : undefined;
  if (!answerer || !version) return { error: NO_AGENT_WORDS };
  const serverUrl = vapiInboundUrl(publicBaseUrl(deps.config), account ?? null);
  const assistant = renderVapiAssistant(AgentConfig.parse(version.config), {
    agentId: answerer.agent_id,
    initialContext: null,
    serverUrl,
    serverSecret: webhookSecret,
  });
  // The service reads none of an inbound call's later messages: its conversation is Vapi's.
  assistant.serverMessages = [];
  return { assistant };
}
