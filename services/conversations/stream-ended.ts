import * as conversations from '../../db/conversations';
import { notFound } from '../../domain/errors';
import { hangUpTwiml, sayAndHangUpTwiml } from '../../domain/twiml';
import { MAX_STREAM_RESUMES } from '../../domain/voice-resume';
import { verifyTwilioRequest } from '../campaigns/telephony-callbacks';
import type { ServiceDeps } from '../deps';
import { closeConversation } from './runtime';
import { resumedStreamTwiml } from './stream-twiml';

// Twilio asks `<Connect action>` what next when a call's stream ends. A conversation that ended (the
// engine marks the end before it closes the stream) hangs up. One that did not lost its engine (killed,
// or draining): the call is streamed again, to whichever engine the public address reaches now, which
// takes the conversation from its recorded turns. A few tries, then the caller is told and the call ends.

export interface StreamEnded {
  url: string;
  params: Record<string, string>;
  signature: string;
  account?: string;
  conversation: string;
  resumes: number;
}

export async function answerStreamEnded(deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>, request: StreamEnded): Promise<string> {
  const orgId = await verifyTwilioRequest(deps, request);
  const row = await conversations.findConversation(deps.sql, request.conversation);
  if (!row || (orgId && row.org_id !== orgId) || (row.call_id && request.params.CallSid !== row.call_id))
    throw notFound('Conversation not found');
  if (row.ended_at || row.end_reason || !row.agent_id) return hangUpTwiml();
  if (request.resumes >= MAX_STREAM_RESUMES) {
    await closeConversation(deps, row.org_id, row.id, {
      reason: 'engine_lost',
      status: 'failed',
      recordingKey: null,
      recordingChannels: null,
      retentionDays: null,
    });
    return sayAndHangUpTwiml('We are sorry, this call cannot go on. Please call again.');
  }
  return resumedStreamTwiml(
    deps.config,
    { ...row, agent_id: row.agent_id },
    { account: request.account ?? null, resumes: request.resumes + 1 },
  );
}
