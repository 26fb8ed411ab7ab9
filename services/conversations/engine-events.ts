import { VOICE_EVENTS_CHANNEL, type VoiceEngineEvent } from '../../db/conversations';
import type { ServiceDeps } from '../deps';

export type { VoiceEngineEvent } from '../../db/conversations';

/**
 * What the API tells the voice engines about live conversations (Postgres LISTEN/NOTIFY: every engine
 * hears it, the one holding the conversation acts). Resolves once listening.
 */
export function listenToVoiceEvents(deps: Pick<ServiceDeps, 'sql' | 'logger'>, onEvent: (event: VoiceEngineEvent) => void) {
  return deps.sql.listen(VOICE_EVENTS_CHANNEL, (payload) => {
    try {
      onEvent(JSON.parse(payload) as VoiceEngineEvent);
    } catch (error) {
      deps.logger.warn({ err: error }, 'an unreadable voice engine event');
    }
  });
}
