import * as conversations from '../../db/conversations';
import type { ServiceDeps } from '../deps';
import { streamTwiml } from './stream-twiml';

// An inbound call Twilio asks about (a published number's VoiceUrl, an agent's SIP domain): its
// conversation row is made now, ringing, and the answer streams the call to the engine, which takes
// that row. The caller hears the agent's first message as soon as the engine has it.

export interface InboundCall {
  orgId: string;
  agentId: string;
  /** The published version answers when absent. */
  version: number;
  channel: 'twilio' | 'sip';
  /** Twilio's CallSid: one conversation per call, however often Twilio asks. */
  callSid: string;
  from: string | null;
  to: string | null;
  /** The organization's connected Twilio account the call came through (null or absent: the deployment's). */
  account?: string | null;
}

export async function answerInboundCall(deps: Pick<ServiceDeps, 'sql' | 'config'>, call: InboundCall): Promise<string> {
  const row = await conversations.insertRingingConversation(deps.sql, {
    org_id: call.orgId,
    agent_id: call.agentId,
    agent_version: call.version,
    channel: call.channel,
    direction: 'inbound',
    call_id: call.callSid,
    phone_number: call.from,
  });
  return streamTwiml(
    deps.config,
    {
      org: call.orgId,
      agent: call.agentId,
      version: call.version,
      conversation: row.id,
      channel: call.channel,
      direction: 'inbound',
    },
    { account: call.account ?? null },
  );
}
