import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import type { Config } from '../../platform/core/config';
import { deriveKey, loadMasterKey, parsePreviousKeys } from '../../platform/core/secrets';

/**
 * A voice session token: what opens a conversation on the engine (a Twilio Media Stream's `token`
 * parameter, a widget's WebSocket `?token=`). Minted by the API for one call or one widget session,
 * short-lived, signed with a key derived from the master key (never an organization's API key), and
 * carrying everything the engine needs to know whose call it is.
 */
export const VoiceSessionClaims = z.object({
  org: z.uuid(),
  agent: z.uuid(),
  /** The version to run; the published one when absent. */
  version: z.number().int().positive().optional(),
  channel: z.enum(['twilio', 'widget', 'sip']),
  direction: z.enum(['inbound', 'outbound']).default('inbound'),
  /** The conversation row, when the API made it before the call (campaign calls). */
  conversation: z.uuid().optional(),
  campaign: z.uuid().optional(),
  campaign_contact: z.uuid().optional(),
  contact: z.uuid().optional(),
  from: z.string().max(64).optional(),
  to: z.string().max(64).optional(),
  /** The provider's id of the call (Twilio CallSid): transfers and hang-ups act on it. */
  call_id: z.string().max(64).optional(),
  widget: z.uuid().optional(),
  origin: z.string().max(500).optional(),
});
export type VoiceSessionClaims = z.output<typeof VoiceSessionClaims>;

const PURPOSE = 'voice-session-token';
const ISSUER = 'voice-crm:voice-session';

function keys(config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>): Uint8Array[] {
  const current = deriveKey(loadMasterKey(config.ENCRYPTION_KEY, config.dataDir), PURPOSE);
  return [current, ...parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS).map((k) => deriveKey(k, PURPOSE))];
}

export async function mintVoiceSessionToken(
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  claims: z.input<typeof VoiceSessionClaims>,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const parsed = VoiceSessionClaims.parse(claims);
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  const token = await new SignJWT({ ...parsed })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(keys(config)[0]!);
  return { token, expiresAt };
}

/** How long a widget's resume token is good for; the engine sends the page a fresh one every minute. */
export const RESUME_TOKEN_TTL_SECONDS = 120;

/**
 * A widget session's resume token: the session's own claims (organization, agent, version, widget, origin)
 * naming its conversation, signed as the session's token was. Only the engine mints one, for the page it
 * talks to; with it the page takes the conversation to another engine when its socket drops or it is told
 * to move (see takeOverConversation for when that is refused).
 */
export function mintResumeToken(
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  claims: VoiceSessionClaims,
  conversationId: string,
): Promise<{ token: string; expiresAt: Date }> {
  return mintVoiceSessionToken(config, { ...claims, conversation: conversationId }, RESUME_TOKEN_TTL_SECONDS);
}

/** The claims of a valid token, or null (bad signature, expired, malformed): the engine refuses the session. */
export async function verifyVoiceSessionToken(
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  token: string,
): Promise<VoiceSessionClaims | null> {
  for (const key of keys(config)) {
    try {
      const { payload } = await jwtVerify(token, key, { issuer: ISSUER, algorithms: ['HS256'] });
      const claims = VoiceSessionClaims.safeParse(payload);
      return claims.success ? claims.data : null;
    } catch (error) {
      if (error instanceof joseErrors.JWSSignatureVerificationFailed) continue;
      return null;
    }
  }
  return null;
}
