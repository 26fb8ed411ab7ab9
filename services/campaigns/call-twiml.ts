import * as conversations from '../../db/conversations';
import type { CallRequest } from '../../platform/adapters/dialers/types';
import type { ServiceDeps } from '../deps';
import { streamTwiml } from '../conversations/stream-twiml';

/**
 * What an answered campaign call runs: a Media Stream to the voice engine whose token names the
 * attempt's conversation (made when the contact was claimed), so the engine takes that row and the
 * outcome comes from the conversation.
 */
export async function campaignCallTwiml(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  request: CallRequest,
  account: string | null,
): Promise<string> {
  const row = await conversations.conversationByKey(deps.sql, request.org_id, request.idempotency_key);
  if (!row) throw new Error(`The conversation of attempt ${request.idempotency_key} is missing`);
  return streamTwiml(
    deps.config,
    {
      org: request.org_id,
      agent: request.agent_id!,
      ...(request.agent_version ? { version: request.agent_version } : {}),
      conversation: row.id,
      channel: 'twilio',
      direction: 'outbound',
    },
    { account },
  );
}
