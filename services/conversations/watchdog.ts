import * as engines from '../../db/voice-engines';
import type { ConversationRow } from '../../db/conversations';
import { updateTwilioCall } from '../../platform/adapters/dialers/twilio-live-call';
import type { ServiceDeps } from '../deps';
import { telephonyOf } from '../integrations/telephony-accounts';
import { streamTwiml } from './stream-twiml';

// The engines watch each other. A killed engine's calls are noticed by Twilio at once (the stream
// closes and <Connect action> asks the service what next); a frozen one keeps its sockets open and
// says nothing, so every engine beats in Postgres twice a second and moves the calls of one silent for
// ENGINE_STALE_MS: Twilio's live call gets new TwiML, which stops the old stream and opens a new one to
// whichever engine the public voice address reaches, and that engine takes the conversation over.

export const ENGINE_BEAT_MS = 500;
export const ENGINE_STALE_MS = 3_000;

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

export const engineBeat = (deps: Pick<ServiceDeps, 'sql'>, engineId: string) => engines.beat(deps.sql, engineId);
export const engineGone = (deps: Pick<ServiceDeps, 'sql'>, engineId: string) => engines.forget(deps.sql, engineId);

/** Moves the calls of engines silent for ENGINE_STALE_MS; answers how many were moved. */
export async function moveStrandedCalls(deps: Deps, watcher: string): Promise<number> {
  const stranded = await engines.takeStrandedCalls(deps.sql, watcher, ENGINE_STALE_MS);
  let moved = 0;
  for (const row of stranded) {
    try {
      if (await moveCall(deps, row)) moved++;
    } catch (error) {
      deps.logger.warn({ err: error, conversationId: row.id }, 'a stranded call could not be moved; its workflow ends it');
    }
  }
  return moved;
}

async function moveCall(deps: Deps, row: ConversationRow): Promise<boolean> {
  const telephony = await telephonyOf(deps, row.org_id);
  if (telephony.kind !== 'account' || telephony.account.provider !== 'twilio' || !row.call_id || !row.agent_id) return false;
  const { account } = telephony;
  const twiml = await streamTwiml(
    deps.config,
    {
      org: row.org_id,
      agent: row.agent_id,
      ...(row.agent_version ? { version: row.agent_version } : {}),
      conversation: row.id,
      channel: row.channel === 'sip' ? 'sip' : 'twilio',
      direction: row.direction ?? 'inbound',
    },
    { account: account.connectionId, resumes: 1 },
  );
  await updateTwilioCall(
    { baseUrl: deps.config.TWILIO_API_BASE_URL, accountSid: account.accountSid, authToken: account.authToken },
    row.call_id,
    { twiml },
  );
  deps.logger.info({ conversationId: row.id, from: row.engine_id }, 'a call moved off a silent engine');
  return true;
}
