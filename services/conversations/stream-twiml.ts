import { voicePublicUrl, type Config } from '../../platform/core/config';
import { connectStreamTwiml, STREAM_PARAMETERS_MAX } from '../../domain/twiml';
import { mintVoiceSessionToken, type VoiceSessionClaims } from './session-tokens';

// The TwiML that puts a Twilio call (campaign, inbound number, SIP domain) on the voice engine: a Media
// Stream to the engine's public address with a short-lived voice session token as its one parameter.

/** How long the token of a call's stream is good for: an outbound call may ring and queue before it is answered. */
export const STREAM_TOKEN_TTL_SECONDS = 15 * 60;

export const mediaStreamUrl = (config: Pick<Config, 'VOICE_PUBLIC_URL' | 'VOICE_PORT'>): string =>
  `${voicePublicUrl(config)}/twilio/media-stream`;

type TokenConfig = Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir' | 'VOICE_PUBLIC_URL' | 'VOICE_PORT'>;

/**
 * TwiML connecting the call to the engine for `claims` (channel `twilio` or `sip`). Only what the engine
 * cannot read elsewhere goes in the token (Twilio caps custom parameters at 500 characters); the
 * engine takes the call sid from the stream's start message.
 */
export async function streamTwiml(
  config: TokenConfig,
  claims: VoiceSessionClaims | Parameters<typeof mintVoiceSessionToken>[1],
): Promise<string> {
  const { token } = await mintVoiceSessionToken(config, claims, STREAM_TOKEN_TTL_SECONDS);
  if (token.length + 'token'.length > STREAM_PARAMETERS_MAX)
    throw new Error(`A stream token of ${token.length} characters is over Twilio's limit of custom parameters`);
  return connectStreamTwiml(mediaStreamUrl(config), { token });
}
