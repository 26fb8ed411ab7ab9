import * as engines from '../../db/voice-engines';
import type { ConversationRow } from '../../db/conversations';
import { updateTwilioCall } from '../../platform/adapters/dialers/twilio-live-call';
import type { ServiceDeps } from '../deps';
import { telephonyOf } from '../integrations/telephony-accounts';
import { resumedStreamTwiml } from './stream-twiml';

// The engines watch each other. A killed engine's calls are noticed by Twilio at once (the stream
// closes and <Connect action> asks the service what next); a frozen one keeps its sockets open and
// says nothing, so every engine beats in Postgres twice a second and moves the calls of one silent for
// ENGINE_STALE_MS: Twilio's live call gets new TwiML, which stops the old stream and opens a new one to
// whichever engine the public voice address reaches, and that engine takes the conversation over.

export const ENGINE_BEAT_MS = 500;
export const ENGINE_STALE_MS = 3_000;

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

export const engineGone = (deps: Pick<ServiceDeps, 'sql'>, engineId: string) => engines.forget(deps.sql, engineId);

/**
 * The engine's heartbeat, on a connection of its own for its life: the backend's pid goes with each beat, so a
 * peer sees the engine gone the moment its process is (see takeOverConversation). A broken connection is
 * given back and another reserved at the next beat.
 */
export function engineHeart(deps: Pick<ServiceDeps, 'sql'>, engineId: string) {
  let held: Awaited<ReturnType<ServiceDeps['sql']['reserve']>> | undefined;
  let inFlight = false;
  return {
    /** One beat at a time: a slow one is not queued behind. */
    async beat(): Promise<void> {
      if (inFlight) return;
      inFlight = true;
      try {
        held ??= await deps.sql.reserve();
        await engines.beat(held, engineId);
      } catch (error) {
        held?.release();
        held = undefined;
        throw error;
      } finally {
        inFlight = false;
      }
    },
    release(): void {
      held?.release();
      held = undefined;
    },
  };
}

/** The conversations a draining engine lets go, marked before their streams close (see engines.markMoving). */
export const letGo = (deps: Pick<ServiceDeps, 'sql'>, engineId: string, ids: readonly string[]) =>
  engines.markMoving(deps.sql, engineId, ids);

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
  const twiml = await resumedStreamTwiml(deps.config, { ...row, agent_id: row.agent_id }, { account: account.connectionId, resumes: 1 });
  await updateTwilioCall(
    { baseUrl: deps.config.TWILIO_API_BASE_URL, accountSid: account.accountSid, authToken: account.authToken },
    row.call_id,
    { twiml },
  );
  deps.logger.info({ conversationId: row.id, from: row.engine_id }, 'a call moved off a silent engine');
  return true;
}
