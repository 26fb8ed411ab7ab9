import { publicBaseUrl, voicePublicUrl, type Config } from '../../platform/core/config';
import { connectStreamTwiml, STREAM_PARAMETERS_MAX } from '../../domain/twiml';
import type { ConversationRow } from '../../db/conversations';
import { mintVoiceSessionToken } from './session-tokens';

// The TwiML that puts a Twilio call (campaign, inbound number, SIP domain) on the voice engine: a Media
// Stream to the engine's public address with a short-lived voice session token as its one parameter, and
// an action Twilio asks when the stream ends, so a call whose engine died goes on with another.

/** How long the token of a call's stream is good for: an outbound call may ring and queue before it is answered. */
export const STREAM_TOKEN_TTL_SECONDS = 15 * 60;

/** Where Twilio asks what next when a call's stream ends (services/conversations/stream-ended.ts). */
export const TWILIO_STREAM_ENDED_PATH = '/telephony/twilio/streams/ended';

export const mediaStreamUrl = (config: Pick<Config, 'VOICE_PUBLIC_URL' | 'VOICE_PORT'>): string =>
  `${voicePublicUrl(config)}/twilio/media-stream`;

type TokenConfig = Pick<
  Config,
  'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir' | 'VOICE_PUBLIC_URL' | 'VOICE_PORT' | 'PUBLIC_BASE_URL' | 'PORT'
>;

export interface StreamPlace {
  /** The organization's connected Twilio account (null: the deployment's), named in the action URL for its signature. */
  account: string | null;
  /** How many times the call's stream was started again after an engine was lost. */
  resumes?: number;
}

export function streamEndedUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>, conversationId: string, place: StreamPlace): string {
  const query = new URLSearchParams({ conversation: conversationId, resumes: String(place.resumes ?? 0) });
  if (place.account) query.set('account', place.account);
  return `${publicBaseUrl(config).replace(/\/+$/, '')}${TWILIO_STREAM_ENDED_PATH}?${query}`;
}

/**
 * TwiML connecting the call to the engine for `claims` (channel `twilio` or `sip`, a conversation named).
 * Only what the engine cannot read from the conversation's row goes in the token (Twilio caps custom
 * parameters at 500 characters); the engine takes the call sid from the stream's start message.
 */
export async function streamTwiml(
  config: TokenConfig,
  claims: Parameters<typeof mintVoiceSessionToken>[1] & { conversation: string },
  place: StreamPlace,
): Promise<string> {
  const { token } = await mintVoiceSessionToken(config, claims, STREAM_TOKEN_TTL_SECONDS);
  if (token.length + 'token'.length > STREAM_PARAMETERS_MAX)
    throw new Error(`A stream token of ${token.length} characters is over Twilio's limit of custom parameters`);
  return connectStreamTwiml(mediaStreamUrl(config), { token }, streamEndedUrl(config, claims.conversation, place));
}

/** TwiML putting a conversation's call on an engine again (its engine was lost or let it go): the row says who. */
export function resumedStreamTwiml(config: TokenConfig, row: ConversationRow & { agent_id: string }, place: StreamPlace): Promise<string> {
  return streamTwiml(
    config,
    {
      org: row.org_id,
      agent: row.agent_id,
      ...(row.agent_version ? { version: row.agent_version } : {}),
      conversation: row.id,
      channel: row.channel === 'sip' ? 'sip' : 'twilio',
      direction: row.direction ?? 'inbound',
    },
    place,
  );
}
